"""Decoding what crosses RPC and HTTP into core values, with errors that name the field (scheduler-rpc.md §1).

Senders build plain JSON values; JavaScript has one number type, so integral floats are read as integers
before a strict msgspec conversion. A value that does not fit raises `EnqueueValidationError` naming the field
in Python (snake_case) terms, e.g. ``items[2].max_attempts``.
"""

from __future__ import annotations

import re
from typing import Any, Final, TypeVar

import msgspec

from tsumugi_core.ids import InvalidJobIdError, parse_job_id, shard_name
from tsumugi_core.options import MAX_SAFE_INTEGER, EnqueueValidationError

__all__ = ["convert_plain", "integral", "shard_of_job", "snake_path"]

T = TypeVar("T")

_PATH_RE: Final = re.compile(r" - at `\$(?P<path>[^`]*)`$")
_CAMEL_RE: Final = re.compile(r"(?<!^)(?=[A-Z])")


_UNCHANGED: Final = frozenset({str, int, bool, type(None)})


def integral(value: Any) -> Any:
    """``value`` with integral floats (within the safe range) turned into ints, recursively; dicts copied."""
    if type(value) in _UNCHANGED:  # most leaves: one set lookup instead of three isinstance checks
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return int(value)
    if isinstance(value, dict):
        items: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {str(k): integral(v) for k, v in items.items()}
    if isinstance(value, list):
        elements: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return [integral(v) for v in elements]
    return value


def snake_path(path: str) -> str:
    """msgspec's error path (``.maxAttempts``, ``[3].backoff.delayMs``) in Python names.

    Example:
        >>> snake_path("[3].backoff.delayMs")
        '[3].backoff.delay_ms'
    """
    parts = re.split(r"(\[\d+\]|\.)", path)
    return "".join(_CAMEL_RE.sub("_", p).lower() if p and p[0] not in "[." else p for p in parts).lstrip(".")


def convert_plain(value: Any, kind: type[T] | Any, where: str) -> T:
    """Convert a received plain value into ``kind``.

    Raises:
        EnqueueValidationError: the value does not fit; the field is ``where`` plus the path inside it.
    """
    try:
        result: T = msgspec.convert(integral(value), kind)
        return result
    except msgspec.ValidationError as exc:
        message = str(exc)
        match = _PATH_RE.search(message)
        inner = snake_path(match["path"]) if match else ""
        rule = message[: match.start()] if match else message
        field = f"{where}{'' if inner.startswith('[') or not inner else '.'}{inner}"
        raise EnqueueValidationError(field, f"is invalid: {rule}") from None


def shard_of_job(job_id: object) -> str:
    """The shard (object) name of a job id.

    Raises:
        EnqueueValidationError: the id is malformed (field ``job_id``).
    """
    if not isinstance(job_id, str):
        raise EnqueueValidationError("job_id", f"is invalid: must be a string, got {type(job_id).__name__}")
    try:
        parsed = parse_job_id(job_id)
    except InvalidJobIdError as exc:
        raise EnqueueValidationError("job_id", f"is invalid: {exc}") from None
    return shard_name(parsed.binding, parsed.shard)
