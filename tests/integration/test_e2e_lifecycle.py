"""The attempt lifecycle as the seeds state it: RUNNING while the performer runs, silence from the start,
heartbeats that keep short timeouts alive, and an at-most-once job never run twice after a timeout
(ADR-0051, ADR-0052, ADR-0053)."""

from __future__ import annotations

from tests.integration.system_driver import SCHEDULER, Driver
from tsumugi_core.liveness import MAX_INVOCATION_MS
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime


async def test_a_timed_out_at_most_once_job_is_never_started_again(
    clock: VirtualClock, driver: Driver
) -> None:
    # Issue 10 item 1: 20 s of silent work, a 2 s timeout and a second attempt to spare.
    job_id = await driver.enqueue(
        "Slow", {"seconds": 20, "quiet": True}, guarantee="at-most-once", timeout_ms=2_000, max_attempts=2
    )
    await clock.advance(2_500)

    job = await driver.job(job_id)
    assert (job.state, job.attempts) == ("STALLED", 1)
    assert job.attempts_log[0].error == f"TsumugiTimeoutError: job timed out ({job_id}, 2000ms)"
    await clock.advance(60_000)  # attempt 1 finishes meanwhile; nothing else ever started
    job = await driver.job(job_id)
    assert (job.state, job.attempts, len(job.attempts_log)) == ("STALLED", 1, 1)
    (notice,) = await driver.notices_for("NotifyFailure", job_id)
    assert notice["payload"]["state"] == "STALLED"


async def test_a_manual_retry_of_a_stalled_at_most_once_job_waits_for_the_invocation_end(
    clock: VirtualClock, driver: Driver
) -> None:
    job_id = await driver.enqueue(
        "Slow", {"seconds": 20, "quiet": True}, guarantee="at-most-once", timeout_ms=2_000, max_attempts=2
    )
    await clock.advance(2_500)
    started_at = (await driver.job(job_id)).dispatched_at
    assert started_at is not None

    await driver.client.retry(driver.producer_env, job_id)
    job = await driver.job(job_id)
    # The claiming invocation may run until 15 minutes after the claim: no attempt starts before that.
    assert job.state == "SCHEDULED"
    hold = job.run_after
    assert started_at + MAX_INVOCATION_MS <= hold <= started_at + MAX_INVOCATION_MS + 100
    await clock.advance(hold - clock.now_ms() - 1)
    assert (await driver.job(job_id)).state == "SCHEDULED"

    await clock.advance(3_000)
    job = await driver.job(job_id)
    assert (job.state, job.attempts) == ("STALLED", 2)
    assert (job.attempts_log[0].started_at or 0) >= hold


async def test_a_quiet_slow_with_no_options_ends_stalled_not_retried(
    clock: VirtualClock, driver: Driver
) -> None:
    # Issue 26 item 9: the README's quiet Slow goes silent and shows the STALLED path; the example's on_enqueue
    # makes it at-most-once when the producer did not choose, so the default 60 s timeout ends it STALLED.
    job_id = await driver.enqueue("Slow", {"seconds": 120, "quiet": True})
    job = await driver.job(job_id)
    assert (job.guarantee, job.timeout_ms) == ("at-most-once", 60_000)
    await clock.advance(59_000)
    assert (await driver.job(job_id)).state == "RUNNING"

    await clock.advance(2_000)
    job = await driver.job(job_id)
    assert (job.state, job.attempts) == ("STALLED", 1)
    await clock.advance(120_000)  # the silent attempt finishes meanwhile; nothing retries it
    job = await driver.job(job_id)
    assert (job.state, len(job.attempts_log)) == ("STALLED", 1)
    (notice,) = await driver.notices_for("NotifyFailure", job_id)
    assert notice["payload"]["state"] == "STALLED"


async def test_every_job_is_running_while_its_performer_runs(clock: VirtualClock, driver: Driver) -> None:
    job_id = await driver.enqueue("Slow", {"seconds": 10})  # at-least-once
    await clock.advance(1_000)

    assert (await driver.job(job_id)).state == "RUNNING"
    row = await driver.row(job_id)
    assert row is not None
    assert row["state"] == "RUNNING"  # the read model too, so the dashboard never asks why it is not running

    await clock.advance(10_000)
    assert (await driver.job(job_id)).state == "COMPLETED"


async def test_silence_is_measured_from_the_start_of_execution(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    # Dispatched at 0 s, but the message reaches a consumer only at 12 s; the performer works 8 s quietly.
    # The repo's scheduler has reaper_grace_ms 5,000.
    job_id = await driver.enqueue("Slow", {"seconds": 8, "quiet": True}, timeout_ms=10_000)
    driver.lose_messages_of(job_id)
    created_at = (await driver.job(job_id)).created_at
    await clock.advance(created_at + 12_000 - clock.now_ms())
    late = {
        "jobId": job_id,
        "binding": "Slow",
        "attempt": 1,
        "payload": {"seconds": 8, "quiet": True},
        "timeoutMs": 10_000,
        "claimRequired": False,
        "maxAttempts": 3,
    }
    await system.env(SCHEDULER).TSUMUGI_QUEUE.send(late)
    # dispatch + timeout + grace = 15 s passes while it runs; start + timeout + grace = 27 s does not.
    await clock.advance(10_000)

    job = await driver.job(job_id)
    assert (job.state, job.attempts, job.result_value()) == ("COMPLETED", 1, 8)


async def test_a_job_with_a_short_timeout_is_kept_alive_by_heartbeats(
    clock: VirtualClock, driver: Driver
) -> None:
    # Slow heartbeats every second; its timeout is 2 s, under the 5 s the performer side used to wait.
    job_id = await driver.enqueue("Slow", {"seconds": 5}, timeout_ms=2_000, max_attempts=1)
    await clock.advance(6_000)

    job = await driver.job(job_id)
    assert (job.state, job.attempts, job.result_value()) == ("COMPLETED", 1, 5)
