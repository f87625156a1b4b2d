"""``tsumugi init``: the layout ``tsumugi dev`` and ``tsumugi deploy`` rely on, pinned packages, no overwrite."""

from __future__ import annotations

import json
import tomllib
from importlib import metadata
from pathlib import Path, PurePosixPath

import pytest

from tsumugi_dev.cli import main
from tsumugi_dev.config import load_config
from tsumugi_dev.deploy_tools import WRANGLER_VERSION
from tsumugi_dev.jsonc import loads_jsonc
from tsumugi_dev.module_rules import effective_rules, match_modules, rules_from_config
from tsumugi_dev.project import project_worker_configs
from tsumugi_dev.scaffold import InitResult, ScaffoldError, init_project
from tsumugi_dev.scaffold.init_project import COMPATIBILITY_DATE, shipped_migrations

REPO = Path(__file__).resolve().parents[2]
LAYOUT = {
    "pyproject.toml",
    "package.json",
    "README.md",
    ".gitignore",
    "tests/test_hello.py",
    "scheduler/wrangler.jsonc",
    "scheduler/pyproject.toml",
    "scheduler/src/entry.py",
    "scheduler/.dev.vars.example",
    "performers/wrangler.jsonc",
    "performers/pyproject.toml",
    "performers/src/entry.py",
    "performers/src/my_app_performers/__init__.py",
    "performers/src/my_app_performers/hello.py",
    "performers/src/my_app_performers/flows/__init__.py",
    "performers/src/my_app_performers/flows/greetings.py",
    "producer/wrangler.jsonc",
    "producer/pyproject.toml",
    "producer/src/entry.py",
}


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_layout(project: InitResult) -> None:
    written = {str(p) for p in project.written}
    migrations = {f"scheduler/migrations/{name}" for name, _ in shipped_migrations()}
    assert written == LAYOUT | migrations
    assert set(_files(project.root)) == written
    assert (project.project, project.package) == ("my-app", "my_app_performers")
    for text in _files(project.root).values():
        assert b"{{" not in text  # every placeholder filled


def test_the_root_lists_the_three_workers_scheduler_first_with_unique_names(project: InitResult) -> None:
    root = project.root
    data = tomllib.loads((root / "pyproject.toml").read_text())
    assert data["tool"]["tsumugi"]["workers"] == [
        "scheduler/wrangler.jsonc",
        "performers/wrangler.jsonc",
        "producer/wrangler.jsonc",
    ]
    configs = [load_config(p) for p in project_worker_configs(root)]
    assert [c.name for c in configs] == ["my-app-scheduler", "my-app-performers", "my-app-producer"]
    scheduler, performers, producer = configs
    assert [(s.binding, s.service, s.entrypoint) for s in scheduler.services] == [
        ("Hello", "my-app-performers", "Hello")
    ]
    assert [(s.binding, s.service, s.entrypoint) for s in producer.services] == [
        ("TSUMUGI", "my-app-scheduler", "TsumugiRpc")
    ]
    assert scheduler.queue_producers[0].queue == scheduler.queue_consumers[0].queue == "my-app-jobs"
    assert scheduler.d1_databases[0].database_name == "my-app"
    assert (scheduler.directory / scheduler.d1_databases[0].migrations_dir).is_dir()
    assert performers.main == root / "performers" / "src" / "entry.py"
    assert data["dependency-groups"]["dev"][0] == f"tsumugi-dev=={metadata.version('tsumugi-dev')}"


@pytest.mark.parametrize(
    ("worker", "top"),
    [("scheduler", "tsumugi-scheduler"), ("performers", "tsumugi-performer"), ("producer", "tsumugi-client")],
)
def test_each_worker_depends_on_published_packages_by_version(
    project: InitResult, worker: str, top: str
) -> None:
    project_table = tomllib.loads((project.root / worker / "pyproject.toml").read_text())["project"]
    dependencies: list[str] = project_table["dependencies"]
    assert f"{top}=={metadata.version(top)}" in dependencies
    assert f"tsumugi-core=={metadata.version('tsumugi-core')}" in dependencies
    third_party = [r for r in metadata.requires(top) or [] if not r.startswith("tsumugi-")]
    # Markers stay (tsumugi-client's httpx is for programs outside Workers, ADR-0107); spacing may differ.
    assert {r.replace(" ", "") for r in third_party} <= {d.replace(" ", "") for d in dependencies}
    own = f"{project.project}-performers"  # the project's own package: the scheduler's flows live there
    for requirement in dependencies:
        assert "==" in requirement or requirement == own, requirement  # pinned, never a path or URL source
        assert "/" not in requirement
        assert "@" not in requirement
    assert (own in dependencies) == (worker == "scheduler")
    tool = tomllib.loads((project.root / worker / "pyproject.toml").read_text()).get("tool", {})
    # Only the performers package is built (uv_build, for the root project's path source): no other tool table.
    assert tool == (
        {"uv": {"build-backend": {"module-name": project.package}}} if worker == "performers" else {}
    )


def test_the_migrations_are_the_installed_schedulers(project: InitResult) -> None:
    folder = project.root / "scheduler" / "migrations"
    assert {p.name: p.read_text() for p in folder.iterdir()} == {
        p.name: p.read_text() for p in (REPO / "migrations").glob("*.sql")
    }


