"""Building the plain JSON values the client sends (docs/design/scheduler-rpc.md §1).

Everything sent goes through one JSON round trip: what crosses a Service Binding is then exactly what an HTTP
body carries (dicts, lists, str, int, float, bool, None; no enums, tuples or Structs), so both transports send the
same data and no caller object is shared with the callee.
"""

from __future__ import annotations

from typing import Any

import msgspec

from tsumugi_core.options import MAX_SAFE_INTEGER, EnqueueItem, EnqueueValidationError
from tsumugi_core.time_values import Duration, Instant, duration_ms, instant_ms

__all__ = ["reschedule_body", "wire_item"]


def _plain(value: object) -> Any:
    return msgspec.json.decode(msgspec.json.encode(value))


def wire_item(item: EnqueueItem, shard: int | None) -> dict[str, Any]:
    """The camelCase enqueue item of a validated ``item``, with ``shard`` when the client resolved one.

    Example:
        >>> wire_item(EnqueueItem(binding="MAIL", payload=(1, 2), max_attempts=5), 0)
        {'maxAttempts': 5, 'binding': 'MAIL', 'payload': [1, 2], 'shard': 0}
    """
    body: dict[str, Any] = _plain(item)
    if shard is not None:
        body["shard"] = shard
    return body


def _check_int(field: str, value: object, *, non_negative: bool) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise EnqueueValidationError(field, f"must be an integer, got {value!r}")
    if abs(value) > MAX_SAFE_INTEGER:
        raise EnqueueValidationError(field, f"must be between -{MAX_SAFE_INTEGER} and {MAX_SAFE_INTEGER}")
    if non_negative and value < 0:
        raise EnqueueValidationError(field, "must not be negative")
    return value


def reschedule_body(
    run_at: Instant | None, delay_ms: Duration | None, priority: int | None
) -> dict[str, Any]:
    """The camelCase body of a reschedule: exactly one of ``run_at`` / ``delay_ms``, optional ``priority``.

    ``run_at`` may be an aware `datetime` and ``delay_ms`` a `timedelta` (ADR-0156).

    Raises:
        InvalidFieldError: both or neither time given, a value is not an integer, ``delay_ms`` is negative,
            or a `datetime` is naive; the field is the Python option name.
    """
    at = instant_ms("run_at", run_at)
    delay = duration_ms("delay_ms", delay_ms)
    if at is not None and delay is not None:
        raise EnqueueValidationError("run_at", "and delay_ms are mutually exclusive")
    body: dict[str, Any] = {}
    if at is not None:
        body["runAt"] = _check_int("run_at", at, non_negative=True)
    elif delay is not None:
        body["delayMs"] = _check_int("delay_ms", delay, non_negative=True)
    else:
        raise EnqueueValidationError("run_at", "or delay_ms is required")
    if priority is not None:
        body["priority"] = _check_int("priority", priority, non_negative=False)
    return body
