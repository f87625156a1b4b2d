"""A wake past the latest alarm workerd keeps arms the object at that latest instant, and nothing fails.

workerd refuses ``setAlarm`` from 2**63 - 1 ns on (about the year 2262, tests/shapes ``alarms``), while a job may
be delayed to the latest safe instant, 2**53 - 1 ms (about the year 287,000): the shard arms for workerd's
latest instant instead (`_runtime.set_alarm`), and the alarm then finds nothing due and arms again.
"""

from __future__ import annotations

from tests.integration.system_driver import SCHEDULER, Driver
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime
from tsumugi_scheduler._runtime import LATEST_ALARM_MS

LATEST_SAFE_MS = 2**53 - 1


async def _shard_alarm(system: LocalRuntime) -> object:
    (host,) = [h for h in system.namespace(SCHEDULER, "TsumugiJobShard").objects() if h.id.name == "Hello#0"]
    return await host.instance().ctx.storage.getAlarm()  # type: ignore[attr-defined]


async def test_a_job_delayed_to_the_latest_safe_instant_is_stored_and_its_shard_armed_at_workerds_latest(
    system: LocalRuntime, driver: Driver, clock: VirtualClock
) -> None:
    far = await driver.enqueue("Hello", {"name": "far"}, run_at=LATEST_SAFE_MS)
    await clock.advance(1_000)

    job = await driver.job(far)
    assert (job.state, job.run_after) == ("SCHEDULED", LATEST_SAFE_MS)
    assert await _shard_alarm(system) == LATEST_ALARM_MS
    # The shard goes on serving: a job due now runs, and the far one stays where it is.
    near = await driver.enqueue("Hello", {"name": "near"})
    await clock.advance(1_000)
    assert (await driver.job(near)).state == "COMPLETED"
    assert (await driver.job(far)).state == "SCHEDULED"
