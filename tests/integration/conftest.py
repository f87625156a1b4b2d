"""The whole system on the local runtime: a scheduler, performers and a producer Worker.

``system`` runs the tests' own Workers (fixtures/system: their performers in system_performers.py), so an edit
to an example changes no test here but those whose subject is the example: such a module overrides
``system_configs`` with `example_configs` (this repository's scheduler, example performers and producer).

Each test gets a fresh data folder and one `VirtualClock` that the runtime, the scheduler and the performers
all read (tests.support.clock), so retries, timeouts, heartbeats and a performer's sleeps happen in virtual
time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.system_driver import TOKEN, Driver, own_configs
from tests.support.clock import START_MS, installed
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.config import WorkerConfig, load_config
from tsumugi_dev.runtime import LocalRuntime

SCHEDULER = "tsumugi-scheduler"


@pytest.fixture
def system_configs() -> list[WorkerConfig]:
    """The Workers ``system`` runs: the tests' own (fixtures/system)."""
    return own_configs()


@pytest.fixture
def clock() -> Iterator[VirtualClock]:
    with installed(VirtualClock(START_MS)) as virtual:
        yield virtual


@pytest.fixture
async def system(
    tmp_path: Path, clock: VirtualClock, system_configs: list[WorkerConfig]
) -> AsyncIterator[LocalRuntime]:
    runtime = LocalRuntime(system_configs, data_dir=tmp_path / "data", clock=clock)
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
