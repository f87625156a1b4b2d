"""Building one upload folder: what is copied, what is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tsumugi_dev.upload_build import build_upload
from tsumugi_dev.worker_source import DeployError, read_worker_source


def _worker(root: Path, main: str, rules: list[dict[str, object]] | None = None) -> Path:
    config = {"name": "w", "main": main, "compatibility_flags": ["python_workers"], "rules": rules or []}
    (root / "wrangler.jsonc").write_text(json.dumps(config))
    (root / "pyproject.toml").write_text(
        '[project]\nname = "w"\nversion = "0"\ndependencies = ["tsumugi-core"]\n'
    )
    return root / "wrangler.jsonc"


def test_a_module_root_at_the_project_root_copies_neither_secrets_nor_the_build(tmp_path: Path) -> None:
    (tmp_path / "entry.py").write_text("import tsumugi_core\n")
    (tmp_path / ".dev.vars").write_text("TSUMUGI_TOKEN=secret\n")
    (tmp_path / ".tsumugi" / "build").mkdir(parents=True)
    build = build_upload(read_worker_source(_worker(tmp_path, "entry.py")), tmp_path / ".tsumugi" / "build")
    src = build.folder / "src"
    assert (src / "entry.py").is_file()
    assert (src / "tsumugi_core" / "__init__.py").is_file()
    assert not (src / ".dev.vars").exists()
    assert not (src / ".tsumugi").exists()
    assert json.loads(build.config.read_text())["main"] == "src/entry.py"


def test_a_file_two_globs_upload_is_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "src" / "assets").mkdir(parents=True)
    (tmp_path / "src" / "entry.py").write_text("")
    (tmp_path / "src" / "assets" / "index.html").write_text("<p>")
    # The scheduler's rule before issue 9: index.html matched it and wrangler's default **/*.html.
    rules: list[dict[str, object]] = [{"type": "Text", "globs": ["**/assets/**"], "fallthrough": True}]
    source = read_worker_source(_worker(tmp_path, "src/entry.py", rules))
    with pytest.raises(DeployError, match=r"rules: assets/index.html matched by more than one glob"):
        build_upload(source, tmp_path / "out")
