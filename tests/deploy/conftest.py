"""Deploy tests: the pinned wrangler must be installed (`npm ci`, run by scripts/test.sh)."""

from __future__ import annotations

from pathlib import Path

import pytest
from deploy_helpers import WRANGLER_BIN


@pytest.fixture(scope="session")
def wrangler_installed() -> Path:
    wrangler = WRANGLER_BIN / "wrangler"
    assert wrangler.is_file(), (
        f"{wrangler} is missing: run `npm ci` at the repository root (scripts/test.sh does)"
    )
    return wrangler
