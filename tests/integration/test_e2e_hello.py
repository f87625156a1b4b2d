"""A Hello job end to end: enqueued by the producer Worker or over HTTP, run by the performer Worker, read back."""

from __future__ import annotations

import json

import httpx
import pytest
import respx

from tests.integration.system_driver import PRODUCER, PRODUCER_TOKEN, SCHEDULER, TOKEN, Driver, quoted
from tsumugi_client import AsyncTsumugiClient, EnqueueValidationError
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime


async def test_hello_from_the_producer_ends_completed_with_its_result(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    producer = {"authorization": f"Bearer {PRODUCER_TOKEN}"}
    created = await system.fetch(PRODUCER, "http://producer/hello?name=Ada", method="POST", headers=producer)
    assert created.status == 201
    job_id = json.loads(await created.text())["id"]
    assert job_id.startswith("Hello#0:")

    await clock.advance(10)

    read = await system.fetch(PRODUCER, f"http://producer/jobs/{quoted(job_id)}", headers=producer)
    assert json.loads(await read.text()) == {"state": "COMPLETED", "result": "Hello, Ada!"}
    row = await driver.row(job_id)
    assert row is not None
    assert (row["state"], row["result"], row["attempts"]) == ("COMPLETED", '"Hello, Ada!"', 1)


async def test_hello_over_http_is_created_read_back_and_listed(clock: VirtualClock, driver: Driver) -> None:
    status, created = await driver.rest("POST", "/api/jobs", {"binding": "Hello", "payload": {"name": "Bo"}})
    assert status == 201
    await clock.advance(10)

    status, body = await driver.rest("GET", f"/api/jobs/{quoted(created['id'])}")
    assert status == 200
    job = body["job"]
    assert (job["state"], json.loads(job["result"]), job["attempts_log"][0]["state"]) == (
        "COMPLETED",
        "Hello, Bo!",
        "COMPLETED",
    )
    # Read back by its percent-encoded id (a raw "#" would start the URL's fragment, on workerd as here).
    assert (await driver.rest("GET", f"/api/jobs/{quoted(created['id'])}"))[1]["job"]["id"] == created["id"]
    status, listing = await driver.rest("GET", "/api/jobs?binding=Hello")
    assert status == 200
    assert [j["id"] for j in listing["jobs"]] == [created["id"]]
    assert listing["total"] == 1


async def test_http_refuses_a_bad_token_and_names_an_invalid_field(driver: Driver) -> None:
    assert (await driver.rest("GET", "/api/jobs", token="wrong"))[0] == 401
    assert (await driver.rest("GET", "/api/jobs", token=None))[0] == 401
    status, body = await driver.rest(
        "POST", "/api/jobs", {"binding": "Hello", "payload": {}, "maxAttempts": 0}
    )
    assert (status, body["field"], body["rule"]) == (400, "maxAttempts", "must be at least 1")  # as sent
    status, body = await driver.rest("POST", "/api/jobs", {"binding": "Nope", "payload": {}})
    assert (status, body["field"]) == (400, "binding")
    status, body = await driver.rest("GET", "/api/jobs/not-an-id")  # ADR-0059, with a hint about `#`
    assert (status, body["error"]) == (404, "not found")
    assert "percent-encode the id" in body["detail"]
    assert await driver.rest("POST", "/api/jobs/not-an-id/retry") == (400, {"error": "invalid job id"})
    status, body = await driver.rest("GET", f"/api/jobs/{quoted('Hello#0:missing')}")
    assert (status, body["error"]) == (404, "not found")


async def test_the_http_client_enqueues_and_reads_back_through_the_rest_api(
    system: LocalRuntime, clock: VirtualClock
) -> None:
    async def to_scheduler(request: httpx.Request) -> httpx.Response:
        answer = await system.fetch(
            SCHEDULER,
            str(request.url),
            method=request.method,
            headers=dict(request.headers),
            body=request.content or None,
        )
        return httpx.Response(
            answer.status, content=await answer.bytes(), headers=list(answer.headers.items())
        )

    with respx.mock(base_url="http://scheduler.test") as mock:
        mock.route().mock(side_effect=to_scheduler)
        async with AsyncTsumugiClient("http://scheduler.test", token=TOKEN) as client:
            handle = await client.enqueue("Hello", {"name": "Cy"}, priority=3)
            with pytest.raises(EnqueueValidationError) as refused:
                await client.enqueue("Hello", {}, timeout_ms=0)
            await clock.advance(10)
            job = await client.get(handle.id)
    assert job is not None
    assert (job.state, job.priority, job.result_value()) == ("COMPLETED", 3, "Hello, Cy!")
    assert (refused.value.field, refused.value.rule) == ("timeout_ms", "must be at least 1")


async def test_the_dashboard_is_served_at_the_root_without_a_token(driver: Driver) -> None:
    status, page = await driver.rest("GET", "/", token=None)
    assert status == 200
    assert page.lower().startswith("<!doctype html>")
    assert 'window.__TSUMUGI__={"tokenCookie":"tsumugi_token"}' in page
    assert (await driver.rest("GET", "/jobs/anything", token=None))[0] == 200  # client-side routes
    assert await driver.rest("POST", "/", token=None) == (404, "not found")
    assert (await driver.rest("GET", "/api/nope", token=None))[0] == 401
