"""Python's own time types at the API's edge: `timedelta` for durations, aware `datetime` for instants.

The wire and the stores keep integer milliseconds (``*_ms`` durations, ``*_at`` epoch-ms instants); every public
call that takes one also takes the Python type and converts it here, once, before the usual checks (ADR-0142).
A naive `datetime` names no instant (its zone is the reader's guess), so it is refused by name.

Example:
    >>> duration_ms("timeout_ms", dt.timedelta(seconds=90))
    90000
    >>> instant_ms("run_at", dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    1767225600000
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any, Final, TypeAlias

import msgspec

from tsumugi_core.exceptions import InvalidFieldError

__all__ = [
    "Duration",
    "Instant",
    "Seconds",
    "as_seconds",
    "duration_ms",
    "instant_ms",
    "struct_in_milliseconds",
    "struct_in_seconds",
    "with_milliseconds",
]

Duration: TypeAlias = int | dt.timedelta
"""A duration: integer milliseconds or a `datetime.timedelta`."""
Instant: TypeAlias = int | dt.datetime
"""An instant: epoch milliseconds or a timezone-aware `datetime.datetime`."""

_MS: Final = dt.timedelta(milliseconds=1)
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def duration_ms(field: str, value: object) -> object:
    """``value`` in milliseconds when it is a `timedelta`; any other value unchanged (the caller checks it).

    Raises:
        InvalidFieldError: the timedelta is not a whole number of milliseconds.
    """
    if not isinstance(value, dt.timedelta):
        return value
    if value % _MS:
        raise InvalidFieldError(field, f"must be a whole number of milliseconds, got {value!r}")
    return value // _MS


def instant_ms(field: str, value: object) -> object:
    """``value`` in epoch milliseconds when it is an aware `datetime`; any other value unchanged.

    Raises:
        InvalidFieldError: the datetime is naive, or not a whole number of milliseconds.
    """
    if not isinstance(value, dt.datetime):
        return value
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidFieldError(
            field, f"must be a timezone-aware datetime (a naive one names no instant), got {value!r}"
        )
    return duration_ms(field, value - _EPOCH)


def with_milliseconds(
    fields: Mapping[str, Any], durations: Iterable[str], instants: Iterable[str] = ()
) -> dict[str, Any]:
    """A copy of ``fields`` with the named durations and instants in milliseconds."""
    converted = dict(fields)
    for name in durations:
        if name in converted:
            converted[name] = duration_ms(name, converted[name])
    for name in instants:
        if name in converted:
            converted[name] = instant_ms(name, converted[name])
    return converted


Seconds: TypeAlias = float | dt.timedelta
"""A local duration in seconds (the HTTP clients' waits and timeouts): a number or a `datetime.timedelta`."""


def as_seconds(value: Seconds) -> float:
    """``value`` in seconds: a `timedelta`'s total seconds, a number as it is."""
    return value.total_seconds() if isinstance(value, dt.timedelta) else value


def struct_in_milliseconds(
    struct: msgspec.Struct, durations: Iterable[str], instants: Iterable[str] = (), *, prefix: str = ""
) -> None:
    """Convert ``struct``'s `timedelta` / `datetime` fields to milliseconds in place (from ``__post_init__``).

    A frozen msgspec Struct is built by its generated ``__init__`` without type checks, so a Python time value
    given to a ``*_ms`` / ``*_at`` field lands as is; this turns it into the integer the wire and every reader
    expect. Decoded structs never hold one (the decoder accepts only integers there). ``prefix`` names the
    struct in errors (``backoff.`` gives ``backoff.delay_ms``).

    Raises:
        InvalidFieldError: a naive datetime, or a value that is not whole milliseconds.
    """
    for name in durations:
        value = getattr(struct, name)
        if isinstance(value, dt.timedelta):
            msgspec.structs.force_setattr(struct, name, duration_ms(prefix + name, value))
    for name in instants:
        value = getattr(struct, name)
        if isinstance(value, dt.datetime):
            msgspec.structs.force_setattr(struct, name, instant_ms(prefix + name, value))


def struct_in_seconds(struct: msgspec.Struct, fields: Iterable[str]) -> None:
    """Convert ``struct``'s `timedelta` fields to float seconds in place (from ``__post_init__``)."""
    for name in fields:
        value = getattr(struct, name)
        if isinstance(value, dt.timedelta):
            msgspec.structs.force_setattr(struct, name, value.total_seconds())
