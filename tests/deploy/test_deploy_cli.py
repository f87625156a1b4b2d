"""The `tsumugi deploy --dry-run` command itself, and wrangler's own view of the scheduler's rules."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from deploy_helpers import WRANGLER_BIN, offline_env
from init_project import ROOT

from tsumugi_dev.deploy_tools import quiet_wrangler_env


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
    assert result.stdout.count("wrangler deploy --dry-run: ok") == 3
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
