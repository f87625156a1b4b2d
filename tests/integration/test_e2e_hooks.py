"""Hooks: on_enqueue defaults (scheduler and client side) and on_settled notices for every final state."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import respx

from tests.integration.system_driver import MAIL_API_URL, PRODUCER, PRODUCER_TOKEN, SCHEDULER, Driver
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime


@pytest.fixture
def mail_api() -> Iterator[respx.Route]:
    with respx.mock(assert_all_called=False) as mock:
        yield mock.post(MAIL_API_URL).respond(200, json={"id": "m-1"})


async def test_the_schedulers_on_enqueue_fills_what_the_producer_left_out(
    clock: VirtualClock, driver: Driver, mail_api: respx.Route
) -> None:
    mail = {"to": "a@example.com", "subject": "hi"}
    defaulted = await driver.enqueue("SendMail", mail)
    chosen = await driver.enqueue("SendMail", mail, max_attempts=2)
    untouched = await driver.enqueue("Hello", {"name": "n"})
    assert (await driver.job(defaulted)).max_attempts == 5
    assert (await driver.job(chosen)).max_attempts == 2
    assert (await driver.job(untouched)).max_attempts == 3
    await clock.advance(100)
    assert (await driver.job(defaulted)).result_value() == {"status": 200, "answer": {"id": "m-1"}}
    assert mail_api.call_count == 2


async def test_the_clients_on_enqueue_applies_before_sending(system: LocalRuntime, driver: Driver) -> None:
    created = await system.fetch(
        PRODUCER,
        "http://producer/hello?name=p",
        method="POST",
        headers={"authorization": f"Bearer {PRODUCER_TOKEN}"},
    )
    from_producer = json.loads(await created.text())["id"]
    plain = await driver.enqueue("Hello", {"name": "q"})
    assert (await driver.job(from_producer)).priority == 5
    assert (await driver.job(plain)).priority == 0


async def test_on_settled_notices_every_final_state(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    completed = await driver.enqueue("Hello", {"name": "s"})
    failed = await driver.enqueue("Boom", None, max_attempts=1)
    cancelled = await driver.enqueue("Hello", {"name": "never"}, delay_ms=60_000)
    stalled = await driver.enqueue("Hello", {"name": "lost"}, guarantee="at-most-once")
    driver.lose_messages_of(stalled)
    await clock.advance(100)
    assert (await driver.client.cancel(driver.producer_env, cancelled)).requested is False
    name = stalled.split(":")[0]
    assert await system.env(SCHEDULER).JOB_SHARD.getByName(name).claim(name, stalled, 1) is True
    await clock.advance(91_000)

    states = {}
    for job_id in (completed, failed, cancelled, stalled):
        (notice,) = await driver.notices_for("NotifySettled", job_id)
        assert notice["state"] == "COMPLETED"  # the notice job itself ran
        states[job_id] = (notice["payload"]["state"], notice["payload"]["result"])
    assert states == {
        completed: ("COMPLETED", "Hello, s!"),
        failed: ("FAILED", None),
        cancelled: ("CANCELLED", None),
        stalled: ("STALLED", None),
    }
    # Notice jobs are not notified about themselves, and only failures reach NotifyFailure.
    assert [n["payload"]["job_id"] for n in await driver.jobs_payloads("NotifyFailure")] == [failed, stalled]


async def test_a_failed_notice_job_reaches_on_failure_unless_it_is_on_failures_own(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    # Payloads the notice performers cannot decode, stored straight in their shards (enqueue would refuse
    # them, ADR-0075): the jobs fail at once (not retryable).
    shards = system.env(SCHEDULER).JOB_SHARD
    item = {"payload": {"not": "a notice"}, "maxAttempts": 1}
    (settled_job,) = await shards.getByName("NotifySettled#0").enqueue_many(
        "NotifySettled#0", [{"binding": "NotifySettled", **item}]
    )
    (failure_job,) = await shards.getByName("NotifyFailure#0").enqueue_many(
        "NotifyFailure#0", [{"binding": "NotifyFailure", **item}]
    )
    await clock.advance(1_000)
    assert (await driver.job(settled_job)).state == "FAILED"
    assert (await driver.job(failure_job)).state == "FAILED"

    # Seed: only the on_failure binding's own failures are not sent to it; on_settled skips both bindings' jobs.
    (notice,) = await driver.notices_for("NotifyFailure", settled_job)
    assert (notice["state"], notice["payload"]["binding"], notice["payload"]["state"]) == (
        "COMPLETED",
        "NotifySettled",
        "FAILED",
    )
    assert await driver.notices_for("NotifyFailure", failure_job) == []
    assert await driver.notices_for("NotifySettled", settled_job) == []
    assert await driver.notices_for("NotifySettled", failure_job) == []
