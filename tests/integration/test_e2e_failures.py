"""Failing jobs: retries with backoff, FAILED, the failure notice, and timeouts."""

from __future__ import annotations

import json

import pytest

from tests.integration.system_driver import SCHEDULER, Driver
from tsumugi_client import EnqueueValidationError
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime


async def test_boom_retries_with_backoff_ends_failed_and_notifies(
    clock: VirtualClock, driver: Driver
) -> None:
    job_id = await driver.enqueue("Boom", None)
    await clock.advance(10_000)

    job = await driver.job(job_id)
    assert (job.state, job.attempts, job.max_attempts) == ("FAILED", 3, 3)
    log = sorted(job.attempts_log, key=lambda a: a.attempt)
    assert [a.attempt for a in log] == [1, 2, 3]
    assert all(a.error is not None and a.error.startswith("RuntimeError: intentional failure") for a in log)
    # Exponential backoff with equal jitter: 500..1000 ms before the 2nd try, 1000..2000 ms before the 3rd.
    gaps = [log[i + 1].started_at - log[i].finished_at for i in range(2)]  # type: ignore[operator]
    assert 500 <= gaps[0] <= 1000
    assert 1000 <= gaps[1] <= 2000

    (notice,) = await driver.notices_for("NotifyFailure", job_id)
    assert notice["payload"]["state"] == "FAILED"
    assert (notice["payload"]["attempts"], notice["payload"]["max_attempts"]) == (3, 3)
    assert notice["payload"]["error"].startswith("RuntimeError: intentional failure")
    assert notice["state"] == "COMPLETED"
    assert json.loads(notice["result"]) == f"FAILED {job_id} (3/3): RuntimeError: intentional failure"


async def test_an_attempt_past_its_timeout_fails_with_the_timeout_error(
    clock: VirtualClock, driver: Driver
) -> None:
    # A quiet Slow never heartbeats: its 2 s timeout runs out.
    job_id = await driver.enqueue(
        "Slow", {"seconds": 6, "quiet": True}, timeout_ms=2_000, max_attempts=1, guarantee="at-least-once"
    )
    await clock.advance(2_500)

    job = await driver.job(job_id)
    assert job.state == "FAILED"
    assert job.attempts_log[0].error == f"TsumugiTimeoutError: job timed out ({job_id}, 2000ms)"
    await clock.advance(10_000)  # the abandoned attempt finishes later; its late report changes nothing
    assert (await driver.job(job_id)).state == "FAILED"


async def test_a_payload_that_does_not_fit_fails_the_job_at_once(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    # Enqueue refuses it now (ADR-0075); one stored past that check (straight to its shard, or while a
    # redeployed performer's stricter schema was not yet fetched) still fails at the performer, at once.
    with pytest.raises(EnqueueValidationError):
        await driver.enqueue("Hello", {"nom": "Ada"})
    shard = system.env(SCHEDULER).JOB_SHARD.getByName("Hello#0")
    (job_id,) = await shard.enqueue_many("Hello#0", [{"binding": "Hello", "payload": {"nom": "Ada"}}])
    await clock.advance(100)
    job = await driver.job(job_id)
    assert (job.state, job.attempts, job.max_attempts) == ("FAILED", 1, 3)
    error = job.attempts_log[0].error or ""
    assert error.startswith(
        "InvalidPayloadError: invalid payload for Hello: Object missing required field `name`"
    )


async def test_a_performer_nobody_binds_fails_with_performer_not_found(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    # Straight to a shard: the RPC entrypoint itself refuses bindings that are not registered.
    shard = system.env(SCHEDULER).JOB_SHARD.getByName("Ghost#0")
    (job_id,) = await shard.enqueue_many("Ghost#0", [{"binding": "Ghost", "payload": None, "maxAttempts": 1}])
    await clock.advance(100)
    job = await driver.job(job_id)
    assert job.state == "FAILED"
    assert job.attempts_log[0].error == "performer not found: Ghost (export it, or add a service binding)"
