"""A real `tsumugi deploy` of a project made by `tsumugi init`, with stand-ins for wrangler and uv that record
what they were asked to do.

Nothing here reaches Cloudflare: the stand-ins are shell scripts on PATH, so the tests check the commands,
their order and their folders, which is what `tsumugi deploy` decides; what Cloudflare does with them is in
docs/deploy.md ("What could not be verified without an account").
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.deploy.deploy_helpers import D1_ID, deploy, init_for_deploy, offline_env
from tsumugi_dev.deploy_tools import PYWRANGLER_REQUIREMENT, WRANGLER_REQUIREMENT

TOOL = """#!/bin/sh
echo "$(basename "$PWD") {name} $*" >> "{log}"
case "$*" in *"{fail}"*) exit 3;; esac
printf '%s\\n' '{say}'
exit 0
"""


def _tools(tmp_path: Path, *, fail: str = "never-matches", say: str = "done") -> tuple[dict[str, str], Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    log.touch()
    for name in ("wrangler", "uv"):
        script = bin_dir / name
        script.write_text(TOOL.format(name=name, log=log, fail=fail, say=say), encoding="utf-8")
        script.chmod(0o755)
    environ = offline_env(with_wrangler=False)
    environ["PATH"] = f"{bin_dir}{os.pathsep}{environ['PATH']}"
    return environ, log


def test_deploys_performers_then_scheduler_then_producer_with_sync_and_migrations(tmp_path: Path) -> None:
    project = init_for_deploy(tmp_path, database_id=D1_ID)
    environ, log = _tools(tmp_path)
    deployed = deploy([], cwd=project, out_dir=Path(".tsumugi/build"), dry_run=False, environ=environ)
    assert deployed.status == 0, deployed.out + deployed.err
    sync = f"uv tool run --from {PYWRANGLER_REQUIREMENT} pywrangler sync"
    assert log.read_text().splitlines() == [
        f"my-jobs-performers {sync}",
        "my-jobs-performers wrangler deploy --config wrangler.jsonc",
        f"my-jobs-scheduler {sync}",
        "my-jobs-scheduler wrangler d1 migrations apply my-jobs --remote --config wrangler.jsonc",
        "my-jobs-scheduler wrangler deploy --config wrangler.jsonc",
        f"my-jobs-producer {sync}",
        "my-jobs-producer wrangler deploy --config wrangler.jsonc",
    ]
    tail = deployed.out.split("Still to set:", 1)[1]
    assert "wrangler secret put TSUMUGI_TOKEN --name my-jobs-scheduler" in tail
    assert "wrangler queues create my-jobs-jobs" in tail


def test_a_failed_step_stops_the_deploy(tmp_path: Path) -> None:
    project = init_for_deploy(tmp_path, database_id=D1_ID)
    environ, log = _tools(tmp_path, fail="migrations apply")
    deployed = deploy([], cwd=project, out_dir=Path("build"), dry_run=False, environ=environ)
    assert deployed.status == 1
    assert "FAILED: d1 migrations apply my-jobs --remote (exit 3)" in deployed.out
    # The scheduler was not deployed without its read model, nor the producer that binds to it.
    assert log.read_text().splitlines()[-1] == (
        "my-jobs-scheduler wrangler d1 migrations apply my-jobs --remote --config wrangler.jsonc"
    )


def test_a_placeholder_database_id_stops_a_real_deploy_before_anything_runs(tmp_path: Path) -> None:
    project = init_for_deploy(tmp_path)  # database_id "local", as tsumugi dev wants it
    environ, log = _tools(tmp_path)
    deployed = deploy([], cwd=project, out_dir=Path("build"), dry_run=False, environ=environ)
    assert deployed.status == 2
    assert "database_id of 'my-jobs' is a placeholder" in deployed.err
    assert "wrangler d1 create my-jobs" in deployed.err
    assert log.read_text() == ""


@pytest.mark.parametrize("dry_run", [True, False])
def test_without_wrangler_it_says_how_to_get_it(tmp_path: Path, dry_run: bool) -> None:
    project = init_for_deploy(tmp_path, database_id=D1_ID)
    deployed = deploy(
        [], cwd=project, out_dir=Path("build"), dry_run=dry_run, environ=offline_env(with_wrangler=False)
    )
    assert deployed.status == 2
    assert "wrangler was not found" in deployed.err
    assert "`npm install` in a project `tsumugi init` made (its package.json pins wrangler)" in deployed.err
    assert f"npm install --save-dev {WRANGLER_REQUIREMENT}" in deployed.err
    assert not (project / "build").exists()


def test_without_uv_a_real_deploy_says_how_to_get_it(tmp_path: Path) -> None:
    project = init_for_deploy(tmp_path, database_id=D1_ID)
    environ, _ = _tools(tmp_path)
    (tmp_path / "bin" / "uv").unlink()
    deployed = deploy([], cwd=project, out_dir=Path("build"), dry_run=False, environ=environ)
    assert deployed.status == 2
    assert "uv was not found" in deployed.err


def test_a_bad_pin_in_the_last_worker_stops_the_deploy_before_the_first(tmp_path: Path) -> None:
    project = init_for_deploy(tmp_path, database_id=D1_ID)
    pyproject = project / "producer" / "pyproject.toml"
    text = pyproject.read_text()
    assert text.count("dependencies = [\n") == 1
    pyproject.write_text(text.replace("dependencies = [\n", 'dependencies = [\n    "pydantic==2.11.0",\n'))
    environ, log = _tools(tmp_path)
    deployed = deploy([], cwd=project, out_dir=Path("build"), dry_run=False, environ=environ)
    assert deployed.status == 2
    assert "pydantic==2.11.0: Pyodide 0.28 ships pydantic 2.10.6, not 2.11.0" in deployed.err
    assert log.read_text() == ""


def test_a_dry_run_shows_wranglers_warnings(tmp_path: Path) -> None:
    # wrangler exits 0 on a warning (a duplicate module, say): a dry run that only said "ok" would hide it.
    project = init_for_deploy(tmp_path)
    coloured = (
        "\x1b[33m▲ \x1b[43;33m[\x1b[43;30mWARNING\x1b[43;33m]\x1b[0m "
        "\x1b[1mIgnoring duplicate module: x.html (text)\x1b[0m"
    )
    environ, log = _tools(tmp_path, say=coloured)
    deployed = deploy([], cwd=project, out_dir=Path("build"), dry_run=True, environ=environ)
    assert deployed.status == 0, deployed.out + deployed.err
    assert deployed.out.count("  wrangler: ▲ [WARNING] Ignoring duplicate module: x.html (text)\n") == 3
    assert len(log.read_text().splitlines()) == 3  # one `wrangler deploy --dry-run` per Worker
