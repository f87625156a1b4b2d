"""Behaviours an audit found emulated wrongly (issue 3), on the ``fidelity`` fixture Worker.

Cron triggers in Cloudflare's dialect, ``blockConcurrencyWhile`` holding back the first event, an ``alarm()``
interrupted by a restart, a crash between the object's alarm commit and the runtime's index, and subclasses of
``str`` crossing RPC as the plain type.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime

CONFIG = Path(__file__).parent / "fixtures" / "fidelity" / "wrangler.jsonc"
SATURDAY_MS = int(dt.datetime(2026, 1, 3, tzinfo=dt.UTC).timestamp() * 1000)
DAY_MS = 86_400_000


def utc(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%a %Y-%m-%d %H:%M")


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(SATURDAY_MS)


@pytest.fixture
async def fidelity(tmp_path: Path, clock: VirtualClock) -> AsyncIterator[LocalRuntime]:
    rt = LocalRuntime([CONFIG], data_dir=tmp_path / "data", clock=clock)
    await rt.start()
    yield rt
    await rt.stop()
    assert clock.crashes == []


def module(runtime: LocalRuntime) -> ModuleType:
    return runtime.workers["fidelity"].module


async def test_cron_weekday_1_is_sunday_as_on_cloudflare(fidelity: LocalRuntime, clock: VirtualClock) -> None:
    await clock.advance(3 * DAY_MS)
    fires = [(cron, utc(at)) for cron, at in module(fidelity).CRON_FIRES]
    assert fires == [("0 17 * * 1", "Sun 2026-01-04 17:00")]


async def test_cron_fril_fires_on_the_last_friday_of_the_month(
    fidelity: LocalRuntime, clock: VirtualClock
) -> None:
    await clock.advance(40 * DAY_MS)  # to 2026-02-12
    fridays = [utc(at) for cron, at in module(fidelity).CRON_FIRES if cron == "0 18 * * friL"]
    assert fridays == ["Fri 2026-01-30 18:00"]


async def test_an_enum_member_crosses_a_service_binding_as_a_plain_str(fidelity: LocalRuntime) -> None:
    seen = await fidelity.env("fidelity").SELF.kind(module(fidelity).Colour.RED)
    assert dict(seen) == {"type": "str", "is_enum": False}


async def test_block_concurrency_while_in_the_constructor_holds_back_the_first_event(
    fidelity: LocalRuntime,
) -> None:
    stub = fidelity.env("fidelity").GATED.getByName("first")
    assert await stub.steps_seen() == ["constructed"]


async def test_block_concurrency_while_in_a_method_holds_back_other_events(fidelity: LocalRuntime) -> None:
    stub = fidelity.env("fidelity").GATED.getByName("method")
    await stub.steps_seen()  # constructed
    blocked, other = await asyncio.gather(stub.block_a_while(), stub.steps_seen())
    assert blocked == ["constructed", "blocked work done"]
    assert other == ["constructed", "blocked work done"]


async def test_a_restart_during_alarm_counts_as_a_failure_and_is_retried(
    fidelity: LocalRuntime, clock: VirtualClock
) -> None:
    entry = module(fidelity)
    entry.OUTSIDE_IO["wait"] = lambda: clock.sleep_ms(500)
    stub = fidelity.env("fidelity").SLEEPER.getByName("b")
    await stub.arm(SATURDAY_MS + 1_000)
    await clock.advance(1_000)
    assert await stub.log() == ["start 0"]  # alarm() now waits on its outside I/O
    fidelity.faults.restart_durable_objects()
    await clock.advance(500)
    assert entry.ALARM_ENDS == [0]  # the old handler ran to its end, but its object had restarted
    assert clock.crashes == []
    assert await stub.alarm_at() == SATURDAY_MS + 1_500 + 2_000  # Cloudflare's first retry delay
    await clock.advance(2_500)
    assert await stub.log() == ["start 0", "start 1"]
    assert entry.ALARM_ENDS == [0, 1]
    assert await stub.alarm_at() is None


CRASH_SCRIPT = textwrap.dedent(
    """
    import asyncio, os, sys
    from tsumugi_dev import alarms
    from tsumugi_dev.clock import VirtualClock
    from tsumugi_dev.runtime import LocalRuntime

    config, data, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
    committed = alarms.AlarmScheduler.committed

    def die_after_the_object_commit(self, namespace, object_id, name, alarm_at):
        if alarm_at is not None:
            os._exit(9)  # kill -9 lands here: the object's file holds the alarm, the runtime has not heard
        return committed(self, namespace, object_id, name, alarm_at)

    alarms.AlarmScheduler.committed = die_after_the_object_commit

    async def main():
        runtime = LocalRuntime([config], data_dir=data, clock=VirtualClock(start))
        await runtime.start()
        await runtime.env("fidelity").SLEEPER.getByName("x").arm(start + 1_000)

    asyncio.run(main())
    """
)


async def test_an_alarm_survives_a_crash_between_the_object_commit_and_the_index(
    tmp_path: Path, clock: VirtualClock
) -> None:
    data = tmp_path / "data"
    crashed = subprocess.run(
        [sys.executable, "-c", CRASH_SCRIPT, str(CONFIG), str(data), str(SATURDAY_MS)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert crashed.returncode == 9, crashed.stderr
    runtime = LocalRuntime([CONFIG], data_dir=data, clock=clock)
    await runtime.start()
    try:
        await clock.advance(60_000)
        stub: Any = runtime.env("fidelity").SLEEPER.getByName("x")
        assert await stub.log() == ["start 0"]
        assert module(runtime).ALARM_ENDS == [0]
    finally:
        await runtime.stop()
    assert clock.crashes == []
