"""Sending an event: check it, find its box, keep it and deliver it there (ADR-0146).

The REST route, the RPC entrypoint and the clients all come through `send_event`, so every door checks the
same rules and names the field that breaks one.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from tsumugi_core.events import EVENT_KEY_MAX, EVENT_PAYLOAD_MAX_CHARS, box_name, event_problem
from tsumugi_core.options import EnqueueValidationError
from tsumugi_core.portable import check_portable

__all__ = ["EVENT_ID_MAX", "send_event"]

EVENT_ID_MAX: Final = EVENT_KEY_MAX


def _checked(name: object, key: object, payload: object, event_id: object) -> str:
    problem = event_problem(name, key)
    if problem is not None:
        field, _, rule = problem.partition(" ")
        raise EnqueueValidationError(field, rule)
    if event_id is not None and (not isinstance(event_id, str) or not 0 < len(event_id) <= EVENT_ID_MAX):
        raise EnqueueValidationError(
            "id", f"must be a string of 1 to {EVENT_ID_MAX} characters, got {event_id!r:.40}"
        )
    try:
        check_portable(payload)
        text = msgspec.json.encode(payload).decode()
    except (TypeError, ValueError, OverflowError) as error:
        raise EnqueueValidationError("payload", f"must be a portable JSON value: {error}") from None
    if len(text) > EVENT_PAYLOAD_MAX_CHARS:
        raise EnqueueValidationError(
            "payload", f"must be at most {EVENT_PAYLOAD_MAX_CHARS} characters of JSON, got {len(text)}"
        )
    return text


async def send_event(
    env: Any, name: Any, key: Any, payload: Any = None, event_id: Any = None
) -> dict[str, Any]:
    """Send event ``name``/``key``: every job waiting for it gets it once, and it is kept for a day.

    Answers ``{"id", "delivered", "kept_until", "duplicate"}``: ``delivered`` counts the jobs it went to;
    ``duplicate`` is True when ``event_id`` was sent before (nothing happens again).

    Raises:
        EnqueueValidationError: a field breaks its rule (``field``, ``rule``); nothing is sent. The same error
            type as an enqueue's, so every door (REST 400, RPC) reports it the same way.
    """
    text = _checked(name, key, payload, event_id)
    box = box_name(name, key)
    answer = await env.JOB_SHARD.getByName(box).event_send(box, name, key, text, event_id)
    return dict(answer)
