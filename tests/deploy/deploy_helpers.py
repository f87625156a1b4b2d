"""Helpers of the deploy tests: this repository's three Workers and an init-shaped project, built and dry-run offline.

wrangler comes from this repository's node_modules (`npm ci`, run by scripts/test.sh); the tests put it on
PATH themselves, so a project outside this repository finds it as a user's globally installed wrangler.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

from init_project import ROOT

from tsumugi_dev.deploy import run_deploy

WRANGLER_BIN = ROOT / "node_modules" / ".bin"
REPO_CONFIGS = (
    ROOT / "services/performers/wrangler.jsonc",
    ROOT / "services/scheduler/wrangler.jsonc",
    ROOT / "services/performers/producer/wrangler.jsonc",
)


def offline_env(*, with_wrangler: bool = True) -> dict[str, str]:
    """An environment with only the system's PATH (and the pinned wrangler on it when asked)."""
    path = os.defpath + (os.pathsep + str(WRANGLER_BIN) if with_wrangler else "")
    return {"PATH": path, "HOME": os.environ.get("HOME", "/tmp")}


class Deployed:
    def __init__(self, status: int, out: str, err: str) -> None:
        self.status, self.out, self.err = status, out, err


def deploy(
    configs: list[Path], *, cwd: Path, out_dir: Path, dry_run: bool, environ: dict[str, str]
) -> Deployed:
    out, err = io.StringIO(), io.StringIO()
    status = run_deploy(
        configs, dry_run=dry_run, out_dir=out_dir, cwd=cwd, environ=environ, stdout=out, stderr=err
    )
    return Deployed(status, out.getvalue(), err.getvalue())
