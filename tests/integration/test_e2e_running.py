"""A running job: heartbeats with progress, cancellation by request, per-key serialisation."""

from __future__ import annotations

import pytest

from tests.integration.system_driver import Driver
from tsumugi_dev.clock import VirtualClock


async def test_heartbeats_report_progress_and_a_cancel_request_stops_the_job(
    clock: VirtualClock, driver: Driver
) -> None:
    job_id = await driver.enqueue("Slow", {"seconds": 30})
    await clock.advance(6_000)  # heartbeats at 0 s and 5 s (one per 5 s gets through the throttle)

    running = await driver.job(job_id)
    assert running.state == "RUNNING"  # every job is RUNNING while its performer runs (ADR-0052)
    assert running.progress == pytest.approx(5 / 30)

    assert (await driver.client.cancel(driver.producer_env, job_id)).requested is True
    assert (await driver.job(job_id)).cancel_requested is True
    await clock.advance(5_000)  # the next heartbeat answers cancel_requested; Slow raises

    stopped = await driver.job(job_id)
    assert stopped.state == "CANCELLED"
    assert (stopped.attempts_log[0].error or "").startswith("SlowCancelledError: cancelled after 10s of 30s")
    (notice,) = await driver.notices_for("NotifySettled", job_id)
    assert notice["payload"]["state"] == "CANCELLED"


async def test_a_concurrency_key_runs_its_jobs_one_at_a_time(clock: VirtualClock, driver: Driver) -> None:
    first = await driver.enqueue("Slow", {"seconds": 3}, concurrency_key="user-1")
    second = await driver.enqueue("Slow", {"seconds": 3}, concurrency_key="user-1")
    other = await driver.enqueue("Slow", {"seconds": 3}, concurrency_key="user-2")
    await clock.advance(1_000)

    states = {j: (await driver.job(j)).state for j in (first, second, other)}
    # Same instant, same priority: which of the two goes first is the id order; only one may run.
    assert sorted([states[first], states[second]]) == ["RUNNING", "SCHEDULED"]
    assert states[other] == "RUNNING"
    runs_first, waits = (first, second) if states[first] == "RUNNING" else (second, first)
    await clock.advance(8_000)

    done_first, done_second = await driver.job(runs_first), await driver.job(waits)
    assert (done_first.state, done_second.state) == ("COMPLETED", "COMPLETED")
    assert done_second.dispatched_at is not None
    assert done_second.dispatched_at >= done_first.updated_at


async def test_a_unique_key_returns_the_existing_job(clock: VirtualClock, driver: Driver) -> None:
    first = await driver.enqueue("Hello", {"name": "a"}, unique_key="welcome-1")
    again = await driver.enqueue("Hello", {"name": "b"}, unique_key="welcome-1")
    other = await driver.enqueue("Hello", {"name": "c"}, unique_key="welcome-2")
    assert again == first
    assert other != first
    await clock.advance(100)
    assert (await driver.job(first)).result_value() == "Hello, a!"
