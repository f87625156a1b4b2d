"""`AsyncTsumugiClient.enqueue` calls of one event-loop turn go as one bulk call per shard (ADR-0164): each
caller still gets its own id, its own validation error, and returns only once its call has answered."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import respx

from tests.unit.client.http_harness import TLS, TOKEN, Clock
from tsumugi_client import AsyncJob, AsyncTsumugiClient, AuthError, EnqueueValidationError, UnavailableError
from tsumugi_core.sharding import resolve_shard
from tsumugi_core.testing import SequentialIds


def items_of(request: httpx.Request) -> list[dict[str, Any]]:
    body: dict[str, Any] = json.loads(request.content)
    return body.get("items", [body])


def stored_ids(request: httpx.Request) -> httpx.Response:
    """The scheduler storing every item under its client-made id."""
    ids = [item["id"] for item in items_of(request)]
    if request.url.path.endswith("bulk-enqueue"):
        return httpx.Response(201, json={"ids": ids})
    return httpx.Response(201, json={"id": ids[0]})


@pytest.fixture
async def client() -> AsyncIterator[AsyncTsumugiClient]:
    clock = Clock()
    http = httpx.AsyncClient(verify=TLS)
    made = AsyncTsumugiClient(
        "https://tsumugi.example.com",
        token=TOKEN,
        bindings={"Hello": {"shards": 1}, "SMS": {"shards": 2}},
        ids=SequentialIds(),
        clock=clock,
        sleep=clock.asleep,
        http_client=http,
    )
    try:
        yield made
    finally:
        await http.aclose()


async def test_sixteen_enqueues_in_flight_are_one_bulk_call_and_each_caller_gets_its_own_id(
    client: AsyncTsumugiClient, api: respx.MockRouter
) -> None:
    bulk = api.post("/api/jobs/bulk-enqueue").mock(side_effect=stored_ids)
    single = api.post("/api/jobs").mock(side_effect=stored_ids)
    jobs = await asyncio.gather(*(client.enqueue("Hello", {"n": i}) for i in range(16)))
    assert (bulk.call_count, single.call_count) == (1, 0)
    sent = items_of(bulk.calls.last.request)
    assert [item["payload"] for item in sent] == [{"n": i} for i in range(16)]  # in the callers' order
    assert [job.id for job in jobs] == [item["id"] for item in sent]
    assert len({job.id for job in jobs}) == 16


async def test_a_semaphore_of_sixteen_sends_batches_of_sixteen(
    client: AsyncTsumugiClient, api: respx.MockRouter
) -> None:
    bulk = api.post("/api/jobs/bulk-enqueue").mock(side_effect=stored_ids)
    gate = asyncio.Semaphore(16)

    async def one(i: int) -> str:
        async with gate:
            return (await client.enqueue("Hello", i)).id

    ids = await asyncio.gather(*(one(i) for i in range(64)))
    assert [len(items_of(call.request)) for call in bulk.calls] == [16, 16, 16, 16]
    assert len(set(ids)) == 64


async def test_enqueues_awaited_one_after_the_other_are_not_merged(
    client: AsyncTsumugiClient, api: respx.MockRouter
) -> None:
    single = api.post("/api/jobs").mock(side_effect=stored_ids)
    for i in range(3):
        await client.enqueue("Hello", i)
    assert single.call_count == 3


async def test_items_of_two_shards_go_in_one_call_per_shard(
    client: AsyncTsumugiClient, api: respx.MockRouter
) -> None:
    bulk = api.post("/api/jobs/bulk-enqueue").mock(side_effect=stored_ids)
    keys = ["user-1", "user-2"] * 4
    jobs = await asyncio.gather(*(client.enqueue("SMS", i, partition_key=k) for i, k in enumerate(keys)))
    assert bulk.call_count == 2
    assert {job.id.split(":")[0] for job in jobs} == {"SMS#0", "SMS#1"}


async def test_an_item_the_scheduler_refuses_fails_its_caller_alone_and_the_others_are_stored_once(
    client: AsyncTsumugiClient, api: respx.MockRouter
) -> None:
    stored: dict[str, Any] = {}

    def scheduler(request: httpx.Request) -> httpx.Response:
        items = items_of(request)
        for index, item in enumerate(items):
            if item["payload"] == "bad":  # the performer's payload type refuses it: nothing is stored
                field = f"items[{index}].payload"
                return httpx.Response(400, json={"error": f"{field} x", "field": field, "rule": "x"})
        for item in items:
            stored.setdefault(item["id"], item["payload"])
        return stored_ids(request)

    api.post("/api/jobs/bulk-enqueue").mock(side_effect=scheduler)
    api.post("/api/jobs").mock(side_effect=scheduler)
    outcomes = await asyncio.gather(
        *(client.enqueue("Hello", p) for p in ["a", "bad", "c"]), return_exceptions=True
    )
    error = outcomes[1]
    assert isinstance(error, EnqueueValidationError)
    assert (error.field, error.rule) == ("payload", "x")  # named as a lone enqueue names it
    first, third = outcomes[0], outcomes[2]
    assert not isinstance(first, BaseException)
    assert not isinstance(third, BaseException)
    assert stored == {first.id: "a", third.id: "c"}


async def test_a_failure_of_the_whole_call_is_every_callers_and_is_sent_once(
    client: AsyncTsumugiClient, api: respx.MockRouter
) -> None:
    bulk = api.post("/api/jobs/bulk-enqueue").respond(401, json={"error": "unauthorized"})
    single = api.post("/api/jobs")
    outcomes = await asyncio.gather(*(client.enqueue("Hello", i) for i in range(4)), return_exceptions=True)
    assert all(isinstance(outcome, AuthError) for outcome in outcomes)
    assert (bulk.call_count, single.call_count) == (1, 0)


async def test_a_caller_returns_only_once_its_call_has_answered(
    client: AsyncTsumugiClient, api: respx.MockRouter
) -> None:
    answered = asyncio.Event()
    released = asyncio.Event()

    async def slow(request: httpx.Request) -> httpx.Response:
        answered.set()
        await released.wait()
        return stored_ids(request)

    api.post("/api/jobs/bulk-enqueue").mock(side_effect=slow)
    calls = asyncio.gather(client.enqueue("Hello", 1), client.enqueue("Hello", 2))
    await answered.wait()
    assert not calls.done()
    released.set()
    assert len(await calls) == 2


async def test_a_failed_call_to_one_shard_fails_only_its_callers(
    client: AsyncTsumugiClient, api: respx.MockRouter
) -> None:
    def scheduler(request: httpx.Request) -> httpx.Response:
        if items_of(request)[0]["id"].startswith(f"SMS#{resolve_shard('SMS', 2, 'down')}:"):
            return httpx.Response(503, json={"error": "unavailable"})
        return stored_ids(request)

    api.post("/api/jobs/bulk-enqueue").mock(side_effect=scheduler)
    keys = ["up", "down"] * 3
    outcomes = await asyncio.gather(
        *(client.enqueue("SMS", i, partition_key=k) for i, k in enumerate(keys)), return_exceptions=True
    )
    assert [isinstance(o, UnavailableError) for o in outcomes] == [False, True] * 3
    assert all(isinstance(o, AsyncJob) for o in outcomes[::2])


async def test_more_than_500_items_of_one_shard_are_calls_of_at_most_500(
    client: AsyncTsumugiClient, api: respx.MockRouter
) -> None:
    bulk = api.post("/api/jobs/bulk-enqueue").mock(side_effect=stored_ids)
    single = api.post("/api/jobs").mock(side_effect=stored_ids)
    jobs = await asyncio.gather(*(client.enqueue("Hello", i) for i in range(501)))
    assert [len(items_of(call.request)) for call in bulk.calls] == [500]
    assert single.call_count == 1
    assert len({job.id for job in jobs}) == 501
