"""The SDK pin of uploads agrees with every pin of the SDK in this repository, and a disagreement is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tsumugi_dev.sdk_pin import (
    WORKERS_RUNTIME_SDK_VERSION,
    lock_pins,
    pin_problems_in,
    requirement_pins,
    with_sdk_pinned,
)
from tsumugi_dev.upload_build import build_upload
from tsumugi_dev.vendoring import DependencyError, parse_requirement
from tsumugi_dev.worker_source import DeployError, read_worker_source

ROOT = Path(__file__).resolve().parents[3]

LOCK = """
version = 1

[[package]]
name = "msgspec"
version = "0.19.0"

[[package]]
name = "workers-runtime-sdk"
version = "{version}"
"""


def _repository_files() -> dict[str, str]:
    """Every file that can pin the SDK: the lock and each pyproject."""
    paths = [ROOT / "uv.lock"]
    paths += sorted(ROOT.glob("pyproject.toml")) + sorted(ROOT.glob("packages/*/pyproject.toml"))
    paths += sorted(ROOT.glob("services/**/pyproject.toml"))
    return {path.relative_to(ROOT).as_posix(): path.read_text() for path in paths}


def test_every_pin_of_the_sdk_in_this_repository_is_the_deploys() -> None:
    files = _repository_files()
    assert pin_problems_in(files) == []
    assert requirement_pins(files["packages/tsumugi-dev/pyproject.toml"]) == [WORKERS_RUNTIME_SDK_VERSION]


def test_a_lock_that_pins_another_sdk_is_named() -> None:
    assert lock_pins(LOCK.format(version="1.9.5")) == ["1.9.5"]
    assert pin_problems_in({"uv.lock": LOCK.format(version=WORKERS_RUNTIME_SDK_VERSION)}) == []
    assert pin_problems_in({"uv.lock": LOCK.format(version="1.10.0")}) == [
        f"uv.lock: pins workers-runtime-sdk 1.10.0, the deploy pins {WORKERS_RUNTIME_SDK_VERSION}"
    ]


def test_a_runtime_pin_in_a_pyproject_that_differs_is_named() -> None:
    pyproject = 'dependencies = [\n    "msgspec==0.19.0",\n    "workers-runtime-sdk==1.9.4",\n]\n'
    assert pin_problems_in({"packages/tsumugi-dev/pyproject.toml": pyproject}) == [
        "packages/tsumugi-dev/pyproject.toml: pins workers-runtime-sdk 1.9.4, the deploy pins "
        f"{WORKERS_RUNTIME_SDK_VERSION}"
    ]
    assert requirement_pins("workers_runtime_sdk == 2.0 --hash=sha256:00") == ["2.0"]
    assert pin_problems_in({"pyproject.toml": 'dependencies = ["msgspec==0.19.0"]'}) == []


def test_the_sdk_is_added_pinned_and_a_workers_own_other_pin_is_refused() -> None:
    third_party = (parse_requirement("msgspec==0.19.0"), parse_requirement("workers-runtime-sdk"))
    with pytest.raises(
        DependencyError, match=r"dependency 'workers-runtime-sdk' of w/pyproject\.toml: the local"
    ):
        with_sdk_pinned(third_party, owner="w/pyproject.toml")
    pinned = with_sdk_pinned(third_party[:1], owner="w/pyproject.toml")
    assert [r.text for r in pinned] == [
        "msgspec==0.19.0",
        f"workers-runtime-sdk=={WORKERS_RUNTIME_SDK_VERSION}",
    ]
    same = parse_requirement(f"workers-runtime-sdk=={WORKERS_RUNTIME_SDK_VERSION}")
    assert with_sdk_pinned((same,), owner="w") == (same,)


def test_a_worker_pinning_another_sdk_is_refused_before_anything_is_built(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "entry.py").write_text("")
    config = {"name": "w", "main": "src/entry.py", "compatibility_flags": ["python_workers"]}
    (tmp_path / "wrangler.jsonc").write_text(json.dumps(config))
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "w"\nversion = "0"\ndependencies = ["workers-runtime-sdk==1.0.0"]\n'
    )
    with pytest.raises(DeployError, match=r"'workers-runtime-sdk==1.0.0' of .*: the local runtime runs"):
        build_upload(read_worker_source(tmp_path / "wrangler.jsonc"), tmp_path / "out")
    assert not (tmp_path / "out").exists()
