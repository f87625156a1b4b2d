"""Reading request bodies with the original's validation messages and ours for policy.

Source: docs/reference/original.md §4.3.

Bodies are parsed as JSON whatever the content type. JSON has no NaN or Infinity, so those literals (which
Python's parser would accept) make a body invalid, as in the original. A "number" is a finite int or float,
never a boolean.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final, Literal

import msgspec

from tsumugi_core.options import MAX_RESCHEDULE_DELAY_MS, MAX_SAFE_INTEGER, RateLimit
from tsumugi_core.policy import PolicyPatch, PolicyValidationError, validate_settings
from tsumugi_core.portable import is_finite_number
from tsumugi_scheduler.api.answers import ApiError, bad_request
from tsumugi_scheduler.api.json_body import read_json
from tsumugi_scheduler.api.spelling import Spelling
from tsumugi_scheduler.readmodel import BULK_LIMIT, BulkFilter

__all__ = [
    "BULK_STATES",
    "POLICY_FIELDS",
    "BulkAction",
    "BulkTarget",
    "Reschedule",
    "parse_bulk",
    "parse_json",
    "parse_object",
    "parse_policy",
    "parse_reschedule",
]

BulkAction = Literal["retry", "cancel"]
BULK_STATES: Final[dict[str, tuple[str, ...]]] = {"retry": ("FAILED", "STALLED"), "cancel": ("SCHEDULED",)}
"""States a bulk action may target by filter; others would never shrink the selection.

Source: docs/reference/original.md §4.3.
"""
POLICY_FIELDS: Final = (
    "concurrency",
    "rate",
    "per_key_concurrency",
    "per_key_rate",
    "aging_interval_ms",
    "reaper_grace_ms",
    "paused",
    "sweep_after_ms",
    "failed_retention_ms",
)


def parse_json(text: bytes | str) -> Any:
    """The body's JSON value, read strictly (`tsumugi_scheduler.api.json_body`).

    Raises:
        ApiError: 400 ``body must be valid JSON`` (or UTF-8, or less deep; a key given twice).
    """
    return read_json(text)


def parse_object(text: bytes | str) -> dict[str, Any]:
    """The body as a JSON object.

    Raises:
        ApiError: 400 ``body must be valid JSON`` / ``body must be an object``.
    """
    value = parse_json(text)
    if not isinstance(value, dict):
        raise bad_request("body must be an object")
    return value  # pyright: ignore[reportUnknownVariableType]


def _is_number(value: object) -> bool:
    return is_finite_number(value)


def _number(body: Mapping[str, Any], field: str) -> float | None:
    value = body.get(field)
    if value is None:
        return None
    if not _is_number(value):
        raise bad_request(f"{field} must be a number")
    # Clamped to JavaScript's exact range, as the list parameters are: SQLite cannot bind larger integers.
    return float(max(-MAX_SAFE_INTEGER, min(value, MAX_SAFE_INTEGER)))  # an int past a float's range too


def _string(body: Mapping[str, Any], field: str) -> str | None:
    value = body.get(field)
    if value is None:
        return None
    if not isinstance(value, str):
        raise bad_request(f"{field} must be a string")
    return value


class Reschedule(msgspec.Struct, frozen=True, kw_only=True):
    """A validated reschedule: exactly one of ``run_at`` / ``delay_ms``."""

    run_at: int | None
    delay_ms: int | None
    priority: int | None

    def wire(self) -> dict[str, int]:
        """The body the scheduler's ``reschedule`` takes (camelCase, integers)."""
        body = {"runAt": self.run_at, "delayMs": self.delay_ms, "priority": self.priority}
        return {k: v for k, v in body.items() if v is not None}


_RESCHEDULE_FIELDS: Final = frozenset({"runAt", "delayMs", "priority"})


def _bounded(body: Mapping[str, Any], field: str, low: int, high: int, why: str = "") -> float | None:
    value = body.get(field)
    if value is None:
        return None
    if not _is_number(value):
        raise bad_request(f"{field} must be a number")
    if not low <= value <= high:  # refused, never clamped (issue 15 item 7)
        raise _field_error(field, f"must be between {low} and {high}{why}, got {value}")
    return float(value)


def parse_reschedule(text: bytes | str) -> Reschedule:
    """``{"runAt": n}`` or ``{"delayMs": n}``, optional ``"priority"`` (each also in snake_case).

    Raises:
        ApiError: 400 with the original's message, naming each field as the request spelled it.
    """
    spelling = Spelling(style="camel", known=_RESCHEDULE_FIELDS)
    body = spelling.read(parse_object(text))
    try:
        return _reschedule(body)
    except ApiError as exc:
        raise spelling.error(exc) from None


