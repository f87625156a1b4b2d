"""``send_event`` on the HTTP clients (ADR-0146): the request, the answer, local checks and retries."""

from __future__ import annotations

import json

import httpx
import pytest
import respx

from tests.unit.client.http_harness import Harness
from tsumugi_client import EnqueueValidationError, EventSent


async def test_send_event_posts_the_event_and_reads_the_answer(h: Harness, api: respx.MockRouter) -> None:
    route = api.post("/api/events").respond(202, json={"id": "e-1", "delivered": 3, "kept_until": 99})
    sent = await h(h.client().send_event("shipped", key="order-42", payload={"carrier": "x"}))
    assert sent == EventSent(id="e-1", delivered=3, kept_until=99)
    assert json.loads(route.calls.last.request.content) == {
        "name": "shipped",
        "key": "order-42",
        "payload": {"carrier": "x"},
    }


async def test_a_bad_key_is_refused_before_anything_is_sent(h: Harness, api: respx.MockRouter) -> None:
    route = api.post("/api/events").respond(202, json={})
    with pytest.raises(EnqueueValidationError) as info:
        await h(h.client().send_event("shipped", key=""))
    assert info.value.field == "key"
    assert not route.called


async def test_the_schedulers_field_error_reaches_the_caller(h: Harness, api: respx.MockRouter) -> None:
    api.post("/api/events").respond(
        400, json={"error": "payload must be ...", "field": "payload", "rule": "must be ..."}
    )
    with pytest.raises(EnqueueValidationError) as info:
        await h(h.client().send_event("shipped", key="k", payload=1))
    assert info.value.field == "payload"


@pytest.mark.parametrize(("event_id", "calls"), [("evt-1", 2), (None, 1)])
async def test_only_an_event_with_an_id_is_sent_again_after_a_lost_answer(
    h: Harness, api: respx.MockRouter, event_id: str | None, calls: int
) -> None:
    answers = [
        httpx.Response(503),
        httpx.Response(202, json={"id": "evt-1", "delivered": 1, "kept_until": 5}),
    ]
    route = api.post("/api/events").mock(side_effect=answers)
    client = h.client()
    if calls == 2:
        assert (await h(client.send_event("shipped", key="k", event_id=event_id))).delivered == 1
    else:
        with pytest.raises(Exception):  # noqa: B017, PT011 - the 503 is the answer: a resend could send it twice
            await h(client.send_event("shipped", key="k"))
    assert route.call_count == calls
