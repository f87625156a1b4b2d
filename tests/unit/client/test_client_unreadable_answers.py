"""An answer the client cannot read is a client error quoting it, never a bare exception and never read as a
success: a proxy's HTML page, an empty body, an object without the keys the call needs (a review proved each)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import respx

from tests.unit.client.http_harness import Harness
from tsumugi_client import ConflictError, ScheduleError, TsumugiClientError, create_client

HTML = "<html><body>502 from a proxy</body></html>"
CALLS: list[tuple[str, str, str, tuple[Any, ...]]] = [
    ("start_run", "POST", "/api/runs", ("greetings", {"names": ["a"]})),
    ("get_run", "GET", "/api/runs/[^/]+", ("greetings:r1",)),
    ("cancel", "POST", "/api/jobs/[^/]+/cancel", ("MAIL#0:abc",)),
    ("retry", "POST", "/api/jobs/[^/]+/retry", ("MAIL#0:abc",)),
    ("list_schedules", "GET", "/api/schedules", ()),
    ("get_schedule", "GET", "/api/schedules/nightly", ("nightly",)),
    ("pause_schedule", "POST", "/api/schedules/nightly/pause", ("nightly",)),
    ("trigger_schedule", "POST", "/api/schedules/nightly/trigger", ("nightly",)),
]


WHOLE_WHEN_EMPTY = {"cancel", "retry", "get_schedule"}
"""Calls for which ``{}`` is a whole answer (nothing requested, nothing to say)."""
CASES = [
    (answer, *call)
    for answer in (HTML, "", "{}")
    for call in CALLS
    if not (answer == "{}" and call[0] in WHOLE_WHEN_EMPTY)
]


@pytest.mark.parametrize(
    ("answer", "method", "verb", "path", "args"),
    CASES,
    ids=[f"{c[1]}-{('html', 'empty', 'object')[(HTML, '', '{}').index(c[0])]}" for c in CASES],
)
async def test_a_2xx_answer_the_client_cannot_read_is_a_client_error(
    h: Harness, api: respx.MockRouter, answer: str, method: str, verb: str, path: str, args: tuple[Any, ...]
) -> None:
    api.route(method=verb, path__regex=f"^{path}$").respond(
        200, text=answer, headers={"content-type": "text/html"}
    )
    with pytest.raises(TsumugiClientError) as caught:
        await h(getattr(h.client(), method)(*args))
    assert type(caught.value).__module__.startswith("tsumugi_client")


async def test_a_schedule_refusal_whose_status_field_is_not_a_number_keeps_the_servers_words(
    h: Harness, api: respx.MockRouter
) -> None:
    api.get("/api/schedules").respond(500, json={"status": "error", "error": "boom"})
    with pytest.raises(ScheduleError) as caught:
        await h(h.client().list_schedules())
    assert (caught.value.status, "boom" in str(caught.value)) == (500, True)


async def test_a_409_in_plain_text_keeps_the_text(h: Harness, api: respx.MockRouter) -> None:
    api.post(path__regex=r"^/api/jobs/[^/]+/retry$").respond(409, text="locked by the gateway")
    with pytest.raises(ConflictError, match="locked by the gateway"):
        await h(h.client().retry("MAIL#0:abc"))


class _Answers:
    """A scheduler entrypoint that answers each method with a fixed value."""

    def __init__(self, **answers: Any) -> None:
        self._answers = answers

    def __getattr__(self, name: str) -> Any:
        async def call(*args: Any) -> Any:
            return self._answers[name]

        return call


@pytest.mark.parametrize(
    ("method", "args", "answers"),
    [
        ("enqueue", ("MAIL", {}), {"enqueue_json": "<html>"}),
        ("get_run", ("greetings:r1",), {"get_run": {"run": "nope"}}),
        ("start_run", ("greetings", {}), {"start_run": None}),
        ("list_schedules", (), {"list_schedules": None}),
        ("pause_schedule", ("nightly",), {"pause_schedule": {"ok": True}}),
        ("trigger_schedule", ("nightly",), {"trigger_schedule": {"ok": True}}),
        ("cancel_run", ("greetings:r1",), {"cancel_run": None}),
    ],
)
async def test_an_rpc_answer_the_client_cannot_read_is_a_client_error(
    method: str, args: tuple[Any, ...], answers: dict[str, Any]
) -> None:
    client = create_client(bindings={"MAIL": {"shards": 1}})
    env = SimpleNamespace(TSUMUGI=_Answers(**answers))
    with pytest.raises(TsumugiClientError):
        await getattr(client, method)(env, *args)
