"""Decoding what crosses RPC and HTTP into core values, with errors that name the field.

Source: docs/design/scheduler-rpc.md §1.

Senders build plain JSON values; JavaScript has one number type, so integral floats are read as integers
before a strict msgspec conversion. A value that does not fit raises `EnqueueValidationError` naming the field
in Python (snake_case) terms, e.g. ``items[2].max_attempts``.
"""

from __future__ import annotations

import re
from typing import Any, Final, TypeVar

import msgspec

from tsumugi_core.ids import InvalidJobIdError, is_valid_local_id, parse_job_id, shard_name
from tsumugi_core.options import MAX_SAFE_INTEGER, EnqueueValidationError

__all__ = [
    "convert_integral",
    "convert_plain",
    "integral",
    "integral_shared",
    "job_shard",
    "shard_of_job",
    "snake_path",
]

T = TypeVar("T")

_PATH_RE: Final = re.compile(r" - at `\$(?P<path>[^`]*)`$")
_CAMEL_RE: Final = re.compile(r"(?<!^)(?=[A-Z])")


_UNCHANGED: Final = frozenset({str, int, bool, type(None)})


def integral(value: Any) -> Any:
    """``value`` with integral floats (within the safe range) turned into ints, recursively; dicts copied."""
    if type(value) in _UNCHANGED:  # most leaves: one set lookup instead of three isinstance checks
        return value
    if type(value) is dict:
        # Leaves are checked inline: one function call per container rather than one per value.
        items: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {str(k): v if type(v) in _UNCHANGED else integral(v) for k, v in items.items()}
    if type(value) is list:
        elements: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return [v if type(v) in _UNCHANGED else integral(v) for v in elements]
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return int(value)
    if isinstance(value, dict):
        mapping: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {str(k): integral(v) for k, v in mapping.items()}
    if isinstance(value, list | tuple):  # a tuple as JSON holds it
        sequence: list[Any] | tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        return [integral(v) for v in sequence]
    return value


def _needs_integral(value: Any) -> bool:
    """Whether `integral` would change anything in ``value`` (a walk that allocates nothing)."""
    if type(value) in _UNCHANGED:
        return False
    if type(value) is dict:
        items: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        for k, v in items.items():
            if type(k) is not str or (type(v) not in _UNCHANGED and _needs_integral(v)):
                return True
        return False
    if type(value) is list:
        elements: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return any(type(v) not in _UNCHANGED and _needs_integral(v) for v in elements)
    if isinstance(value, float):
        return value.is_integer() and abs(value) <= MAX_SAFE_INTEGER
    return isinstance(value, dict | list | tuple)  # integral turns these into plain dicts and lists


def integral_shared(value: Any) -> Any:
    """`integral` without copying when nothing changes: the answer may share containers with ``value``.

    For values read once and dropped (a conversion's input), where the copy would only cost allocations.
    """
    return integral(value) if _needs_integral(value) else value


def snake_path(path: str) -> str:
    """msgspec's error path (``.maxAttempts``, ``[3].backoff.delayMs``) in Python names.

    Example:
        >>> snake_path("[3].backoff.delayMs")
        '[3].backoff.delay_ms'
    """
    parts = re.split(r"(\[\d+\]|\.)", path)
    return "".join(_CAMEL_RE.sub("_", p).lower() if p and p[0] not in "[." else p for p in parts).lstrip(".")


def convert_plain(value: Any, kind: type[T] | Any, where: str) -> T:
    """Convert a received plain value into ``kind`` (Any-typed parts of the answer may share ``value``'s).

    Raises:
        EnqueueValidationError: the value does not fit; the field is ``where`` plus the path inside it.
    """
    return convert_integral(integral_shared(value), kind, where)


def convert_integral(value: Any, kind: type[T] | Any, where: str) -> T:
    """`convert_plain` for a value that already went through `integral` (its floats are read once).

    Raises:
        EnqueueValidationError: the value does not fit; the field is ``where`` plus the path inside it.
    """
    try:
        result: T = msgspec.convert(value, kind)
        return result
    except msgspec.ValidationError as exc:
        message = str(exc)
        match = _PATH_RE.search(message)
        inner = snake_path(match["path"]) if match else ""
        rule = message[: match.start()] if match else message
        field = f"{where}{'' if inner.startswith('[') or not inner else '.'}{inner}"
        raise EnqueueValidationError(field, f"is invalid: {rule}") from None


_SHARD_OF_PREFIX: dict[str, tuple[str, int]] = {}
"""Shard name and index of each ``<binding>#<shard>:`` prefix already parsed: one shard's ids share one."""
_SHARD_CACHE_LIMIT: Final = 4096


def job_shard(job_id: str) -> tuple[str, int]:
    """The shard (object) name and index of a job id, as ``parse_job_id`` finds them.

    A prefix seen before only needs what follows its colon checked as a local id, which gives the same
    answer as a full parse at a fraction of the cost (every message and every projected change asks).

    Raises:
        InvalidJobIdError: the id is malformed.
    """
    hash_at = job_id.find("#")
    colon_at = job_id.find(":", hash_at + 1) if hash_at >= 0 else -1
    known = _SHARD_OF_PREFIX.get(job_id[: colon_at + 1]) if colon_at >= 0 else None
    if known is not None and is_valid_local_id(job_id[colon_at + 1 :]):
        return known
    parsed = parse_job_id(job_id)  # raises for a bad local id under a known prefix too
    if len(_SHARD_OF_PREFIX) >= _SHARD_CACHE_LIMIT:
        _SHARD_OF_PREFIX.clear()
    found = _SHARD_OF_PREFIX[job_id[: colon_at + 1]] = (
        shard_name(parsed.binding, parsed.shard),
        parsed.shard,
    )
    return found


def shard_of_job(job_id: object) -> str:
    """The shard (object) name of a job id.

    Raises:
        EnqueueValidationError: the id is malformed (field ``job_id``).
    """
    if not isinstance(job_id, str):
        raise EnqueueValidationError("job_id", f"is invalid: must be a string, got {type(job_id).__name__}")
    try:
        return job_shard(job_id)[0]
    except InvalidJobIdError as exc:
        raise EnqueueValidationError("job_id", f"is invalid: {exc}") from None
