"""Issue 23: each package builds a wheel whose Tsumugi dependencies resolve from the others' wheels alone; the
client installs on its own (tsumugi-core is the only package of ours it pulls in), as docs/client.md says.

Offline: uv installs from the wheelhouse and its own cache (filled by this repository's ``uv sync`` and
``uv lock --check --refresh``), with the lock's versions as constraints.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _uv(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    uv = shutil.which("uv")
    assert uv is not None, "uv is not on PATH (scripts/test.sh puts it there)"
    return subprocess.run(
        [uv, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=300
    )


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheels")
    built = _uv("build", "--all-packages", "--wheel", "--out-dir", str(out), cwd=REPO)
    assert built.returncode == 0, built.stderr
    exported = _uv(
        "export",
        "--frozen",
        "--no-hashes",
        "--all-packages",
        "--no-emit-workspace",
        "--no-header",
        "--no-annotate",
        cwd=REPO,
    )
    assert exported.returncode == 0, exported.stderr
    (out / "constraints.txt").write_text(exported.stdout, encoding="utf-8")
    return out


@pytest.mark.parametrize(
    ("distribution", "modules", "ours"),
    [
        ("tsumugi-client", "tsumugi_client", {"tsumugi-client", "tsumugi-core"}),
        ("tsumugi-performer", "tsumugi_performer", {"tsumugi-performer", "tsumugi-core"}),
        ("tsumugi-scheduler", "tsumugi_scheduler.entrypoints", {"tsumugi-scheduler", "tsumugi-core"}),
        (
            "tsumugi-dev",
            "tsumugi_dev.cli",
            {"tsumugi-dev", "tsumugi-core", "tsumugi-client", "tsumugi-performer", "tsumugi-scheduler"},
        ),
    ],
)
def test_a_wheel_installs_from_the_wheelhouse_with_only_its_own_tsumugi_closure(
    wheelhouse: Path, tmp_path: Path, distribution: str, modules: str, ours: set[str]
) -> None:
    env = {
        **os.environ,
        "UV_OFFLINE": "1",
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_CONSTRAINT": str(wheelhouse / "constraints.txt"),
    }
    # The suite's own environment variables name the repository's environments (the 3.13 run sets
    # UV_PROJECT_ENVIRONMENT=.venv-3.13): the program gets its own .venv.
    for name in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT"):
        env.pop(name, None)
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    # A program of its own outside the repository, taking our packages from the wheelhouse only.
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "program"\nversion = "0"\nrequires-python = ">=3.11"\n'
        f'dependencies = ["{distribution}"]\n[tool.uv]\npackage = false\nfind-links = ["{wheelhouse.as_posix()}"]\n',
        encoding="utf-8",
    )
    done = _uv("sync", "--python", str(base), cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    python = tmp_path / ".venv" / "bin" / "python"
    listed = _uv("pip", "list", "--python", str(python), "--format", "freeze", cwd=tmp_path, env=env).stdout
    installed = {line.split("==")[0] for line in listed.splitlines()}
    assert {name for name in installed if name.startswith("tsumugi")} == ours
    probe = subprocess.run(
        [str(python), "-c", f"import {modules}"], capture_output=True, text=True, check=False
    )
    assert probe.returncode == 0, probe.stderr
