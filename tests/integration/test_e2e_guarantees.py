"""Delivery guarantees: at-most-once under duplicate delivery, lost messages and the reaper."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import respx

from tests.integration.system_driver import MAIL_API_URL, SCHEDULER, Driver
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime

REAPED_AFTER_MS = 60_000 + 30_000 + 1  # default timeout + reaper grace


@pytest.fixture
def mail_api() -> Iterator[respx.Route]:
    with respx.mock(assert_all_called=False) as mock:
        yield mock.post(MAIL_API_URL).respond(200, json={"id": "m-1"})


async def test_an_at_most_once_job_runs_once_under_duplicate_delivery(
    system: LocalRuntime, clock: VirtualClock, driver: Driver, mail_api: respx.Route
) -> None:
    mail = {"to": "a@example.com", "subject": "hi"}
    job_id = await driver.enqueue("SendMail", mail, guarantee="at-most-once", delay_ms=1_000)
    duplicate = {
        "jobId": job_id,
        "binding": "SendMail",
        "attempt": 1,
        "payload": mail,
        "timeoutMs": 60_000,
        "claimRequired": True,
        "maxAttempts": 5,
    }
    # Visible at the instant the shard dispatches: both copies arrive in the same batch.
    await system.env(SCHEDULER).TSUMUGI_QUEUE.send(duplicate, delaySeconds=1)
    await clock.advance(1_100)

    job = await driver.job(job_id)
    assert (job.state, job.attempts) == ("COMPLETED", 1)
    assert mail_api.call_count == 1
    assert system.queues.pending("tsumugi") == []


async def test_a_lost_message_is_recovered_by_the_reaper(clock: VirtualClock, driver: Driver) -> None:
    driver.lose_messages_of(job_id := await driver.enqueue("Hello", {"name": "lost"}))
    await clock.advance(100)
    assert (await driver.job(job_id)).state == "QUEUED"  # dispatched, but the message vanished
    driver.restore_delivery()

    await clock.advance(REAPED_AFTER_MS)
    job = await driver.job(job_id)
    assert (job.state, job.attempts, job.result_value()) == ("COMPLETED", 2, "Hello, lost!")


async def test_an_at_most_once_job_that_started_and_went_silent_ends_stalled(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    job_id = await driver.enqueue("Hello", {"name": "x"}, guarantee="at-most-once")
    driver.lose_messages_of(job_id)
    await clock.advance(100)
    # A consumer claimed the attempt and died before reporting.
    name = job_id.split(":")[0]
    assert await system.env(SCHEDULER).JOB_SHARD.getByName(name).claim(name, job_id, 1) is True
    assert (await driver.job(job_id)).state == "RUNNING"

    await clock.advance(REAPED_AFTER_MS)
    assert (await driver.job(job_id)).state == "STALLED"
    (failure,) = await driver.notices_for("NotifyFailure", job_id)
    assert failure["payload"]["state"] == "STALLED"


async def test_an_at_most_once_job_whose_message_was_lost_before_any_claim_is_requeued(
    clock: VirtualClock, driver: Driver
) -> None:
    job_id = await driver.enqueue("Hello", {"name": "y"}, guarantee="at-most-once")
    driver.lose_messages_of(job_id)
    await clock.advance(100)
    driver.restore_delivery()
    await clock.advance(REAPED_AFTER_MS)
    # Never claimed means never started, so running it now cannot run it twice (original gap 12).
    assert (await driver.job(job_id)).state == "COMPLETED"
