"""The HTTP transport against the REST routes, every call mocked with respx.

Source: docs/design/scheduler-rpc.md §3.
"""

from __future__ import annotations

import datetime as dt
import json
import ssl
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import respx

from tsumugi_client import (
    EnqueueValidationError,
    ExponentialBackoff,
    JobNotFoundError,
    TsumugiClientError,
    WorkerClient,
    create_client,
)
from tsumugi_core.exceptions import InvalidFieldError

BASE = "https://tsumugi.example.com"
JOB_ID = "MAIL#0:abc"
ENCODED = "/api/jobs/MAIL%230%3Aabc"
# Loading CA certificates costs ~0.1 s per httpx client; the tests share one context (no real TLS happens).
TLS = ssl.create_default_context()

DETAIL: dict[str, Any] = {
    "id": JOB_ID,
    "binding": "MAIL",
    "state": "COMPLETED",
    "priority": 2,
    "attempts": 1,
    "max_attempts": 3,
    "concurrency_key": "k",
    "unique_key": None,
    "guarantee": "at-most-once",
    "created_at": 1,
    "updated_at": 2,
    "dispatched_at": None,
    "run_after": 1,
    "progress": None,
    "payload": "[1,2]",
    "result": '{"sent":true}',
    "retryable": False,
    "attempts_log": [],
}


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE, assert_all_called=False, assert_all_mocked=True) as mock:
        yield mock


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(verify=TLS) as made:
        yield made


@pytest.fixture
async def client(http: httpx.AsyncClient) -> WorkerClient:
    return create_client(base_url=BASE + "/", token="s3cret", http_client=http)


def body_of(route: respx.Route, index: int = -1) -> Any:
    return json.loads(route.calls[index].request.content)


class TestEnqueue:
    async def test_posts_every_option_as_camel_case_with_the_bearer_token(
        self, router: respx.MockRouter, client: WorkerClient
    ) -> None:
        route = router.post("/api/jobs").respond(201, json={"id": "MAIL#0:new"})
        job_id = await client.enqueue(
            None,
            binding="MAIL",
            payload={"to": ("a", "b")},
            priority=4,
            max_attempts=2,
            backoff=ExponentialBackoff(base_ms=10),
            timeout_ms=1000,
            run_at=50,
            guarantee="at-most-once",
            concurrency_key="c",
            unique_key="u",
            unique_for_ms=60_000,
            partition_key="p",
            expires_in_ms=5000,
        )
        assert job_id == "MAIL#0:new"
        request = route.calls.last.request
        assert request.headers["authorization"] == "Bearer s3cret"
        assert request.headers["content-type"] == "application/json"
        assert body_of(route) == {
            "binding": "MAIL",
            "payload": {"to": ["a", "b"]},
            "priority": 4,
            "maxAttempts": 2,
            "backoff": {"kind": "exponential", "baseMs": 10, "factor": 2, "maxMs": 3_600_000, "jitter": True},
            "timeoutMs": 1000,
            "runAt": 50,
            "guarantee": "at-most-once",
            "concurrencyKey": "c",
            "uniqueKey": "u",
            "uniqueForMs": 60_000,
            "partitionKey": "p",
            "expiresInMs": 5000,
        }

    async def test_env_is_not_needed_and_no_token_sends_no_header(self, router: respx.MockRouter) -> None:
        route = router.post("/api/jobs").respond(201, json={"id": "MAIL#0:new"})
        # Also the one test of a client-owned connection pool: made on first use, closed by the context.
        async with create_client(base_url=BASE) as anonymous:
            await anonymous.enqueue(None, binding="MAIL", payload=None)
        assert "authorization" not in route.calls.last.request.headers

    async def test_enqueue_many_posts_one_bulk_call_per_shard(
        self, router: respx.MockRouter, http: httpx.AsyncClient
    ) -> None:
        def answer(request: httpx.Request) -> httpx.Response:
            items = json.loads(request.content)["items"]
            return httpx.Response(
                201, json={"ids": [f"MAIL#{item['shard']}:{item['payload']}" for item in items]}
            )

        route = router.post("/api/jobs/bulk-enqueue").mock(side_effect=answer)
        sharded = create_client(base_url=BASE, bindings={"MAIL": {"shards": 2}}, http_client=http)
        keys = ["a", "b", "c", "d", "e", "f"]
        ids = await sharded.enqueue_many(
            None, [{"binding": "MAIL", "payload": k, "partition_key": k} for k in keys]
        )
        assert [job_id.split(":")[1] for job_id in ids] == keys
        bodies = [body_of(route, i) for i in range(route.call_count)]
        assert len(bodies) == len({item["shard"] for body in bodies for item in body["items"]})
        for body in bodies:
            assert set(body) == {"items"}
            assert len({item["shard"] for item in body["items"]}) == 1

    async def test_a_group_of_one_uses_the_single_route(
        self, router: respx.MockRouter, client: WorkerClient
    ) -> None:
        single = router.post("/api/jobs").respond(201, json={"id": "MAIL#0:x"})
        bulk = router.post("/api/jobs/bulk-enqueue").respond(201, json={"ids": ["SMS#0:y", "SMS#0:z"]})
        ids = await client.enqueue_many(
            None,
            [
                {"binding": "MAIL", "payload": 1},
                {"binding": "SMS", "payload": 2},
                {"binding": "SMS", "payload": 3},
            ],
        )
        assert ids == ["MAIL#0:x", "SMS#0:y", "SMS#0:z"]
        assert (single.call_count, bulk.call_count) == (1, 1)

    async def test_nothing_is_sent_for_an_invalid_item(
        self, router: respx.MockRouter, client: WorkerClient
    ) -> None:
        route = router.post("/api/jobs/bulk-enqueue").respond(201, json={"ids": []})
        items: list[Any] = [
            {"binding": "MAIL", "payload": 1},
            {"binding": "MAIL", "payload": 1, "priority": "high"},
        ]
        with pytest.raises(EnqueueValidationError) as caught:
            await client.enqueue_many(None, items)
        assert caught.value.field == "items[1].priority"
        assert route.call_count == 0

    @pytest.mark.parametrize(
        "answer",
        [
            httpx.Response(201, json={"ids": ["only-one"]}),
            httpx.Response(201, json=["MAIL#0:a", "MAIL#0:b"]),
            httpx.Response(201, text="created"),
        ],
    )
    async def test_a_malformed_bulk_answer_is_a_client_error(
        self, router: respx.MockRouter, client: WorkerClient, answer: httpx.Response
    ) -> None:
        router.post("/api/jobs/bulk-enqueue").mock(return_value=answer)
        with pytest.raises(TsumugiClientError, match="without 2 job ids"):
            await client.enqueue_many(
                None, [{"binding": "MAIL", "payload": 1}, {"binding": "MAIL", "payload": 2}]
            )


