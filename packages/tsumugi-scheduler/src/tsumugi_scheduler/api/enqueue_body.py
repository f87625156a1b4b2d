"""Enqueue items as REST clients of the original send them.

Source: docs/reference/original.md §4.3, ``POST /api/jobs``.

The scheduler's own validation (`tsumugi_core.options`) checks ranges and rules; before it, this module
gives the original's answers where the original had one, so its clients read the same texts:

- ``binding`` missing, null or empty: ``binding is required``; not a string: ``binding must be a string``;
- ``payload`` missing: ``payload is required`` (null is a payload);
- a number option that is not a finite number: ``<key> must be a number``; one with a fraction:
  ``<key> must be an integer`` (the original stored fractions; the scheduler counts in whole units);
- a string option that is not a string: ``<key> must be a string``;
- an empty ``concurrencyKey`` / ``uniqueKey`` is dropped, as the original drops empty-string keys.

Every refusal names the key as the client sent it, with ``field`` and ``rule``: options may be spelled in
camelCase or snake_case (`spelled_item`, `tsumugi_scheduler.api.spelling`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from tsumugi_core.options import EnqueueItem, EnqueueValidationError
from tsumugi_core.portable import is_finite_number
from tsumugi_scheduler.api.answers import ApiError, validation_error
from tsumugi_scheduler.api.spelling import Spelling

__all__ = [
    "DROPPED_WHEN_EMPTY",
    "ENQUEUE_OPTIONS",
    "NUMBER_KEYS",
    "STRING_KEYS",
    "compatible_item",
    "field_error",
    "item_error",
    "spelled_item",
]

NUMBER_KEYS: Final = (
    "priority",
    "maxAttempts",
    "timeoutMs",
    "delayMs",
    "runAt",
    "uniqueForMs",
    "expiresAt",
    "expiresInMs",
    "shard",
)
"""Item keys whose value must be a number (whole, once it is one)."""
STRING_KEYS: Final = (
    "concurrencyKey",
    "uniqueKey",
    "partitionKey",
    "traceparent",
    "id",
    "runId",
    "nodeId",
    "guarantee",
)
"""Item keys whose value must be a string."""
DROPPED_WHEN_EMPTY: Final = ("concurrencyKey", "uniqueKey")
"""Keys the original drops when they are the empty string."""
_BACKOFF_NUMBERS: Final = ("delayMs", "baseMs", "maxMs", "factor")
_BACKOFF_KINDS: Final = ("fixed", "exponential")
_SNAKE: Final = {"delayMs": "delay_ms", "baseMs": "base_ms", "maxMs": "max_ms"}
_MAX_SAFE: Final = 2**53 - 1
_GUARANTEES: Final = ("at-least-once", "at-most-once")
ENQUEUE_OPTIONS: Final = frozenset(
    {f.encode_name for f in msgspec.structs.fields(EnqueueItem)}
    | {"shard"}
    | {f"backoff.{key}" for key in ("kind", "jitter", *_BACKOFF_NUMBERS)}
)
"""An enqueue item's option names in camelCase (nested backoff fields dotted)."""


def field_error(field: str, rule: str) -> ApiError:
    """A 400 ``{"error": "<field> <rule>", "field", "rule"}``."""
    return ApiError(400, {"error": f"{field} {rule}", "field": field, "rule": rule})


def _number(field: str, value: object, *, whole: bool = True) -> int | float:
    if not is_finite_number(value):
        raise field_error(field, "must be a number")
    if isinstance(value, int) or not whole:
        return value
    if not value.is_integer():
        raise field_error(field, "must be an integer")
    return int(value)  # 3.0 is 3: JSON, like JavaScript, has one number type


