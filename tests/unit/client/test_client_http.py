"""The HTTP client's job routes against the REST API, every call mocked with respx (the answers' edge cases).

Source: docs/design/scheduler-rpc.md §3. Enqueue, retries and the shared behaviour of both HTTP clients are in
test_http_clients.py.
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
    AsyncTsumugiClient,
    JobNotFoundError,
    RetryPolicy,
    TsumugiClientError,
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
async def client(http: httpx.AsyncClient) -> AsyncTsumugiClient:
    return AsyncTsumugiClient(BASE + "/", token="s3cret", http_client=http, retry=RetryPolicy(attempts=1))


def body_of(route: respx.Route, index: int = -1) -> Any:
    return json.loads(route.calls[index].request.content)


class TestJobRoutes:
    async def test_get_percent_encodes_the_id_and_decodes_the_detail(
        self, router: respx.MockRouter, client: AsyncTsumugiClient
    ) -> None:
        route = router.get(path__regex=r"^/api/jobs/[^/]+$").respond(200, json={"job": DETAIL})
        job = await client.get(JOB_ID)
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

    async def test_get_json_404_is_none(self, router: respx.MockRouter, client: AsyncTsumugiClient) -> None:
        router.get(path__regex=r"^/api/jobs/").respond(404, json={"error": "not found"})
        assert await client.get(JOB_ID) is None

    async def test_get_plain_404_is_an_error_not_a_missing_job(
        self, router: respx.MockRouter, client: AsyncTsumugiClient
    ) -> None:
        router.get(path__regex=r"^/api/jobs/").respond(404, text="not found")
        with pytest.raises(TsumugiClientError) as caught:
            await client.get(JOB_ID)
        assert not isinstance(caught.value, JobNotFoundError)

    async def test_get_without_a_job_key_is_a_client_error(
        self, router: respx.MockRouter, client: AsyncTsumugiClient
    ) -> None:
        router.get(path__regex=r"^/api/jobs/").respond(200, json={"jobs": []})
        with pytest.raises(TsumugiClientError, match="without a job"):
            await client.get(JOB_ID)

    @pytest.mark.parametrize("action", ["cancel", "retry"])
    async def test_mutations_post_to_the_encoded_id(
        self, router: respx.MockRouter, client: AsyncTsumugiClient, action: str
    ) -> None:
        route = router.post(path__regex=rf"^/api/jobs/[^/]+/{action}$").respond(200, json={"ok": True})
        await getattr(client, action)(JOB_ID)
        request = route.calls.last.request
        assert request.url.raw_path == f"{ENCODED}/{action}".encode()
        assert request.content == b""

    async def test_cancel_returns_requested(
        self, router: respx.MockRouter, client: AsyncTsumugiClient
    ) -> None:
        router.post(path__regex=r"/cancel$").respond(200, json={"ok": True, "requested": True})
        assert (await client.cancel(JOB_ID)).requested is True

    async def test_reschedule_sends_its_camel_case_body(
        self, router: respx.MockRouter, client: AsyncTsumugiClient
    ) -> None:
        route = router.post(path__regex=r"/reschedule$").respond(200, json={"ok": True})
        await client.reschedule(JOB_ID, delay_ms=1500, priority=-3)
        assert route.calls.last.request.url.raw_path == f"{ENCODED}/reschedule".encode()
        assert body_of(route) == {"delayMs": 1500, "priority": -3}

    async def test_reschedule_takes_a_datetime_or_a_timedelta(
        self, router: respx.MockRouter, client: AsyncTsumugiClient
    ) -> None:
        route = router.post(path__regex=r"/reschedule$").respond(200, json={"ok": True})
        await client.reschedule(
            JOB_ID, run_at=dt.datetime(2026, 1, 1, 9, tzinfo=dt.timezone(dt.timedelta(hours=9)))
        )
        await client.reschedule(JOB_ID, delay_ms=dt.timedelta(minutes=2))
        assert [body_of(route, 0), body_of(route, 1)] == [{"runAt": 1767225600000}, {"delayMs": 120_000}]

    async def test_reschedule_refuses_a_naive_datetime_by_name_sending_nothing(
        self, router: respx.MockRouter, client: AsyncTsumugiClient
    ) -> None:
        route = router.post(path__regex=r"/reschedule$").respond(200, json={"ok": True})
        with pytest.raises(InvalidFieldError, match="timezone-aware") as raised:
            await client.reschedule(JOB_ID, run_at=dt.datetime(2026, 1, 1))
        assert raised.value.field == "run_at"
        assert not route.called

    @pytest.mark.parametrize("action", ["cancel", "retry", "reschedule"])
    async def test_409_is_invalid_state(
        self, router: respx.MockRouter, client: AsyncTsumugiClient, action: str
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
        self, router: respx.MockRouter, client: AsyncTsumugiClient
    ) -> None:
        router.post(path__regex=r"/retry$").respond(409)
        with pytest.raises(TsumugiClientError, match="409: not allowed in the current state"):
            await client.retry(JOB_ID)

    @pytest.mark.parametrize(
        ("status", "action"), [(410, "cancel"), (410, "retry"), (410, "reschedule"), (404, "retry")]
    )
    async def test_gone_or_json_404_is_job_not_found(
        self, router: respx.MockRouter, client: AsyncTsumugiClient, status: int, action: str
    ) -> None:
        router.post(path__regex=rf"/{action}$").respond(
            status, json={"ok": False, "reason": "gone", "error": "job is no longer available"}
        )
        with pytest.raises(JobNotFoundError) as caught:
            await _mutate(client, action)
        assert (caught.value.status, caught.value.job_id) == (status, JOB_ID)

    async def test_a_200_refusal_body_is_honoured(
        self, router: respx.MockRouter, client: AsyncTsumugiClient
    ) -> None:
        router.post(path__regex=r"/retry$").respond(200, json={"ok": False, "reason": "gone"})
        with pytest.raises(JobNotFoundError):
            await client.retry(JOB_ID)

    async def test_5xx_on_a_mutation(self, router: respx.MockRouter, client: AsyncTsumugiClient) -> None:
        router.post(path__regex=r"/cancel$").respond(503, json={"error": "database temporarily unavailable"})
        with pytest.raises(TsumugiClientError) as caught:
            await client.cancel(JOB_ID)
        assert caught.value.status == 503
        assert not isinstance(caught.value, JobNotFoundError)


async def _mutate(client: AsyncTsumugiClient, action: str) -> None:
    if action == "reschedule":
        await client.reschedule(JOB_ID, run_at=10)
    else:
        await getattr(client, action)(JOB_ID)
