"""The `tsumugi deploy --dry-run` command itself, and wrangler's own view of the scheduler's rules."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.deploy.deploy_helpers import ROOT, WRANGLER_BIN, init_for_deploy, offline_env
from tsumugi_dev.deploy import default_deploy_configs
from tsumugi_dev.deploy_tools import quiet_wrangler_env
from tsumugi_dev.project import project_worker_configs


def test_the_cli_dry_runs_this_repositorys_three_workers(tmp_path: Path, wrangler_installed: Path) -> None:
    tsumugi = Path(sys.executable).with_name("tsumugi")
    environ = {**offline_env(with_wrangler=False), "PATH": os.defpath}  # wrangler from ./node_modules
    result = subprocess.run(
        [str(tsumugi), "deploy", "--dry-run", "--out", str(tmp_path)],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # No CONFIG: the Workers the root pyproject.toml lists in [tool.tsumugi] workers, in binding order.
    listed = project_worker_configs(ROOT)
    assert default_deploy_configs(ROOT) == listed
    assert [p.relative_to(ROOT).as_posix() for p in listed] == [
        "services/scheduler/wrangler.jsonc",
        "services/performers/wrangler.jsonc",
        "services/performers/producer/wrangler.jsonc",
    ]
    for config in listed:
        assert f" ({config})" in result.stdout
    assert result.stdout.splitlines()[0].endswith(
        ": tsumugi-performers -> tsumugi-scheduler -> tsumugi-producer"
    )
    assert result.stdout.count("wrangler deploy --dry-run: ok") == 3
    assert "WARNING" not in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "tsumugi-performers",
        "tsumugi-producer",
        "tsumugi-scheduler",
    ]


def test_wrangler_uploads_the_dashboard_without_a_duplicate_module(
    tmp_path: Path, wrangler_installed: Path
) -> None:
    # Issue 9, item 10: with the old rule wrangler warned "Ignoring duplicate module: .../index.html".
    work = tmp_path / "scheduler"
    shutil.copytree(ROOT / "services" / "scheduler", work, ignore=shutil.ignore_patterns("__pycache__"))
    # The library beside the entry module, as `tsumugi deploy` vendors it into the upload.
    shutil.copytree(
        ROOT / "packages" / "tsumugi-scheduler" / "src" / "tsumugi_scheduler",
        work / "src" / "tsumugi_scheduler",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    result = subprocess.run(
        [str(wrangler_installed), "deploy", "--dry-run", "--outdir", str(tmp_path / "dist")],
        cwd=work,
        env=quiet_wrangler_env({**offline_env(), "NO_COLOR": "1"}),
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "duplicate" not in (result.stdout + result.stderr).lower()
    assert (tmp_path / "dist" / "tsumugi_scheduler" / "dashboard" / "assets" / "index.html").is_file()
    assert WRANGLER_BIN.is_dir()


def test_without_config_a_project_deploys_what_its_tool_tsumugi_lists(tmp_path: Path) -> None:
    project = init_for_deploy(tmp_path)
    assert default_deploy_configs(project) == [
        project / "scheduler/wrangler.jsonc",
        project / "performers/wrangler.jsonc",
        project / "producer/wrangler.jsonc",
    ]
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(', "producer/wrangler.jsonc"]', "]"))
    assert default_deploy_configs(project) == [
        project / "scheduler/wrangler.jsonc",
        project / "performers/wrangler.jsonc",
    ]
