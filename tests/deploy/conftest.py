"""Deploy tests: the pinned wrangler must be installed (`npm ci`, run by scripts/test.sh).

The two dry runs every acceptance check reads run once per session: this repository's three Workers, and a
project made by the real `tsumugi init` and `tsumugi add-performer Resize`, deployed with no CONFIG from its
root (so its `[tool.tsumugi] workers` list is what is deployed).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.deploy.deploy_helpers import (
    PROJECT,
    REPO_CONFIGS,
    ROOT,
    WRANGLER_BIN,
    Deployed,
    InitRun,
    deploy,
    npm_install_offline,
    offline_env,
    tsumugi,
)


@pytest.fixture(scope="session")
def wrangler_installed() -> Path:
    wrangler = WRANGLER_BIN / "wrangler"
    assert wrangler.is_file(), (
        f"{wrangler} is missing: run `npm ci` at the repository root (scripts/test.sh does)"
    )
    return wrangler


@pytest.fixture(scope="session")
def repo_run(tmp_path_factory: pytest.TempPathFactory, wrangler_installed: Path) -> tuple[Deployed, Path]:
    out = tmp_path_factory.mktemp("repo-build")
    # In the order tsumugi dev uses (scheduler first): the deploy puts the performers first by itself.
    configs = [REPO_CONFIGS[1], REPO_CONFIGS[0], REPO_CONFIGS[2]]
    return deploy(configs, cwd=ROOT, out_dir=out, dry_run=True, environ=offline_env()), out


@pytest.fixture(scope="session")
def init_run(tmp_path_factory: pytest.TempPathFactory, wrangler_installed: Path) -> InitRun:
    """`tsumugi init my-jobs`, `tsumugi add-performer Resize`, `npm install`, `tsumugi deploy --dry-run`: the
    commands a user types, each a real process; wrangler only in the project's node_modules (not on PATH)."""
    parent = tmp_path_factory.mktemp("user")
    environ = {**offline_env(with_wrangler=False), "PATH": os.defpath}
    project = parent / PROJECT
    for cwd, args in ((parent, ("init", PROJECT)), (project, ("add-performer", "Resize"))):
        done = tsumugi(cwd, *args, environ=environ)
        assert done.returncode == 0, done.stdout + done.stderr
    npm_install_offline(project)
    done = tsumugi(project, "deploy", "--dry-run", environ=environ)
    return InitRun(project, Deployed(done.returncode, done.stdout, done.stderr))
