"""`tsumugi deploy --dry-run` on this repository's three Workers and on a project made by `tsumugi init` and
`tsumugi add-performer Resize` (issue 9, acceptance 2).

Each upload is checked from the folder wrangler itself wrote (`--outdir`): every module its entry imports,
transitively, is in it, or comes from the standard library, the runtime, or a third-party package that the
upload's generated pyproject hands to pywrangler, pinned as Pyodide 0.28 ships it.
"""

from __future__ import annotations

import json
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from tests.deploy.deploy_helpers import ROOT, Deployed, InitRun
from tests.deploy.upload_imports import (
    MANAGED_MODULES,
    RUNTIME_MODULES,
    import_time_imports,
    off_pyodide_modules,
    reached_modules,
    stdlib_modules,
    walk_imports,
)
from tsumugi_dev.project import project_worker_configs
from tsumugi_dev.pyodide_pins import pyodide_packages
from tsumugi_dev.scaffold.init_project import shipped_migrations
from tsumugi_dev.vendoring import normalize_name, parse_requirement

REPO_WORKERS = ("tsumugi-performers", "tsumugi-scheduler", "tsumugi-producer")
INIT_WORKERS = ("my-jobs-performers", "my-jobs-scheduler", "my-jobs-producer")
"""In Service Binding order: the scheduler binds the performers, the producer the scheduler."""


def _builds(run_name: str, request: pytest.FixtureRequest) -> Path:
    run = request.getfixturevalue(run_name)
    return run.out if isinstance(run, InitRun) else run[1]


def test_repo_dry_run_builds_and_checks_all_three_in_binding_order(repo_run: tuple[Deployed, Path]) -> None:
    deployed, _ = repo_run
    assert deployed.status == 0, deployed.out + deployed.err
    assert " -> ".join(REPO_WORKERS) in deployed.out.splitlines()[0]
    assert deployed.out.count("wrangler deploy --dry-run: ok") == 3
    assert "secret TSUMUGI_TOKEN" in deployed.out
    assert "database_id of 'tsumugi' is a placeholder" in deployed.out


def test_init_project_dry_run_builds_its_tool_tsumugi_workers_in_binding_order(init_run: InitRun) -> None:
    deployed = init_run.deployed
    assert deployed.status == 0, deployed.out + deployed.err
    assert deployed.err == ""
    assert deployed.out.splitlines()[0].endswith(": " + " -> ".join(INIT_WORKERS))
    # No CONFIG was given: the Workers are those the project's [tool.tsumugi] lists, each built and checked.
    by_name = {path.parent.name: path for path in project_worker_configs(init_run.project)}
    for index, worker in enumerate(INIT_WORKERS, start=1):
        config = by_name[worker.removeprefix("my-jobs-")]
        assert f"[{index}/3] {worker} ({config})" in deployed.out
    assert deployed.out.count("wrangler deploy --dry-run: ok") == 3
    assert "secret TSUMUGI_TOKEN" in deployed.out  # named by its .dev.vars.example


def test_init_project_dry_run_has_no_duplicate_module_and_no_wrangler_warning(init_run: InitRun) -> None:
    # With init's first scheduler rule (**/dashboard/assets/**) index.html matched two globs: the build
    # stopped ("matched by more than one glob"), and wrangler warned "Ignoring duplicate module".
    out = init_run.deployed.out
    assert init_run.deployed.status == 0, out + init_run.deployed.err
    assert "duplicate" not in out.lower()
    assert "WARNING" not in out  # the dry run shows each wrangler warning
    # The scheduler's own rule covers the dashboard's files: the build adds none.
    assert "added a Text rule" not in out
    # Every dashboard file is in what wrangler wrote (none left out by a too narrow rule).
    shipped = ROOT / "packages/tsumugi-scheduler/src/tsumugi_scheduler/dashboard/assets"
    uploaded = init_run.out / "my-jobs-scheduler" / "dist" / "tsumugi_scheduler" / "dashboard" / "assets"
    files = {p.relative_to(shipped).as_posix() for p in shipped.rglob("*") if p.is_file()}
    assert {"index.html", "style.css", "js/app.js"} <= files
    assert {p.relative_to(uploaded).as_posix() for p in uploaded.rglob("*") if p.is_file()} == files


def _third_party(upload: Path) -> dict[str, str]:
    pyproject = tomllib.loads((upload / "pyproject.toml").read_text())
    requirements = [parse_requirement(text) for text in pyproject["project"]["dependencies"]]
    return {r.name: r.text for r in requirements}


