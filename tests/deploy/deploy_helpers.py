"""Helpers of the deploy tests: this repository's three Workers and a project made by `tsumugi init`.

wrangler comes from this repository's node_modules (`npm ci`, run by scripts/test.sh), never from the network:
the tests put its .bin on PATH (a globally installed wrangler, as a user may have), or link the project's
node_modules to it (what `npm install` in an init'ed project makes, its package.json pinning the same version).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from tsumugi_dev.deploy import run_deploy
from tsumugi_dev.scaffold import init_project

ROOT = Path(__file__).resolve().parents[2]
WRANGLER_BIN = ROOT / "node_modules" / ".bin"
REPO_CONFIGS = (
    ROOT / "services/performers/wrangler.jsonc",
    ROOT / "services/scheduler/wrangler.jsonc",
    ROOT / "services/performers/producer/wrangler.jsonc",
)
PROJECT = "my-jobs"
D1_ID = "0b1f5c3e-8d2a-4c6f-9e7b-1a2b3c4d5e6f"
"""A database_id as `wrangler d1 create` prints one."""


def offline_env(*, with_wrangler: bool = True) -> dict[str, str]:
    """An environment with only the system's PATH (and the pinned wrangler on it when asked)."""
    path = os.defpath + (os.pathsep + str(WRANGLER_BIN) if with_wrangler else "")
    return {"PATH": path, "HOME": os.environ.get("HOME", "/tmp")}


class Deployed:
    def __init__(self, status: int, out: str, err: str) -> None:
        self.status, self.out, self.err = status, out, err


class InitRun:
    """The init'ed project and its `tsumugi deploy --dry-run`."""

    def __init__(self, project: Path, deployed: Deployed) -> None:
        self.project = project
        self.deployed = deployed
        self.out = project / ".tsumugi" / "build"


def deploy(
    configs: list[Path], *, cwd: Path, out_dir: Path, dry_run: bool, environ: dict[str, str]
) -> Deployed:
    out, err = io.StringIO(), io.StringIO()
    status = run_deploy(
        configs, dry_run=dry_run, out_dir=out_dir, cwd=cwd, environ=environ, stdout=out, stderr=err
    )
    return Deployed(status, out.getvalue(), err.getvalue())


def tsumugi(cwd: Path, *args: str, environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The `tsumugi` command of this environment, run in ``cwd``."""
    return subprocess.run(
        [sys.executable, "-m", "tsumugi_dev", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def init_for_deploy(parent: Path, *, database_id: str | None = None) -> Path:
    """`tsumugi init` (its public function) into ``parent/my-jobs``; with ``database_id``, the scheduler's
    placeholder ``"local"`` replaced by it, as the user does after `wrangler d1 create`."""
    project = init_project(parent / PROJECT).root
    if database_id is not None:
        config = project / "scheduler" / "wrangler.jsonc"
        text = config.read_text()
        assert text.count('"database_id": "local"') == 1
        config.write_text(text.replace('"database_id": "local"', f'"database_id": "{database_id}"'))
    return project


def npm_install_offline(project: Path) -> None:
    """What `npm install` does in an init'ed project, without the network: its node_modules is this
    repository's, which holds the very wrangler the project's package.json pins (the repository's own
    pins add the Pyodide its FFI tests run, which a project does not need)."""
    pinned = json.loads((project / "package.json").read_text())["devDependencies"]
    ours = json.loads((ROOT / "package.json").read_text())["devDependencies"]
    assert pinned == {"wrangler": ours["wrangler"]}
    (project / "node_modules").symlink_to(ROOT / "node_modules", target_is_directory=True)
