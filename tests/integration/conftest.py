"""The whole system on the local runtime: the scheduler, the example performers and the producer Worker.

Each test gets a fresh data folder and one `VirtualClock` that the runtime, the scheduler and the performers
all read (tests.support.clock), so retries, timeouts, heartbeats and a performer's sleeps
happen in virtual time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.system_driver import PRODUCER_TOKEN, TOKEN, Driver
from tests.support.clock import START_MS, installed
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.config import load_config
from tsumugi_dev.runtime import LocalRuntime

REPO = Path(__file__).resolve().parents[2]
SCHEDULER_CONFIG = REPO / "services" / "scheduler" / "wrangler.jsonc"
PERFORMERS_CONFIG = REPO / "services" / "performers" / "wrangler.jsonc"
PRODUCER_CONFIG = REPO / "services" / "performers" / "producer" / "wrangler.jsonc"
SCHEDULER = "tsumugi-scheduler"


@pytest.fixture
def clock() -> Iterator[VirtualClock]:
    with installed(VirtualClock(START_MS)) as virtual:
        yield virtual


@pytest.fixture
async def system(tmp_path: Path, clock: VirtualClock) -> AsyncIterator[LocalRuntime]:
    # The test's token wins over a developer's services/scheduler/.dev.vars.
    scheduler = load_config(SCHEDULER_CONFIG).with_secrets({"TSUMUGI_TOKEN": TOKEN})
    producer = load_config(PRODUCER_CONFIG).with_secrets({"PRODUCER_TOKEN": PRODUCER_TOKEN})
    configs = [scheduler, load_config(PERFORMERS_CONFIG), producer]
    runtime = LocalRuntime(configs, data_dir=tmp_path / "data", clock=clock)
    await runtime.start()
    yield runtime
    await runtime.stop()
    assert clock.crashes == []


@pytest.fixture
def driver(system: LocalRuntime) -> Driver:
    return Driver(system, TOKEN)


FLOW_CONFIG = Path(__file__).parent / "fixtures" / "flow_scheduler" / "wrangler.jsonc"
FLOW_WORKER = "tsumugi-flows"
"""The flow rule tests' scheduler Worker (fixtures/flow_scheduler: its flows in flow_fixture.py)."""


@pytest.fixture
async def flows(tmp_path: Path, clock: VirtualClock) -> AsyncIterator[LocalRuntime]:
    """The flow fixture scheduler on the local runtime."""
    runtime = LocalRuntime([load_config(FLOW_CONFIG)], data_dir=tmp_path / "data", clock=clock)
    await runtime.start()
    yield runtime
    await runtime.stop()
    assert clock.crashes == []


@pytest.fixture
def fixture_module(flows: LocalRuntime) -> Iterator[Any]:
    """flow_fixture (importable once the Worker is loaded), its flows restored and its records cleared after."""
    import flow_fixture  # pyright: ignore[reportMissingImports]

    saved = dict(flow_fixture.TSUMUGI.flows)
    flow_fixture.SEEN.clear()
    flow_fixture.NOTICES.clear()
    flow_fixture.RUNS.clear()
    flow_fixture.GATE["closed"] = False
    yield flow_fixture
    flow_fixture.TSUMUGI.flows.clear()
    flow_fixture.TSUMUGI.flows.update(saved)
