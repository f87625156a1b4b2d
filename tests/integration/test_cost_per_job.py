"""What a job costs on Cloudflare, counted by the runtime's meter (ADR-0130), and the cut of ADR-0132."""

from __future__ import annotations

from tests.integration.system_driver import Driver
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime

D1 = "D1 tsumugi"


async def _settle(clock: VirtualClock) -> None:
    for _ in range(10):  # long past the 250 ms hold, one step at a time
        await clock.advance(1_000)


async def test_a_job_dispatched_at_once_reaches_the_read_model_once(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    await driver.enqueue("Hello", {"name": "warm-up"})  # shards and their tables made
    await _settle(clock)
    system.meter.reset()
    job_id = await driver.enqueue("Hello", {"name": "Ada"})
    await _settle(clock)
    queries = system.meter.usage(D1).d1_queries  # before this test's own reads of the read model
    row = await driver.row(job_id)
    assert row is not None
    assert row["state"] == "COMPLETED"
    notices = await driver.notices_for("NotifySettled", job_id)
    assert [n["state"] for n in notices] == ["COMPLETED"]
    # One upsert each: the Hello job and its NotifySettled notice job, both projected only once finished
    # (before ADR-0132 each was also projected SCHEDULED, just before its dispatch: four queries).
    assert queries == 2


async def test_a_job_not_dispatched_yet_is_still_listed_scheduled(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    job_id = await driver.enqueue("Hello", {"name": "later"}, delay_ms=60_000)
    await _settle(clock)
    row = await driver.row(job_id)
    assert row is not None
    assert row["state"] == "SCHEDULED"
