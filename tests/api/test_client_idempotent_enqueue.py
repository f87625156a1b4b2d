"""The HTTP client against the real REST app (issue 16): a client-made job id makes a repeated enqueue find
the job the first try stored, through the scheduler's routes and shards, not a second job.

`AsyncTsumugiClient` talks to the app in-process (httpx's ASGI transport); `LosesFirstAnswer` lets the first
enqueue reach the app and store its job, then breaks the connection before the answer arrives, as a proxy or a
network can."""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.api_world import TOKEN, World, with_env
from tsumugi_client import AsyncTsumugiClient, RetryPolicy
from tsumugi_core.sharding import resolve_shard


class LosesFirstAnswer(httpx.AsyncBaseTransport):
    """Forwards every request to ``inner``; the first POST's answer is dropped after the app handled it."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.posts = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.method == "POST":
            self.posts += 1
            if self.posts == 1:
                await response.aclose()
                raise httpx.ReadError("connection reset after the request was handled", request=request)
        return response


async def _no_sleep(seconds: float) -> None:
    return None


def _client(world: World, transport: httpx.AsyncBaseTransport, **settings: Any) -> AsyncTsumugiClient:
    http = httpx.AsyncClient(transport=transport)
    return AsyncTsumugiClient(
        "http://scheduler.test", token=TOKEN, http_client=http, sleep=_no_sleep, **settings
    )


async def test_a_retried_enqueue_that_had_arrived_finds_its_job_and_makes_no_second(world: World) -> None:
    transport = LosesFirstAnswer(httpx.ASGITransport(app=with_env(world.app, world.env)))
    client = _client(world, transport)
    try:
        job = await client.enqueue("MAIL", {"to": "a"}, priority=3)
    finally:
        await client.aclose()
    assert transport.posts == 2
    await world.tick_and_project()
    status, listing = await world.request("GET", "/api/jobs?binding=MAIL")
    assert status == 200
    assert [row["id"] for row in listing["jobs"]] == [job.id]
    assert job.id.startswith("MAIL#0:")


async def test_a_retried_batch_that_had_arrived_stores_each_item_once_on_its_routed_shard(
    world: World,
) -> None:
    transport = LosesFirstAnswer(httpx.ASGITransport(app=with_env(world.app, world.env)))
    client = _client(world, transport)
    try:
        jobs = await client.enqueue_many(
            [{"binding": "SMS", "payload": n, "partition_key": f"user-{n}"} for n in range(6)]
        )
    finally:
        await client.aclose()
    await world.tick_and_project()
    _, listing = await world.request("GET", "/api/jobs?binding=SMS&limit=100")
    assert sorted(row["id"] for row in listing["jobs"]) == sorted(job.id for job in jobs)
    assert listing["total"] == 6
    for n, job in enumerate(jobs):  # the client learnt SMS's 2 shards from GET /api/bindings
        assert job.id.startswith(f"SMS#{resolve_shard('SMS', 2, f'user-{n}')}:")


async def test_the_same_client_made_id_twice_answers_the_same_job(world: World) -> None:
    item = {"binding": "MAIL", "payload": 1, "id": "MAIL#0:clientmade0001"}
    first = await world.request("POST", "/api/jobs", item)
    again = await world.request("POST", "/api/jobs", {**item, "payload": 2})
    assert first == again == (201, {"id": "MAIL#0:clientmade0001"})
    status, detail = await world.request("GET", "/api/jobs/MAIL%230%3Aclientmade0001")
    assert (status, detail["job"]["payload"]) == (200, "1")


async def test_without_lost_answers_nothing_is_retried(world: World) -> None:
    client = _client(
        world, httpx.ASGITransport(app=with_env(world.app, world.env)), retry=RetryPolicy(attempts=1)
    )
    try:
        job = await client.enqueue("MAIL", {})
        assert (await client.get(job.id)) is not None
    finally:
        await client.aclose()
