"""The example Order performer (services/performers) on the whole system: charge, wait for the shipment event,
sleep, mail; its steps in the job's detail (ADR-0144 to ADR-0146)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import respx

from tests.integration.system_driver import Driver, example_configs
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.config import WorkerConfig
from tsumugi_dev.runtime import LocalRuntime

MAIL_API = "http://127.0.0.1:8788/mail"  # services/performers vars.MAIL_API_URL
ORDER = {"order_id": "order-42", "amount": 1200, "email": "a@example.com", "follow_up_after_s": 3_600}


@pytest.fixture
def system_configs() -> list[WorkerConfig]:
    """This module's subject is the example Order performer: the system runs this repository's Workers."""
    return example_configs()


@pytest.fixture
def mail_api() -> Iterator[respx.Route]:
    with respx.mock(assert_all_called=False) as mock:
        yield mock.post(MAIL_API).respond(202, json={"id": "m-1"})


async def test_an_order_waits_for_its_shipment_sleeps_and_mails_once(
    system: LocalRuntime, clock: VirtualClock, driver: Driver, mail_api: respx.Route
) -> None:
    job_id = await driver.enqueue("Order", ORDER)
    await clock.advance(1_000)
    waiting = await driver.job(job_id)
    assert waiting.state == "SLEEPING"
    assert [(s.name, s.state) for s in waiting.steps] == [("charge", "done"), ("event:shipped", "waiting")]
    status, why = await driver.rest("GET", f"/api/jobs/{job_id.replace('#', '%23')}/explain")
    assert status == 200
    # The wait's 7-day timeout is its wake time.
    assert why["explain"]["summary"].startswith(
        "the job is SLEEPING: waiting for event shipped/order-42 until in 6 d"
    )

    status, sent = await driver.rest(
        "POST", "/api/events", {"name": "shipped", "key": "order-42", "payload": {"tracking": "JP123"}}
    )
    assert (status, sent["delivered"]) == (202, 1)
    await clock.advance(1_000)
    assert (await driver.job(job_id)).state == "SLEEPING"  # now the hour before the follow-up mail
    assert mail_api.call_count == 0

    await clock.advance(3_600_000)
    done = await driver.job(job_id)
    assert done.state == "COMPLETED"
    assert done.result_value()["shipment"] == {"tracking": "JP123"}
    assert [s.name for s in done.steps] == ["charge", "event:shipped", "sleep", "email"]
    assert mail_api.call_count == 1
    status, detail = await driver.rest("GET", f"/api/jobs/{job_id.replace('#', '%23')}")
    assert status == 200
    assert [s["name"] for s in detail["job"]["steps"]] == ["charge", "event:shipped", "sleep", "email"]
    assert detail["job"]["steps"][0]["result"] == {"charge_id": "ch_order-42", "amount": 1200}


async def test_an_order_without_a_shipment_is_refunded_once(
    clock: VirtualClock, driver: Driver, mail_api: respx.Route
) -> None:
    job_id = await driver.enqueue("Order", {**ORDER, "order_id": "order-43", "ship_within_s": 600})
    await clock.advance(601_000)
    done = await driver.job(job_id)
    assert (done.state, done.result_value()["status"]) == ("COMPLETED", "refunded")
    assert [s.name for s in done.steps] == ["charge", "event:shipped", "refund"]
    assert mail_api.call_count == 0