def test_the_compatibility_date_is_the_repositorys() -> None:
    for config in project_worker_configs(REPO):
        assert loads_jsonc(config.read_text())["compatibility_date"] == COMPATIBILITY_DATE


def test_gitignore_keeps_state_secrets_and_vendored_packages_out(project: InitResult) -> None:
    text = (project.root / ".gitignore").read_text()
    lines = text.splitlines()
    for needed in (".tsumugi/", ".dev.vars", ".venv/", "python_modules/", "node_modules/", ".wrangler/"):
        assert needed in lines
    assert "!.dev.vars.example" in lines
    assert "npm install" in text  # says where node_modules/ comes from


def test_package_json_pins_the_wrangler_this_repository_pins(project: InitResult) -> None:
    # `tsumugi deploy` finds wrangler in node_modules/.bin: `npm install` in the project puts it there.
    package = json.loads((project.root / "package.json").read_text())
    assert package["devDependencies"] == {"wrangler": WRANGLER_VERSION}
    root = json.loads((REPO / "package.json").read_text())
    assert root["devDependencies"]["wrangler"] == WRANGLER_VERSION
    assert (package["name"], package["private"]) == ("my-app", True)


def test_the_readme_says_how_to_get_wrangler_for_the_deploy(project: InitResult) -> None:
    deploying = (project.root / "README.md").read_text().split("## Deploying", 1)[1]
    assert "npm install" in deploying
    assert "uv run tsumugi deploy --dry-run" in deploying


def test_the_schedulers_rules_upload_each_dashboard_file_once_as_the_repositorys_do(
    project: InitResult,
) -> None:
    # index.html is Text by wrangler's default rule already; a rule matching it too makes a duplicate module.
    rules = rules_from_config(loads_jsonc((project.root / "scheduler" / "wrangler.jsonc").read_text()))
    assert rules == rules_from_config(loads_jsonc((REPO / "services/scheduler/wrangler.jsonc").read_text()))
    assets = REPO / "packages/tsumugi-scheduler/src/tsumugi_scheduler/dashboard/assets"
    files = [
        f"tsumugi_scheduler/dashboard/{p.relative_to(assets.parent).as_posix()}" for p in assets.rglob("*.*")
    ]
    matched = match_modules(files, effective_rules(rules))
    assert (matched.duplicates, matched.unmatched) == ((), ())
    assert set(matched.modules.values()) == {"Text"}


def test_a_second_init_refuses_and_changes_nothing(project: InitResult) -> None:
    before = _files(project.root)
    with pytest.raises(ScaffoldError, match=r"already has .*pyproject.toml.*; refusing to overwrite"):
        init_project(project.root)
    assert _files(project.root) == before


def test_one_existing_file_stops_the_whole_init(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("mine\n")
    with pytest.raises(ScaffoldError, match=r"already has README.md; refusing to overwrite"):
        init_project(tmp_path, name="shop")
    assert _files(tmp_path) == {"README.md": b"mine\n"}


def test_a_file_where_a_folder_goes_stops_the_init_before_anything_is_written(tmp_path: Path) -> None:
    (tmp_path / "scheduler").write_text("notes\n")
    with pytest.raises(ScaffoldError, match=r"already has scheduler; refusing to overwrite"):
        init_project(tmp_path, name="shop")
    assert _files(tmp_path) == {"scheduler": b"notes\n"}


def test_a_dangling_symlink_or_a_symlinked_folder_is_never_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    project = tmp_path / "shop"
    project.mkdir()
    (project / "README.md").symlink_to(outside / "README.md")  # dangling: exists() is False
    with pytest.raises(ScaffoldError, match=r"already has README.md; refusing"):
        init_project(project)
    (project / "README.md").unlink()
    (project / "producer").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ScaffoldError, match=r"already has producer; refusing"):
        init_project(project)
    assert list(outside.iterdir()) == []
    assert [p.name for p in project.iterdir()] == ["producer"]


def test_a_file_that_cannot_be_written_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: Path, *args: object, **kwargs: object) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "write_text", refuse)
    with pytest.raises(ScaffoldError, match=r"cannot write .*: Permission denied"):
        init_project(tmp_path / "shop")


def test_unrelated_files_may_be_there_and_the_name_may_be_given(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    made = init_project(tmp_path, name="Photo Shop")
    assert made.project == "photo-shop"
    assert load_config(tmp_path / "scheduler" / "wrangler.jsonc").name == "photo-shop-scheduler"
    assert (tmp_path / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"


def test_a_file_as_target_or_an_unusable_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(ScaffoldError, match="exists and is not a folder"):
        init_project(tmp_path / "file")
    with pytest.raises(ScaffoldError, match="must start with a letter"):
        init_project(tmp_path / "2024")
    assert not (tmp_path / "2024").exists()


def test_the_command_exits_0_then_1_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as first:
        main(["init", str(tmp_path / "shop")])
    assert first.value.code == 0
    assert "wrote project shop" in capsys.readouterr().out
    with pytest.raises(SystemExit) as second:
        main(["init", str(tmp_path / "shop")])
    assert second.value.code == 1
    assert "refusing to overwrite" in capsys.readouterr().err


def test_the_written_paths_are_posix_relative(project: InitResult) -> None:
    assert all(isinstance(p, PurePosixPath) and not p.is_absolute() for p in project.written)
