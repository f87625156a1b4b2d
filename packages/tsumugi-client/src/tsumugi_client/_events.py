"""Sending events to waiting jobs (ADR-0146): the value the scheduler answers and the REST call.

``send_event`` on every client checks the name and key before anything is sent and answers `EventSent`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from tsumugi_client._calls import Call
from tsumugi_client._errors import TsumugiClientError
from tsumugi_client._http_errors import decode_body, error_of
from tsumugi_core.events import event_problem
from tsumugi_core.options import EnqueueValidationError

if TYPE_CHECKING:
    import httpx  # annotations only: the HTTP clients import it (ADR-0107)

__all__ = ["EventSent", "decode_event_sent", "event_body", "send_event_call"]


class EventSent(msgspec.Struct, frozen=True, kw_only=True):
    """What sending an event did.

    Attributes:
        id: The event's id (the one given, or one the scheduler made).
        delivered: How many waiting jobs it went to.
        kept_until: Until when (epoch ms) jobs that start waiting later still get it.
        duplicate: The id was sent before; nothing happened again.
    """

    id: str
    delivered: int
    kept_until: int
    duplicate: bool = False


def event_body(name: str, key: str, payload: Any, event_id: str | None) -> dict[str, Any]:
    """The request body, checked: the name and key follow the rules (the payload is checked by the scheduler).

    Raises:
        EnqueueValidationError: ``name`` or ``key`` breaks its rule (``field`` says which).
    """
    problem = event_problem(name, key)
    if problem is not None:
        field, _, rule = problem.partition(" ")
        raise EnqueueValidationError(field, rule)
    body: dict[str, Any] = {"name": name, "key": key, "payload": msgspec.to_builtins(payload)}
    if event_id is not None:
        body["id"] = event_id
    return body


def decode_event_sent(answer: object) -> EventSent:
    """The scheduler's answer as `EventSent`.

    Raises:
        TsumugiClientError: the answer does not have its shape.
    """
    try:
        return msgspec.convert(dict(answer) if isinstance(answer, Mapping) else answer, EventSent)  # pyright: ignore[reportUnknownArgumentType]
    except msgspec.ValidationError as exc:
        raise TsumugiClientError(
            None, f"the scheduler answered send_event with a malformed value: {exc}"
        ) from None


def send_event_call(body: dict[str, Any]) -> Call[EventSent]:
    """``POST /api/events``; repeated after a failure only when the event has an id (then it is harmless)."""

    def read(response: httpx.Response) -> EventSent:
        if not response.is_success:
            raise error_of(response)
        return decode_event_sent(decode_body(response))

    return Call(method="POST", path="/api/events", body=body, idempotent="id" in body, read=read)