def _backoff(field: str, value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise field_error(field, "must be an object")
    backoff: dict[str, Any] = dict(value)  # pyright: ignore[reportUnknownArgumentType]
    for key in backoff:
        if key != "kind" and key != "jitter" and key not in _BACKOFF_NUMBERS:
            raise field_error(f"{field}.{key}", "is not a backoff option")
    for key in _BACKOFF_NUMBERS:
        if key in backoff:  # null included: a backoff field is a number when it is sent at all
            backoff[key] = _number(f"{field}.{key}", backoff[key], whole=key != "factor")
            # Checked whatever the kind: a fixed backoff ignores maxMs, but a sent value still obeys its rule.
            # Range rules name the snake_case field, as the scheduler's own validation does.
            if key == "factor" and backoff[key] < 1:
                raise field_error(f"{field}.factor", "must be at least 1")
            if key != "factor" and not 0 <= backoff[key] <= _MAX_SAFE:
                raise field_error(f"{field}.{_SNAKE[key]}", f"must be between 0 and {_MAX_SAFE}")
    kind = backoff.get("kind")
    if kind not in _BACKOFF_KINDS:
        raise field_error(f"{field}.kind", "must be 'fixed' or 'exponential'")
    if kind == "fixed" and backoff.get("delayMs") is None:
        raise field_error(f"{field}.delayMs", "is required for a fixed backoff")
    if "jitter" in backoff and not isinstance(backoff["jitter"], bool):
        raise field_error(f"{field}.jitter", "must be a boolean")
    return backoff


def _binding(item: Mapping[str, Any], where: str) -> None:
    binding = item.get("binding")
    if binding is None or binding == "":
        raise field_error(f"{where}binding", "is required")
    if not isinstance(binding, str):
        raise field_error(f"{where}binding", "must be a string")
    if "payload" not in item:
        raise field_error(f"{where}payload", "is required")


def compatible_item(raw: object, where: str = "") -> object:
    """``raw`` with the original's type checks applied and empty keys dropped; other values unchanged.

    Args:
        raw: One enqueue item as parsed from JSON (anything: non-objects are left to the scheduler).
        where: The field prefix of refusals (``items[3].`` in a bulk body, empty for ``POST /api/jobs``).

    Raises:
        ApiError: 400 naming the key and the rule.
    """
    if not isinstance(raw, dict):
        return raw
    item: dict[str, Any] = dict(raw)  # pyright: ignore[reportUnknownArgumentType]
    _binding(item, where)
    for key in DROPPED_WHEN_EMPTY:
        if item.get(key) == "":
            del item[key]
    for key in NUMBER_KEYS:
        if item.get(key) is not None:
            item[key] = _number(f"{where}{key}", item[key])
    for key in STRING_KEYS:
        if item.get(key) is not None and not isinstance(item[key], str):
            raise field_error(f"{where}{key}", "must be a string")
    if item.get("guarantee") is not None and item["guarantee"] not in _GUARANTEES:
        raise field_error(f"{where}guarantee", "must be 'at-least-once' or 'at-most-once'")
    if item.get("backoff") is not None:
        item["backoff"] = _backoff(f"{where}backoff", item["backoff"])
    return item


def spelled_item(raw: object, where: str = "") -> tuple[object, Spelling]:
    """`compatible_item` of ``raw`` with its options renamed to camelCase, and how the request spelled them.

    Raises:
        ApiError: 400 naming the key as sent (both spellings of one option, or a broken rule).
    """
    spelling = Spelling(style="camel", known=ENQUEUE_OPTIONS)
    if not isinstance(raw, dict):
        return raw, spelling
    item = spelling.read(raw, where)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(item.get("backoff"), dict):
        item["backoff"] = spelling.read(item["backoff"], where, "backoff.")
    try:
        return compatible_item(item, where), spelling
    except ApiError as exc:
        raise spelling.error(exc) from None


def item_error(error: EnqueueValidationError, spellings: list[Spelling], strip: str = "") -> ApiError:
    """The scheduler's refusal of an item as a 400 (409), naming the options as that item spelled them."""
    answer = validation_error(error, strip)
    index = 0
    if error.field.startswith("items["):
        index = int(error.field[6 : error.field.index("]")])
    return spellings[index].error(answer) if index < len(spellings) else answer
