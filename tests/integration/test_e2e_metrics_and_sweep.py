"""The scheduler's side effects outside the shard: Analytics Engine points and the cron sweep of the read model."""

from __future__ import annotations

from tests.integration.system_driver import SCHEDULER, Driver
from tsumugi_client import JobDetail, create_client
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime

DAY_MS = 86_400_000
POINTS = (
    "SELECT index1, blob1, blob2, blob3, double1, double2 FROM tsumugi_metrics "
    "WHERE blob2 IN ('Hello', 'Boom') ORDER BY blob2, blob1"
)


def _duration(job: JobDetail) -> float:
    return 0.0 if job.dispatched_at is None else float(max(0, job.updated_at - job.dispatched_at))


async def test_each_terminal_job_writes_one_data_point_in_the_reference_layout(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    completed = await driver.enqueue("Hello", {"name": "m"})
    failed = await driver.enqueue("Boom", None, max_attempts=2)
    once = await driver.enqueue("Hello", {"name": "once"}, guarantee="at-most-once")
    cancelled = await driver.enqueue("Hello", {"name": "never"}, delay_ms=60_000)
    await driver.client.cancel(driver.producer_env, cancelled)
    assert system.analytics.query(POINTS) == []  # nothing is terminal before the clock moves
    await clock.advance(10_000)

    jobs = {job_id: await driver.job(job_id) for job_id in (completed, failed, once, cancelled)}
    assert [j.state for j in jobs.values()] == ["COMPLETED", "FAILED", "COMPLETED", "CANCELLED"]
    # docs/reference/original.md §5.4: index1 binding; blob1 state, blob2 binding, blob3 guarantee; double1
    # attempts, double2 max(0, updated_at - dispatched_at), 0 when never dispatched.
    expected = sorted(
        (
            {
                "index1": j.binding,
                "blob1": j.state,
                "blob2": j.binding,
                "blob3": j.guarantee,
                "double1": float(j.attempts),
                "double2": _duration(j),
            }
            for j in jobs.values()
        ),
        key=lambda p: (p["blob2"], p["blob1"]),
    )
    assert [dict(p) for p in system.analytics.query(POINTS)] == expected
    assert jobs[failed].attempts == 2
    assert _duration(jobs[cancelled]) == 0.0
    assert {p["blob3"] for p in expected} == {"at-least-once", "at-most-once"}


async def test_the_cron_handler_sweeps_finished_jobs_older_than_seven_days(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    # The fixture's code schedule would run a Hello job every 10 minutes of the 7 days (about 1,000 jobs this
    # test does not look at, most of its time): paused, the week passes with only the rows below.
    paused = await create_client().pause_schedule(driver.producer_env, "hello-every-10-minutes")
    assert paused["paused"] is True
    old = await driver.enqueue("Hello", {"name": "old"})
    waiting = await driver.enqueue("Hello", {"name": "later"}, delay_ms=30 * DAY_MS)
    await clock.advance(100)
    assert (await driver.row(old) or {}).get("state") == "COMPLETED"

    # Half an hour past 7 days: the hourly crons so far all saw the row younger than the retention.
    await clock.advance(7 * DAY_MS + 30 * 60_000)
    young = await driver.enqueue("Hello", {"name": "young"})
    await clock.advance(100)
    assert await driver.row(old) is not None
    assert (await driver.row(young) or {}).get("state") == "COMPLETED"

    await system.trigger_scheduled(SCHEDULER)

    assert await driver.row(old) is None
    assert (await driver.row(young) or {}).get("state") == "COMPLETED"
    assert (await driver.row(waiting) or {}).get("state") == "SCHEDULED"  # only finished rows go
