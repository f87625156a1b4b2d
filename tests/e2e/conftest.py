"""Browser tests of the dashboard: a real headless Chromium against a fake REST API on 127.0.0.1."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The helpers (fake_api, browser) sit next to the tests.
sys.path.insert(0, str(Path(__file__).parent))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: end-to-end tests (real browser or build tools)")
