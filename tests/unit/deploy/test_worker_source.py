"""Reading a Worker to deploy: clear errors naming the file, the field and the rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from tsumugi_dev.worker_source import DeployError, read_worker_source


def _worker(tmp_path: Path, config: str, *, pyproject: bool = True) -> Path:
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "entry.py").write_text("")
    if pyproject:
        (tmp_path / "pyproject.toml").write_text(
            '[project]\nname = "w"\nversion = "0"\ndependencies = ["x"]\n'
        )
    path = tmp_path / "wrangler.jsonc"
    path.write_text(config)
    return path


def test_a_python_worker_is_read(tmp_path: Path) -> None:
    source = read_worker_source(
        _worker(tmp_path, '{"name": "w", "main": "src/entry.py", "compatibility_flags": ["python_workers"]}')
    )
    assert (source.name, source.module_root, source.dependencies) == ("w", tmp_path / "src", ("x",))


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('{"main": "src/entry.py"}', "name is required"),
        ('{"name": "w", "main": "src/index.js"}', "main must be a Python file"),
        ('{"name": "w", "main": "src/entry.py"}', 'compatibility_flags must include "python_workers"'),
        (
            '{"name": "w", "main": "src/missing.py", "compatibility_flags": ["python_workers"]}',
            "main 'src/missing.py' does not exist",
        ),
        ("[1]", "an object at the top level"),
    ],
)
def test_bad_configs_are_refused_with_the_field_and_rule(tmp_path: Path, config: str, message: str) -> None:
    with pytest.raises(DeployError, match=message):
        read_worker_source(_worker(tmp_path, config))


def test_a_worker_without_its_own_pyproject_is_refused(tmp_path: Path) -> None:
    config = '{"name": "w", "main": "src/entry.py", "compatibility_flags": ["python_workers"]}'
    with pytest.raises(DeployError, match=r"no pyproject.toml next to it; pywrangler reads"):
        read_worker_source(_worker(tmp_path, config, pyproject=False))
