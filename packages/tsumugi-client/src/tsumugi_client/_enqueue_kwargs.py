"""The typed keyword options of ``enqueue`` and the dict form of ``enqueue_many`` items.

The keys are `tsumugi_core.options.EnqueueOptions`'s field names; a test keeps the two lists equal. Options stay
apart from the payload (keyword-only, never mixed into it), and None means "use the default", as in the core.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

import msgspec

from tsumugi_core.options import Backoff, EnqueueItem, EnqueueValidationError, Guarantee
from tsumugi_core.time_values import Duration, Instant

__all__ = ["EnqueueItemDict", "EnqueueKwargs", "item_from_fields"]


class EnqueueKwargs(TypedDict, total=False):
    """Every enqueue option, by its Python name (see `tsumugi_core.options.EnqueueOptions`).

    Durations take integer milliseconds or a `datetime.timedelta`, instants epoch milliseconds or an aware
    `datetime.datetime` (ADR-0142).
    """

    priority: int | None
    max_attempts: int | None
    backoff: Backoff | None
    timeout_ms: Duration | None
    delay_ms: Duration | None
    run_at: Instant | None
    guarantee: Guarantee | Literal["at-least-once", "at-most-once"] | None
    concurrency_key: str | None
    unique_key: str | None
    unique_for_ms: Duration | None
    partition_key: str | None
    expires_at: Instant | None
    expires_in_ms: Duration | None
    traceparent: str | None
    id: str | None
    run_id: str | None
    node_id: str | None


class EnqueueItemDict(EnqueueKwargs):
    """One item of ``enqueue_many`` as a dict: ``binding`` and ``payload`` plus any options."""

    binding: str
    payload: Any


_ITEM_FIELDS = frozenset(field.name for field in msgspec.structs.fields(EnqueueItem))


def item_from_fields(fields: Mapping[str, Any]) -> EnqueueItem:
    """Build an `EnqueueItem` from Python-named fields, refusing names that are not enqueue fields.

    Durations may be `timedelta`s and instants aware `datetime`s; the item converts them to milliseconds.

    Raises:
        EnqueueValidationError: a key is not an enqueue option, ``binding`` / ``payload`` is missing, a
            datetime is naive, or a time value is not whole milliseconds.
    """
    for name in fields:
        if name not in _ITEM_FIELDS:
            raise EnqueueValidationError(str(name), "is not an enqueue option")
    for required in ("binding", "payload"):
        if required not in fields:
            raise EnqueueValidationError(required, "is required")
    return EnqueueItem(**fields)
