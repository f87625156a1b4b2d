"""Fixtures for the local runtime's tests: a fresh runtime per test on a virtual clock.

``runtime`` hosts the conformance Workers; ``repo_system`` hosts this repository's scheduler, performers and
producer, with the scheduler and the performers waiting on the same virtual clock.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.support.clock import START_MS, installed
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.config import load_config
from tsumugi_dev.project import project_worker_configs
from tsumugi_dev.runtime import LocalRuntime

FIXTURES = Path(__file__).parent / "fixtures"
CONFIGS = [FIXTURES / "conformance" / "wrangler.jsonc", FIXTURES / "peer" / "wrangler.toml"]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _logger_levels() -> Iterator[None]:
    """Give back the levels `tsumugi_dev.cli.configure_logging` sets, so one test's choice never leaks."""
    names = ("tsumugi", "tsumugi_dev", "tsumugi_scheduler")
    levels = [logging.getLogger(name).level for name in names]
    yield
    for name, level in zip(names, levels, strict=True):
        logging.getLogger(name).setLevel(level)


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


@pytest.fixture
async def repo_system(tmp_path: Path) -> AsyncIterator[tuple[LocalRuntime, VirtualClock]]:
    with installed(VirtualClock(START_MS)) as clock:
        runtime = LocalRuntime(
            [load_config(p) for p in project_worker_configs(REPO)], data_dir=tmp_path / "data", clock=clock
        )
        await runtime.start()
        try:
            yield runtime, clock
        finally:
            await runtime.stop()
    assert clock.crashes == []
