"""`tsumugi deploy --dry-run` on this repository's three Workers and on an init-shaped project (acceptance 2).

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
from deploy_helpers import REPO_CONFIGS, Deployed, deploy, offline_env
from init_project import ROOT, make_init_project
from upload_imports import MANAGED_MODULES, RUNTIME_MODULES, stdlib_modules, walk_imports

from tsumugi_dev.pyodide_pins import pyodide_packages
from tsumugi_dev.vendoring import normalize_name, parse_requirement

REPO_WORKERS = ("tsumugi-performers", "tsumugi-scheduler", "tsumugi-producer")
INIT_WORKERS = ("my-jobs-performers", "my-jobs-scheduler", "my-jobs-producer")


@pytest.fixture(scope="module")
def repo_run(tmp_path_factory: pytest.TempPathFactory, wrangler_installed: Path) -> tuple[Deployed, Path]:
    out = tmp_path_factory.mktemp("repo-build")
    # In the order tsumugi dev uses (scheduler first): the deploy puts the performers first by itself.
    configs = [REPO_CONFIGS[1], REPO_CONFIGS[0], REPO_CONFIGS[2]]
    return deploy(configs, cwd=ROOT, out_dir=out, dry_run=True, environ=offline_env()), out


@pytest.fixture(scope="module")
def init_run(tmp_path_factory: pytest.TempPathFactory, wrangler_installed: Path) -> tuple[Deployed, Path]:
    project = tmp_path_factory.mktemp("my-jobs")
    configs = make_init_project(project)
    out = project / ".tsumugi" / "build"
    return deploy(configs, cwd=project, out_dir=out, dry_run=True, environ=offline_env()), out


def _upload(run: tuple[Deployed, Path], worker: str) -> Path:
    return run[1] / worker


def test_repo_dry_run_builds_and_checks_all_three_in_binding_order(repo_run: tuple[Deployed, Path]) -> None:
    deployed, _ = repo_run
    assert deployed.status == 0, deployed.out + deployed.err
    assert " -> ".join(REPO_WORKERS) in deployed.out.splitlines()[0]
    assert deployed.out.count("wrangler deploy --dry-run: ok") == 3
    assert "secret TSUMUGI_TOKEN" in deployed.out
    assert "database_id of 'tsumugi' is a placeholder" in deployed.out


def test_init_project_dry_run_builds_and_checks_all_three(init_run: tuple[Deployed, Path]) -> None:
    deployed, _ = init_run
    assert deployed.status == 0, deployed.out + deployed.err
    assert " -> ".join(INIT_WORKERS) in deployed.out.splitlines()[0]
    assert deployed.out.count("wrangler deploy --dry-run: ok") == 3
    # Its scheduler's config has no rule for the dashboard's files; the build adds one, as text.
    assert "added a Text rule for package data" in deployed.out
    assert "secret TSUMUGI_TOKEN" in deployed.out  # named by its .dev.vars.example


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
    _assert_complete(_upload(repo_run, worker))


@pytest.mark.parametrize("worker", INIT_WORKERS)
def test_each_init_upload_holds_every_module_its_entry_imports(
    init_run: tuple[Deployed, Path], worker: str
) -> None:
    _assert_complete(_upload(init_run, worker))


def _assert_complete(upload: Path) -> None:
    dist = upload / "dist"
    outside, missing = walk_imports(dist, "entry.py")
    assert missing == set()
    third_party = _third_party(upload)
    unexplained = {
        name
        for name in outside - stdlib_modules() - RUNTIME_MODULES - set(MANAGED_MODULES)
        if not set(_distribution_of(name)) & set(third_party)
    }
    assert unexplained == set(), f"imported, not in the upload and fetched by nobody: {unexplained}"
    # Vendored code really is in the upload (the walk resolved it there), not fetched.
    assert not any(name.startswith("tsumugi-") for name in third_party)


def test_the_sources_alone_lack_what_the_build_vendors() -> None:
    # What item 2 of issue 9 found: the producer's own folder is not an upload; tsumugi_client is nowhere.
    outside, _ = walk_imports(ROOT / "services/performers/producer/src", "entry.py")
    assert "tsumugi_client" in outside
    assert "tsumugi_client" not in stdlib_modules() | RUNTIME_MODULES


@pytest.mark.parametrize("run_name", ["repo_run", "init_run"])
def test_third_party_pins_are_pyodide_028s(run_name: str, request: pytest.FixtureRequest) -> None:
    _, out = request.getfixturevalue(run_name)
    shipped = pyodide_packages()
    checked = 0
    for upload in sorted(p for p in out.iterdir() if p.is_dir()):
        for name, text in _third_party(upload).items():
            requirement = parse_requirement(text)
            if name in shipped:
                assert requirement.pin == shipped[name], (
                    f"{upload.name}: {text} vs Pyodide 0.28 {shipped[name]}"
                )
                checked += 1
    assert checked >= 3  # msgspec, httpx, pydantic at least


def test_generated_configs_point_at_the_build(init_run: tuple[Deployed, Path]) -> None:
    upload = _upload(init_run, "my-jobs-scheduler")
    generated = json.loads((upload / "wrangler.jsonc").read_text())
    assert generated["main"] == "src/entry.py"
    assert "$schema" not in generated
    (database,) = generated["d1_databases"]
    assert (upload / database["migrations_dir"]).resolve() == (upload.parents[2] / "scheduler" / "migrations")
    dist = upload / "dist"
    for asset in ("index.html", "style.css", "js/app.js"):
        assert (dist / "tsumugi_scheduler" / "dashboard" / "assets" / asset).is_file()
    assert not (dist / "tsumugi_scheduler" / "py.typed").exists()
