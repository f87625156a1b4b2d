"""``[tool.tsumugi].workers``: the reader's rules and errors, and what ``tsumugi dev`` does with them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tsumugi_dev.cli import main
from tsumugi_dev.config import ConfigError
from tsumugi_dev.project import ProjectConfigError, project_worker_configs


def _project(
    root: Path, table: str, files: tuple[str, ...] = ("a/wrangler.jsonc", "b/wrangler.jsonc")
) -> Path:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text('{"name": "w", "main": "entry.py"}')
    (root / "pyproject.toml").write_text('[project]\nname = "p"\n' + table)
    return root


def test_the_workers_come_in_the_listed_order(tmp_path: Path) -> None:
    _project(tmp_path, '[tool.tsumugi]\nworkers = ["b/wrangler.jsonc", "a/wrangler.jsonc"]\n')
    assert project_worker_configs(tmp_path) == [tmp_path / "b/wrangler.jsonc", tmp_path / "a/wrangler.jsonc"]


def test_no_pyproject_or_no_table_means_no_project(tmp_path: Path) -> None:
    assert project_worker_configs(tmp_path) == []
    _project(tmp_path, "[tool.ruff]\nline-length = 100\n")
    assert project_worker_configs(tmp_path) == []


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("[tool.tsumugi\n", "is not valid TOML"),
        ("[tool]\ntsumugi = 3\n", "tool.tsumugi must be a table, got int"),
        ("[tool.tsumugi]\nother = 1\n", "tool.tsumugi.workers is missing"),
        (
            "[tool.tsumugi]\nworkers = []\n",
            "tool.tsumugi.workers must be a non-empty list of wrangler config paths",
        ),
        ('[tool.tsumugi]\nworkers = "a/wrangler.jsonc"\n', "must be a non-empty list"),
        (
            '[tool.tsumugi]\nworkers = ["a/wrangler.jsonc", 3]\n',
            r"tool.tsumugi.workers\[1\] must be a non-empty string",
        ),
        ('[tool.tsumugi]\nworkers = [" "]\n', r"tool.tsumugi.workers\[0\] must be a non-empty string"),
        (
            '[tool.tsumugi]\nworkers = ["/etc/wrangler.jsonc"]\n',
            r"workers\[0\] must be relative to the project folder",
        ),
        (
            '[tool.tsumugi]\nworkers = ["c/wrangler.jsonc"]\n',
            r"workers\[0\] names 'c/wrangler.jsonc', which is not a file",
        ),
        ('[tool.tsumugi]\nworkers = ["a"]\n', r"workers\[0\] names 'a', which is not a file"),
        (
            '[tool.tsumugi]\nworkers = ["a/wrangler.jsonc", "./a/../a/wrangler.jsonc"]\n',
            r"workers\[1\] repeats './a/../a/wrangler.jsonc'; list each Worker once",
        ),
    ],
)
def test_bad_values_name_the_file_the_field_and_the_rule(tmp_path: Path, table: str, message: str) -> None:
    _project(tmp_path, table)
    with pytest.raises(ProjectConfigError, match=message) as caught:
        project_worker_configs(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / 'pyproject.toml'}: ")
    assert isinstance(caught.value, ConfigError)  # so `tsumugi dev` reports it like a bad wrangler config


def test_tsumugi_dev_reports_a_bad_workers_list_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(tmp_path, '[tool.tsumugi]\nworkers = ["missing/wrangler.jsonc"]\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(["dev"])
    assert exited.value.code == 2
    assert (
        "tool.tsumugi.workers[0] names 'missing/wrangler.jsonc', which is not a file"
        in capsys.readouterr().err
    )


def test_tsumugi_dev_without_any_config_says_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(["dev"])
    assert exited.value.code == 2
    assert "[tool.tsumugi] workers in pyproject.toml" in capsys.readouterr().err
