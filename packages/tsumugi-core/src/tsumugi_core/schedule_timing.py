"""When a recurring schedule fires: ``every_ms`` phases, cron in an IANA time zone, missed periods (ADR-0078).

A `Timing` is either ``every_ms`` (a fixed period in real time) or a five-field ``cron`` read in ``timezone``
(``UTC`` unless given; the dialect is `tsumugi_core.cron`). Everything here is pure: instants are epoch
milliseconds passed in.

Rules (docs/reference/original.md §2.9, and beyond it for time zones):

* first fire: ``every_ms`` one period after registration; cron the first match strictly after it;
* after an occurrence at ``occurrence`` fires at ``now`` (``now`` may be late), the next one is the first
  boundary strictly after ``max(occurrence, now)``: a late alarm fires only the oldest missed occurrence and
  ``every_ms`` keeps its phase (``occurrence + k * every_ms``);
* cron in a time zone matches local wall-clock minutes. A local time skipped by a daylight-saving gap fires
  once at the first valid local minute after the gap; a local time that occurs twice (the clock goes back)
  fires once, at its first occurrence.

Examples (America/New_York springs forward on 2026-03-08 at 02:00 and falls back on 2026-11-01 at 02:00):
    >>> import datetime as dt
    >>> def at(text): return int(dt.datetime.fromisoformat(text).timestamp() * 1000)
    >>> def show(ms): return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat()
    >>> ny = Timing(cron="30 2 * * *", timezone="America/New_York")
    >>> show(next_after(ny, at("2026-03-06T12:00:00+00:00")))  # 02:30 EST on the 7th
    '2026-03-07T07:30:00+00:00'
    >>> show(next_after(ny, at("2026-03-07T07:30:00+00:00")))  # 02:30 does not exist on the 8th: 03:00 EDT
    '2026-03-08T07:00:00+00:00'
    >>> fall = Timing(cron="30 1 * * *", timezone="America/New_York")
    >>> show(next_after(fall, at("2026-11-01T04:00:00+00:00")))  # 01:30 EDT, the first of the two
    '2026-11-01T05:30:00+00:00'
    >>> show(next_after(fall, at("2026-11-01T05:30:00+00:00")))  # not 01:30 EST again: the next day
    '2026-11-02T06:30:00+00:00'
    >>> every = Timing(every_ms=60_000)
    >>> next_after(every, 60_000, now_ms=241_000)  # woken 3 periods + 1 s late: the phase is kept
    300000
"""

from __future__ import annotations

import datetime as dt
import functools
import zoneinfo
from typing import Final

import msgspec

from tsumugi_core.cron import CronSpec, InvalidCronError, next_cron_at, parse_cron
from tsumugi_core.exceptions import InvalidFieldError

__all__ = [
    "MAX_EVERY_MS",
    "MIN_EVERY_MS",
    "UTC_NAME",
    "InvalidTimingError",
    "Timing",
    "first_occurrence",
    "next_after",
    "next_occurrences",
    "validate_timing",
    "zone_of",
]

MIN_EVERY_MS: Final = 1000
"""Shortest ``every_ms`` (the original's rule)."""
MAX_EVERY_MS: Final = 366 * 86_400_000
"""Longest ``every_ms`` (one leap year): instants stay far inside JavaScript's safe integers; cron is for rarer."""
UTC_NAME: Final = "UTC"
_MINUTE_MS: Final = 60_000
_UTC: Final = dt.UTC
_GAP_SEARCH_MINUTES: Final = 48 * 60
"""A daylight-saving (or calendar) gap is at most a day long (Samoa skipped 2011-12-30); searched minute by minute."""


class InvalidTimingError(InvalidFieldError):
    """A timing broke a rule; ``field`` names it (``every_ms``, ``cron`` or ``timezone``), ``rule`` says how."""


