"""Events a waiting job receives: names, keys, who owns them, and how long an early one is kept (ADR-0146).

Example:
    >>> box_name("approved", "order-42") == box_name("approved", "order-42")
    True
    >>> event_problem("approved", "order-42") is None
    True
"""

from __future__ import annotations

import hashlib
from typing import Final

import msgspec

from tsumugi_core.steps import step_name_problem

__all__ = [
    "EVENT_BOX_PREFIX",
    "EVENT_KEEP_MS",
    "EVENT_KEY_MAX",
    "EVENT_PAYLOAD_MAX_CHARS",
    "KEPT_PER_BOX",
    "EventRecord",
    "box_name",
    "event_problem",
]

EVENT_BOX_PREFIX: Final = "event:"
"""Names of the objects that own an event's (name, key): never a shard's ``<binding>#<shard>``."""
EVENT_KEEP_MS: Final = 86_400_000
"""How long an event stays in its box for jobs that start waiting after it arrived: one day."""
KEPT_PER_BOX: Final = 100
"""The newest events kept per (name, key); older ones go first."""
EVENT_KEY_MAX: Final = 200
EVENT_PAYLOAD_MAX_CHARS: Final = 65_536
"""An event's payload as JSON text, at most (it is stored as a step result of every job it reaches)."""


class EventRecord(msgspec.Struct, frozen=True, kw_only=True):
    """An event as a waiting job's step stores it."""

    id: str
    name: str
    key: str
    payload: msgspec.Raw | None = None
    sent_at: int


def event_problem(name: object, key: object) -> str | None:
    """Why ``name``/``key`` cannot address an event, naming the field; None when they can."""
    problem = step_name_problem(name)
    if problem is not None:
        return f"name {problem}"
    if not isinstance(key, str):
        return f"key must be a string, got {type(key).__name__}"
    if not key or len(key) > EVENT_KEY_MAX:
        return f"key must have 1 to {EVENT_KEY_MAX} characters, got {len(key)}"
    return None


def box_name(name: str, key: str) -> str:
    """The name of the one object that owns ``(name, key)``: its waiters and the events kept for them."""
    digest = hashlib.sha256(f"{name}\x00{key}".encode()).hexdigest()[:32]
    return f"{EVENT_BOX_PREFIX}{digest}"
