"""Payload checks at enqueue on the whole local system: the example performers publish their payload types and
the scheduler refuses what they would refuse, through REST, the RPC entrypoint and the client (issue 11)."""

from __future__ import annotations

import pytest

from tests.integration.system_driver import Driver
from tsumugi_client import EnqueueValidationError
from tsumugi_dev.clock import VirtualClock

NAME_RULE = "must be a string, got an integer"


async def test_rest_refuses_a_payload_hello_would_refuse_and_stores_nothing(
    clock: VirtualClock, driver: Driver
) -> None:
    status, body = await driver.rest("POST", "/api/jobs", {"binding": "Hello", "payload": {"name": 5}})
    assert (status, body) == (
        400,
        {"error": f"payload.name {NAME_RULE}", "field": "payload.name", "rule": NAME_RULE},
    )
    status, body = await driver.rest(
        "POST", "/api/jobs", {"binding": "SendMail", "payload": {"to": "a@example.com"}}
    )
    assert (status, body["field"], body["rule"]) == (400, "payload.subject", "is required")
    status, body = await driver.rest("POST", "/api/jobs", {"binding": "Slow", "payload": {"seconds": "3"}})
    assert (status, body["field"]) == (400, "payload.seconds")
    await clock.advance(100)
    assert await driver.jobs_of("Hello") == []


async def test_the_rpc_entrypoint_refuses_naming_the_path(driver: Driver) -> None:
    with pytest.raises(Exception, match="EnqueueValidationError") as caught:
        await driver.producer_env.TSUMUGI.enqueue({"binding": "Hello", "payload": {"name": 5}})
    last_line = str(caught.value).rstrip().splitlines()[-1]
    assert last_line == f"tsumugi_core.options.EnqueueValidationError: payload.name {NAME_RULE}"


async def test_the_client_raises_the_typed_error_and_a_good_payload_runs(
    clock: VirtualClock, driver: Driver
) -> None:
    with pytest.raises(EnqueueValidationError) as caught:
        await driver.enqueue("Hello", {"name": 5})
    assert (caught.value.field, caught.value.rule) == ("payload.name", NAME_RULE)
    with pytest.raises(EnqueueValidationError) as unsafe:  # refused by the client itself, before sending
        await driver.enqueue("Boom", {"n": 2**64})
    assert unsafe.value.field == "payload.n"
    job_id = await driver.enqueue("Hello", {"name": "Ada"})
    await clock.advance(100)
    assert (await driver.job(job_id)).result_value() == "Hello, Ada!"


async def test_a_performer_with_no_declared_type_takes_any_payload(driver: Driver) -> None:
    for payload in (None, 5, "x", [1, {"name": 5}], {"name": 5}):
        assert await driver.enqueue("Boom", payload)
