"""Fixtures for the local runtime's conformance tests: a fresh runtime per test on a virtual clock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime

FIXTURES = Path(__file__).parent / "fixtures"
CONFIGS = [FIXTURES / "conformance" / "wrangler.jsonc", FIXTURES / "peer" / "wrangler.toml"]
START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z, on a cron boundary


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(START_MS)


@pytest.fixture
async def runtime(tmp_path: Path, clock: VirtualClock) -> AsyncIterator[LocalRuntime]:
    rt = LocalRuntime(CONFIGS, data_dir=tmp_path / "data", clock=clock)
    await rt.start()
    yield rt
    await rt.stop()
    assert clock.crashes == []