class TestEnqueueErrors:
    async def test_400_with_field_and_rule_is_a_validation_error(
        self, router: respx.MockRouter, client: WorkerClient
    ) -> None:
        router.post("/api/jobs").respond(
            400,
            json={
                "error": "binding is not a registered binding: MAIL",
                "field": "binding",
                "rule": "is not a registered binding: MAIL",
            },
        )
        with pytest.raises(EnqueueValidationError) as caught:
            await client.enqueue(None, binding="MAIL", payload=1)
        assert (caught.value.field, caught.value.rule) == ("binding", "is not a registered binding: MAIL")

    async def test_bulk_400_names_the_callers_item(
        self, router: respx.MockRouter, client: WorkerClient
    ) -> None:
        router.post("/api/jobs/bulk-enqueue").respond(
            400, json={"error": "items[1].shard must be 0", "field": "items[1].shard", "rule": "must be 0"}
        )
        items: list[Any] = [
            {"binding": "MAIL", "payload": 0},
            {"binding": "SMS", "payload": 1},
            {"binding": "MAIL", "payload": 2},
        ]
        with pytest.raises(EnqueueValidationError) as caught:
            await client.enqueue_many(None, items)
        assert caught.value.field == "items[2].shard"

    async def test_400_without_field_is_a_client_error(
        self, router: respx.MockRouter, client: WorkerClient
    ) -> None:
        router.post("/api/jobs").respond(400, json={"error": "body must be valid JSON"})
        with pytest.raises(TsumugiClientError) as caught:
            await client.enqueue(None, binding="MAIL", payload=1)
        assert (caught.value.status, caught.value.message) == (400, "body must be valid JSON")

    async def test_401_points_at_the_token(self, router: respx.MockRouter, client: WorkerClient) -> None:
        router.post("/api/jobs").respond(401, json={"error": "unauthorized"})
        with pytest.raises(TsumugiClientError) as caught:
            await client.enqueue(None, binding="MAIL", payload=1)
        assert caught.value.status == 401
        assert caught.value.message == "unauthorized (check the token given to the client)"

    @pytest.mark.parametrize("status", [500, 502, 503])
    async def test_5xx_carries_the_status_and_the_servers_text(
        self, router: respx.MockRouter, client: WorkerClient, status: int
    ) -> None:
        router.post("/api/jobs").respond(status, json={"error": "database temporarily unavailable"})
        with pytest.raises(TsumugiClientError) as caught:
            await client.enqueue(None, binding="MAIL", payload=1)
        assert (caught.value.status, caught.value.message) == (status, "database temporarily unavailable")

    async def test_5xx_with_a_plain_text_body(self, router: respx.MockRouter, client: WorkerClient) -> None:
        router.post("/api/jobs").respond(502, text="Bad gateway from upstream")
        with pytest.raises(TsumugiClientError, match="502: Bad gateway from upstream"):
            await client.enqueue(None, binding="MAIL", payload=1)

    async def test_plain_text_404_hints_at_missing_auth(
        self, router: respx.MockRouter, client: WorkerClient
    ) -> None:
        router.post("/api/jobs").respond(404, text="not found")
        with pytest.raises(TsumugiClientError, match="is auth configured on the scheduler") as caught:
            await client.enqueue(None, binding="MAIL", payload=1)
        assert caught.value.status == 404

    async def test_unreachable_scheduler_is_a_client_error_without_status(
        self, router: respx.MockRouter, client: WorkerClient
    ) -> None:
        router.post("/api/jobs").mock(side_effect=httpx.ConnectError("connection refused"))
        with pytest.raises(
            TsumugiClientError, match=r"could not reach the scheduler at https://tsumugi\.example\.com"
        ) as caught:
            await client.enqueue(None, binding="MAIL", payload=1)
        assert caught.value.status is None