class Timing(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """When a schedule fires: exactly one of ``every_ms`` and ``cron``; ``timezone`` is for cron."""

    every_ms: int | None = None
    cron: str | None = None
    timezone: str = UTC_NAME


@functools.lru_cache(maxsize=256)
def zone_of(name: str) -> dt.tzinfo:
    """The IANA zone ``name`` (``UTC`` is the fixed UTC zone).

    Raises:
        InvalidTimingError: the name is not an IANA zone known to this Python (tzdata).
    """
    if name == UTC_NAME:
        return _UTC
    try:
        return zoneinfo.ZoneInfo(name)
    except (
        zoneinfo.ZoneInfoNotFoundError,
        ValueError,
        OSError,
    ):  # OSError: a folder of zones, such as 'America'
        raise InvalidTimingError(
            "timezone", f"must be an IANA time zone such as Asia/Tokyo, got {name!r}"
        ) from None


@functools.lru_cache(maxsize=1024)
def _parsed(expression: str) -> CronSpec:
    return parse_cron(expression)


def validate_timing(timing: Timing) -> Timing:
    """``timing`` when it keeps every rule.

    Raises:
        InvalidTimingError: not exactly one of every_ms / cron; every_ms not an integer from 1000 to 366 days; a
            cron that does not parse or never fires (``0 0 31 2 *``); an unknown time zone, or one given
            with every_ms.
    """
    if (timing.every_ms is None) == (timing.cron is None):
        raise InvalidTimingError("every_ms", "or cron: exactly one is required")
    if timing.every_ms is not None:
        value = timing.every_ms
        if isinstance(value, bool) or not isinstance(value, int) or value < MIN_EVERY_MS:  # pyright: ignore[reportUnnecessaryIsInstance]  # callers may bypass typing
            raise InvalidTimingError(
                "every_ms", f"must be an integer of at least {MIN_EVERY_MS}, got {value!r}"
            )
        if value > MAX_EVERY_MS:
            raise InvalidTimingError("every_ms", f"must be at most {MAX_EVERY_MS} (366 days), got {value}")
        if timing.timezone != UTC_NAME:
            raise InvalidTimingError("timezone", "applies to cron only: every_ms is a period in real time")
        return timing
    assert timing.cron is not None
    zone_of(timing.timezone)
    try:
        spec = _parsed(timing.cron)
        # Reachable: probed from 2024-01-01T00:00Z, as the original does (a never-matching spec is refused).
        next_cron_at(spec, 1_704_067_200_000)
    except InvalidCronError as exc:
        raise InvalidTimingError("cron", f"is invalid: {exc}") from None
    return timing


def _wall_ms(instant_ms: int, zone: dt.tzinfo) -> int:
    """The local wall-clock reading of an instant, as epoch ms of that reading taken as if it were UTC."""
    local = dt.datetime.fromtimestamp(instant_ms // 1000, zone).replace(tzinfo=_UTC)
    return int(local.timestamp()) * 1000 + instant_ms % 1000


def _instant_of_wall(wall_ms: int, zone: dt.tzinfo) -> int:
    """The first instant showing local wall-clock minute ``wall_ms``, or the first valid minute after a gap."""
    naive = dt.datetime.fromtimestamp(wall_ms // 1000, _UTC).replace(tzinfo=None)
    for _ in range(_GAP_SEARCH_MINUTES):
        local = naive.replace(tzinfo=zone, fold=0)  # fold=0: the first of a repeated local time
        instant = local.astimezone(_UTC)
        if instant.astimezone(zone).replace(tzinfo=None) == naive:
            return int(instant.timestamp()) * 1000
        naive += dt.timedelta(minutes=1)  # inside a gap: the next minute, until one exists
    raise InvalidTimingError(
        "timezone", "has a gap longer than two days"
    )  # pragma: no cover - no zone has one


@functools.lru_cache(maxsize=4096)
def _next_cron(expression: str, zone_name: str, after_ms: int) -> int:
    # Pure: schedules sharing an expression fire at the same instants, so a tick asks the same question often.
    spec = _parsed(expression)
    if zone_name == UTC_NAME:
        return next_cron_at(spec, after_ms)
    zone = zone_of(zone_name)
    wall = _wall_ms(after_ms, zone)
    while True:
        wall = next_cron_at(spec, wall)
        instant = _instant_of_wall(wall, zone)
        # A candidate at or before `after_ms` is a repeated local time whose first occurrence has passed
        # (`after_ms` lies in the second pass of the repeated hour): it fired once already, skip it.
        if instant > after_ms:
            return instant


def first_occurrence(timing: Timing, registered_at: int) -> int:
    """The first occurrence of a schedule registered (or whose timing changed) at ``registered_at``."""
    if timing.every_ms is not None:
        return registered_at + timing.every_ms
    assert timing.cron is not None
    return _next_cron(timing.cron, timing.timezone, registered_at)


def next_after(timing: Timing, occurrence: int, now_ms: int | None = None) -> int:
    """The occurrence following ``occurrence``, skipping every boundary at or before ``now_ms``.

    Args:
        timing: A valid timing.
        occurrence: The occurrence that fires (or fired).
        now_ms: The present; missed boundaries up to it are skipped (the missed-period rule).
    """
    now = occurrence if now_ms is None else max(occurrence, now_ms)
    if timing.every_ms is not None:
        periods = (now - occurrence) // timing.every_ms + 1
        return occurrence + periods * timing.every_ms
    assert timing.cron is not None
    return _next_cron(timing.cron, timing.timezone, now)


def next_occurrences(timing: Timing, start_at: int, count: int) -> list[int]:
    """``start_at`` (the next occurrence) and the ``count - 1`` that follow it."""
    found: list[int] = []
    at = start_at
    while len(found) < count:
        found.append(at)
        at = next_after(timing, at)
    return found