def _distribution_of(top_level: str) -> list[str]:
    return [normalize_name(d) for d in metadata.packages_distributions().get(top_level, [])]


@pytest.mark.parametrize("worker", REPO_WORKERS)
def test_each_repo_upload_holds_every_module_its_entry_imports(
    repo_run: tuple[Deployed, Path], worker: str
) -> None:
    _assert_complete(repo_run[1] / worker)


@pytest.mark.parametrize("worker", INIT_WORKERS)
def test_each_init_upload_holds_every_module_its_entry_imports(init_run: InitRun, worker: str) -> None:
    assert init_run.deployed.status == 0, init_run.deployed.out + init_run.deployed.err
    _assert_complete(init_run.out / worker)


def _assert_complete(upload: Path) -> None:
    dist = upload / "dist"
    outside, missing = walk_imports(dist, "entry.py")
    assert missing == set()
    third_party = _third_party(upload)
    # What a vendored package requires only off Pyodide (tsumugi-client's httpx) may be imported inside a
    # function (its HTTP clients), never as the Worker starts (ADR-0107).
    off_pyodide = off_pyodide_modules(dist)
    assert import_time_imports(dist, "entry.py") & off_pyodide == set()
    unexplained = {
        name
        for name in outside - stdlib_modules() - RUNTIME_MODULES - set(MANAGED_MODULES) - off_pyodide
        if not set(_distribution_of(name)) & set(third_party)
    }
    assert unexplained == set(), f"imported, not in the upload and fetched by nobody: {unexplained}"
    # Vendored code really is in the upload (the walk resolved it there), not fetched.
    assert not any(name.startswith("tsumugi-") for name in third_party)


def test_the_added_performer_is_in_the_performers_upload_and_bound_by_the_scheduler(
    init_run: InitRun,
) -> None:
    dist = init_run.out / "my-jobs-performers" / "dist"
    reached = reached_modules(dist, "entry.py")
    assert {"my_jobs_performers.hello", "my_jobs_performers.resize"} <= reached
    assert "tsumugi_performer.entrypoint" in reached  # vendored, not fetched
    scheduler = json.loads((init_run.out / "my-jobs-scheduler" / "wrangler.jsonc").read_text())
    assert {"binding": "Resize", "service": "my-jobs-performers", "entrypoint": "Resize"} in scheduler[
        "services"
    ]
    assert '"Resize"' in (init_run.out / "my-jobs-scheduler" / "dist" / "entry.py").read_text()


def test_the_sources_alone_lack_what_the_build_vendors() -> None:
    # What item 2 of issue 9 found: the producer's own folder is not an upload; tsumugi_client is nowhere.
    outside, _ = walk_imports(ROOT / "services/performers/producer/src", "entry.py")
    assert "tsumugi_client" in outside
    assert "tsumugi_client" not in stdlib_modules() | RUNTIME_MODULES


@pytest.mark.parametrize("run_name", ["repo_run", "init_run"])
def test_third_party_pins_are_pyodide_028s(run_name: str, request: pytest.FixtureRequest) -> None:
    out = _builds(run_name, request)
    shipped = pyodide_packages()
    checked: set[str] = set()
    uploads = sorted(p for p in out.iterdir() if p.is_dir())
    assert len(uploads) == 3
    for upload in uploads:
        for name, text in _third_party(upload).items():
            requirement = parse_requirement(text)
            if name in shipped:
                assert requirement.pin == shipped[name], (
                    f"{upload.name}: {text} vs Pyodide 0.28 {shipped[name]}"
                )
                checked.add(name)
    assert {"msgspec", "pydantic"} <= checked


def test_the_scheduler_upload_carries_the_d1_migrations(init_run: InitRun) -> None:
    assert init_run.deployed.status == 0, init_run.deployed.out + init_run.deployed.err
    upload = init_run.out / "my-jobs-scheduler"
    generated = json.loads((upload / "wrangler.jsonc").read_text())
    assert generated["main"] == "src/entry.py"
    assert "$schema" not in generated
    (database,) = generated["d1_databases"]
    migrations = (upload / database["migrations_dir"]).resolve()
    assert migrations == (init_run.project / "scheduler" / "migrations").resolve()
    # What `wrangler d1 migrations apply` reads from there: the schema the vendored scheduler expects.
    assert sorted((p.name, p.read_text()) for p in migrations.glob("*.sql")) == shipped_migrations()
    assert not (upload / "dist" / "tsumugi_scheduler" / "py.typed").exists()