class TestJobRoutes:
    async def test_get_percent_encodes_the_id_and_decodes_the_detail(
        self, router: respx.MockRouter, client: WorkerClient
    ) -> None:
        route = router.get(path__regex=r"^/api/jobs/[^/]+$").respond(200, json={"job": DETAIL})
        job = await client.get(None, JOB_ID)
        assert route.calls.last.request.url.raw_path == ENCODED.encode()
        assert route.calls.last.request.headers["authorization"] == "Bearer s3cret"
        assert job is not None
        assert (job.state, job.guarantee, job.result_value(), job.payload_value()) == (
            "COMPLETED",
            "at-most-once",
            {"sent": True},
            [1, 2],
        )
        assert (job.cancel_requested, job.timeout_ms) == (False, None)  # our additions default when absent

    async def test_get_json_404_is_none(self, router: respx.MockRouter, client: WorkerClient) -> None:
        router.get(path__regex=r"^/api/jobs/").respond(404, json={"error": "not found"})
        assert await client.get(None, JOB_ID) is None

    async def test_get_plain_404_is_an_error_not_a_missing_job(
        self, router: respx.MockRouter, client: WorkerClient
    ) -> None:
        router.get(path__regex=r"^/api/jobs/").respond(404, text="not found")
        with pytest.raises(TsumugiClientError) as caught:
            await client.get(None, JOB_ID)
        assert not isinstance(caught.value, JobNotFoundError)

    async def test_get_without_a_job_key_is_a_client_error(
        self, router: respx.MockRouter, client: WorkerClient
    ) -> None:
        router.get(path__regex=r"^/api/jobs/").respond(200, json={"jobs": []})
        with pytest.raises(TsumugiClientError, match="without a job"):
            await client.get(None, JOB_ID)

    @pytest.mark.parametrize("action", ["cancel", "retry"])
    async def test_mutations_post_to_the_encoded_id(
        self, router: respx.MockRouter, client: WorkerClient, action: str
    ) -> None:
        route = router.post(path__regex=rf"^/api/jobs/[^/]+/{action}$").respond(200, json={"ok": True})
        await getattr(client, action)(None, JOB_ID)
        request = route.calls.last.request
        assert request.url.raw_path == f"{ENCODED}/{action}".encode()
        assert request.content == b""

    async def test_cancel_returns_requested(self, router: respx.MockRouter, client: WorkerClient) -> None:
        router.post(path__regex=r"/cancel$").respond(200, json={"ok": True, "requested": True})
        assert (await client.cancel(None, JOB_ID)).requested is True

    async def test_reschedule_sends_its_camel_case_body(
        self, router: respx.MockRouter, client: WorkerClient
    ) -> None:
        route = router.post(path__regex=r"/reschedule$").respond(200, json={"ok": True})
        await client.reschedule(None, JOB_ID, delay_ms=1500, priority=-3)
        assert route.calls.last.request.url.raw_path == f"{ENCODED}/reschedule".encode()
        assert body_of(route) == {"delayMs": 1500, "priority": -3}

    async def test_reschedule_takes_a_datetime_or_a_timedelta(
        self, router: respx.MockRouter, client: WorkerClient
    ) -> None:
        route = router.post(path__regex=r"/reschedule$").respond(200, json={"ok": True})
        await client.reschedule(
            None, JOB_ID, run_at=dt.datetime(2026, 1, 1, 9, tzinfo=dt.timezone(dt.timedelta(hours=9)))
        )
        await client.reschedule(None, JOB_ID, delay_ms=dt.timedelta(minutes=2))
        assert [body_of(route, 0), body_of(route, 1)] == [{"runAt": 1767225600000}, {"delayMs": 120_000}]

    async def test_reschedule_refuses_a_naive_datetime_by_name_sending_nothing(
        self, router: respx.MockRouter, client: WorkerClient
    ) -> None:
        route = router.post(path__regex=r"/reschedule$").respond(200, json={"ok": True})
        with pytest.raises(InvalidFieldError, match="timezone-aware") as raised:
            await client.reschedule(None, JOB_ID, run_at=dt.datetime(2026, 1, 1))
        assert raised.value.field == "run_at"
        assert not route.called

    @pytest.mark.parametrize("action", ["cancel", "retry", "reschedule"])
    async def test_409_is_invalid_state(
        self, router: respx.MockRouter, client: WorkerClient, action: str
    ) -> None:
        router.post(path__regex=rf"/{action}$").respond(
            409, json={"ok": False, "reason": "invalid-state", "error": "not allowed in the current state"}
        )
        with pytest.raises(TsumugiClientError) as caught:
            await _mutate(client, action)
        assert (caught.value.status, caught.value.reason, caught.value.message) == (
            409,
            "invalid-state",
            "not allowed in the current state",
        )

    async def test_409_without_a_body_still_says_why(
        self, router: respx.MockRouter, client: WorkerClient
    ) -> None:
        router.post(path__regex=r"/retry$").respond(409)
        with pytest.raises(TsumugiClientError, match="409: not allowed in the current state"):
            await client.retry(None, JOB_ID)

    @pytest.mark.parametrize(
        ("status", "action"), [(410, "cancel"), (410, "retry"), (410, "reschedule"), (404, "retry")]
    )
    async def test_gone_or_json_404_is_job_not_found(
        self, router: respx.MockRouter, client: WorkerClient, status: int, action: str
    ) -> None:
        router.post(path__regex=rf"/{action}$").respond(
            status, json={"ok": False, "reason": "gone", "error": "job is no longer available"}
        )
        with pytest.raises(JobNotFoundError) as caught:
            await _mutate(client, action)
        assert (caught.value.status, caught.value.job_id) == (status, JOB_ID)

    async def test_a_200_refusal_body_is_honoured(
        self, router: respx.MockRouter, client: WorkerClient
    ) -> None:
        router.post(path__regex=r"/retry$").respond(200, json={"ok": False, "reason": "gone"})
        with pytest.raises(JobNotFoundError):
            await client.retry(None, JOB_ID)

    async def test_5xx_on_a_mutation(self, router: respx.MockRouter, client: WorkerClient) -> None:
        router.post(path__regex=r"/cancel$").respond(503, json={"error": "database temporarily unavailable"})
        with pytest.raises(TsumugiClientError) as caught:
            await client.cancel(None, JOB_ID)
        assert caught.value.status == 503
        assert not isinstance(caught.value, JobNotFoundError)


async def _mutate(client: WorkerClient, action: str) -> None:
    if action == "reschedule":
        await client.reschedule(None, JOB_ID, run_at=10)
    else:
        await getattr(client, action)(None, JOB_ID)


class TestConnectionOwnership:
    async def test_a_given_http_client_is_used_and_left_open(self, router: respx.MockRouter) -> None:
        route = router.post("/api/jobs").respond(201, json={"id": "MAIL#0:x"})
        async with httpx.AsyncClient(headers={"x-trace": "1"}, verify=TLS) as http:
            client = create_client(base_url=BASE, http_client=http)
            await client.enqueue(None, binding="MAIL", payload=1)
            await client.aclose()
            assert not http.is_closed
        assert route.calls.last.request.headers["x-trace"] == "1"