def _reschedule(body: Mapping[str, Any]) -> Reschedule:
    for key in body:  # a misspelt option would otherwise be dropped without a word ("prority")
        if key not in _RESCHEDULE_FIELDS:
            raise _field_error(
                key, f"is not a reschedule field (one of {', '.join(sorted(_RESCHEDULE_FIELDS))})"
            )
    run_at = _bounded(body, "runAt", 0, MAX_SAFE_INTEGER)
    sent = body.get("delayMs")
    if (
        isinstance(sent, int | float) and not isinstance(sent, bool) and sent < 0
    ):  # the original's message for a negative delay
        raise bad_request("delayMs must not be negative")
    delay_ms = _bounded(
        body, "delayMs", 0, MAX_RESCHEDULE_DELAY_MS, " (now + delayMs must stay a safe integer)"
    )
    priority = _bounded(body, "priority", -MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    if run_at is not None and delay_ms is not None:
        raise bad_request("runAt and delayMs are mutually exclusive")
    if run_at is None and delay_ms is None:
        raise bad_request("runAt or delayMs is required")
    return Reschedule(
        run_at=None if run_at is None else math.floor(run_at),
        delay_ms=None if delay_ms is None else math.ceil(delay_ms),
        priority=None if priority is None else math.floor(priority),
    )


class BulkTarget(msgspec.Struct, frozen=True, kw_only=True):
    """Either explicit ``ids`` or a filter with its ``limit``."""

    ids: list[str] | None = None
    filters: BulkFilter | None = None
    limit: int = BULK_LIMIT


def _ids(value: object) -> list[str]:
    if not isinstance(value, list):
        raise bad_request("ids must be an array")
    items: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
    if not items:
        raise bad_request("ids must not be empty")
    if len(items) > BULK_LIMIT:
        raise bad_request(f"ids must not exceed {BULK_LIMIT} entries")
    if not all(isinstance(i, str) and i for i in items):
        raise bad_request("ids must be non-empty strings")
    return [str(i) for i in items]


_BULK_FIELDS = (
    "ids",
    "binding",
    "state",
    "unique_key",
    "concurrency_key",
    "created_from",
    "created_to",
    "limit",
)


def parse_bulk(text: bytes | str, action: BulkAction) -> BulkTarget:
    """A bulk-retry / bulk-cancel body: ``ids`` (other fields then ignored) or filters and ``limit``.

    Raises:
        ApiError: 400 with the original's message.
    """
    spelling = Spelling(style="snake", known=_BULK_FIELDS)
    body = spelling.read(parse_object(text))
    try:
        return _bulk(body, action)
    except ApiError as exc:
        raise spelling.error(exc) from None


def _bulk(body: dict[str, Any], action: BulkAction) -> BulkTarget:
    for key in body:
        if key not in _BULK_FIELDS:
            raise _field_error(key, f"is not a bulk field (one of {', '.join(_BULK_FIELDS)})")
    # Types first, also beside ``ids``: a body the document refuses is refused whatever it targets.
    binding, state, unique_key, concurrency_key = (
        _string(body, f) for f in ("binding", "state", "unique_key", "concurrency_key")
    )
    created_from, created_to, limit = (_number(body, f) for f in ("created_from", "created_to", "limit"))
    allowed = BULK_STATES[action]
    if state is not None and state not in allowed:  # an enum in the document: refused beside ids too
        raise bad_request(f"state must be one of {', '.join(allowed)} for {action}")
    if "ids" in body and body["ids"] is not None:
        return BulkTarget(ids=_ids(body["ids"]))
    if limit is not None and limit < 1:
        raise bad_request("limit must be at least 1")
    filters = BulkFilter(
        binding=binding or None,
        states=(state,) if state else allowed,
        unique_key=unique_key or None,
        concurrency_key=concurrency_key or None,
        created_from=None if created_from is None else math.ceil(created_from),
        created_to=None if created_to is None else math.floor(created_to),
        without_node_jobs=action == "retry",
    )
    return BulkTarget(
        filters=filters, limit=BULK_LIMIT if limit is None else min(math.floor(limit), BULK_LIMIT)
    )


_POLICY_OPTIONS: Final = frozenset(
    {
        *POLICY_FIELDS,
        *(f"{rate}.{key}" for rate in ("rate", "per_key_rate") for key in ("tokens", "interval_ms")),
    }
)


def _field_error(field: str, rule: str) -> ApiError:
    return ApiError(400, {"error": f"{field} {rule}", "field": field, "rule": rule})


def _rate(field: str, value: object) -> RateLimit | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"tokens", "interval_ms"}:  # pyright: ignore[reportUnknownArgumentType]
        raise _field_error(field, "must be null or an object with exactly tokens and interval_ms")
    raw: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
    tokens, interval_ms = (_integer(f"{field}.{key}", raw[key]) for key in ("tokens", "interval_ms"))
    return RateLimit(tokens=tokens, interval_ms=interval_ms)


def _integer(field: str, value: object) -> int:
    # JSON has one number type: 5.0 is the integer 5 (JSON Schema's "integer" says so too), 5.5 is not.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _field_error(field, "must be an integer")
    return value


def _policy_value(field: str, value: object) -> object:
    if field in ("rate", "per_key_rate"):
        return _rate(field, value)
    if field == "paused":
        if not isinstance(value, bool):
            raise _field_error(field, "must be a boolean")
        return value
    if field == "aging_interval_ms" and value is None:
        return None  # null turns aging off
    return _integer(field, value)


def parse_policy(text: bytes | str) -> PolicyPatch:
    """A runtime policy body: any of ``POLICY_FIELDS`` (or their camelCase); the shard pins its settings with these changed (ADR-0058).

    Raises:
        ApiError: 400 ``{"error", "field", "rule"}`` naming the field and the rule.
    """
    spelling = Spelling(style="snake", known=_POLICY_OPTIONS)
    body = spelling.read(parse_object(text))
    for rate in ("rate", "per_key_rate"):
        if isinstance(body.get(rate), dict):
            body[rate] = spelling.read(body[rate], "", f"{rate}.")
    try:
        return _policy(body)
    except ApiError as exc:
        raise spelling.error(exc) from None


def _policy(body: dict[str, Any]) -> PolicyPatch:
    for key in body:
        if key not in POLICY_FIELDS:
            raise _field_error(key, f"is not a policy field (one of {', '.join(POLICY_FIELDS)})")
    if not body:
        raise _field_error("body", f"must set at least one of {', '.join(POLICY_FIELDS)}")
    values: dict[str, Any] = {field: _policy_value(field, value) for field, value in body.items()}
    patch = PolicyPatch(**values)
    try:
        validate_settings(patch)
    except PolicyValidationError as exc:
        raise _field_error(exc.field, exc.rule) from None
    return patch
