"""The whole system on the local runtime: the scheduler, the example performers and the producer Worker.

Each test gets a fresh data folder and a `SteppingClock` that the runtime, the scheduler and the performers
all read, so retries, timeouts and heartbeats happen in virtual time.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from system_driver import Driver

from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.config import load_config
from tsumugi_dev.runtime import LocalRuntime
from tsumugi_performer import entrypoint as performer_time
from tsumugi_scheduler import timing as scheduler_time

REPO = Path(__file__).resolve().parents[2]
SCHEDULER_CONFIG = REPO / "services" / "scheduler" / "wrangler.jsonc"
PERFORMERS_CONFIG = REPO / "services" / "performers" / "wrangler.jsonc"
PRODUCER_CONFIG = REPO / "services" / "performers" / "producer" / "wrangler.jsonc"
START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
TOKEN = "test-token"
SCHEDULER = "tsumugi-scheduler"


class SteppingClock(VirtualClock):
    """`VirtualClock` plus ``sleep_ms`` (the time source the scheduler and the performers are given)."""

    def __init__(self, start_ms: int) -> None:
        super().__init__(start_ms)
        self.sleepers = 0
        self._parked: asyncio.Event | None = None

    async def sleep_ms(self, ms: int) -> None:
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not woken.done():
                woken.set_result(None)

        timer = self.call_at(self.now_ms() + max(0, ms), wake)
        self.sleepers += 1
        if self._parked is not None:
            self._parked.set()
        try:
            await woken
        finally:
            self.sleepers -= 1
            timer.cancel()

    def _idle(self) -> bool:
        loop: Any = asyncio.get_running_loop()
        return not loop._ready  # nothing runnable: every task waits (on I/O or virtual time)

    async def settle(self) -> None:
        while True:
            for _ in range(3):
                await asyncio.sleep(0)
            pending = [t for t in self._tracker.tasks if not t.done()]
            if not pending:
                return
            if self.sleepers and self._idle():
                return
            if self.sleepers:
                continue  # something is runnable: let it run, then look again
            # Wake when a task finishes or when one starts waiting on virtual time.
            self._parked = asyncio.Event()
            parked = asyncio.ensure_future(self._parked.wait())
            await asyncio.wait([*pending, parked], return_when=asyncio.FIRST_COMPLETED)
            parked.cancel()
            self._parked = None


@pytest.fixture
def clock() -> Iterator[SteppingClock]:
    stepping = SteppingClock(START_MS)
    old_scheduler = scheduler_time.use_time_source(stepping)
    old_performer = performer_time.use_time_source(stepping)
    yield stepping
    scheduler_time.use_time_source(old_scheduler)
    performer_time.use_time_source(old_performer)


@pytest.fixture
async def system(tmp_path: Path, clock: SteppingClock) -> AsyncIterator[LocalRuntime]:
    scheduler = load_config(SCHEDULER_CONFIG)
    scheduler = msgspec.structs.replace(scheduler, vars={**scheduler.vars, "TSUMUGI_TOKEN": TOKEN})
    configs = [scheduler, load_config(PERFORMERS_CONFIG), load_config(PRODUCER_CONFIG)]
    runtime = LocalRuntime(configs, data_dir=tmp_path / "data", clock=clock)
    await runtime.start()
    yield runtime
    await runtime.stop()
    assert clock.crashes == []


@pytest.fixture
def driver(system: LocalRuntime) -> Driver:
    return Driver(system, TOKEN)
