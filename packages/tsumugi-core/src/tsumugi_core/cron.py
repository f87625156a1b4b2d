"""The cron dialect of recurring schedules: five fields, UTC, minute precision.

Source: docs/reference/original.md §3.12.

Fields are ``minute hour day-of-month month day-of-week`` with values 0-59, 0-23, 1-31, 1-12 and 0-7
(0 and 7 are both Sunday). Each field is a comma list of items ``*``, ``N``, ``A-B``, ``*/S`` or ``A-B/S``
(step ``S`` from 1 up to the field's width). Names (``JAN``, ``MON``), a step on a single value, empty list
items and reversed ranges are errors. When the day-of-month and day-of-week fields are both something other
than a literal ``*``, a day matches if either matches (the classic cron rule); otherwise both must.

Examples:
    >>> from datetime import datetime, timezone
    >>> after = int(datetime(2026, 1, 5, 12, 0, tzinfo=timezone.utc).timestamp() * 1000)
    >>> at = next_cron_at("0 0 13 * 5", after)
    >>> datetime.fromtimestamp(at / 1000, timezone.utc).isoformat()
    '2026-01-09T00:00:00+00:00'
"""

from __future__ import annotations

import bisect
import datetime as dt
import re
from typing import Final, NamedTuple

import msgspec

from tsumugi_core.exceptions import TsumugiError

__all__ = ["SEARCH_HORIZON_DAYS", "CronSpec", "InvalidCronError", "next_cron_at", "parse_cron"]

SEARCH_HORIZON_DAYS: Final = 366 * 5
"""How many days `next_cron_at` looks ahead; every cycle, leap days included, fits in it (bar century years)."""

_MINUTE_MS: Final = 60_000
_DAY_MINUTES: Final = 24 * 60
_EPOCH: Final = dt.date(1970, 1, 1)
_NUMBER_RE: Final = re.compile(r"[0-9]+")


class InvalidCronError(TsumugiError, ValueError):
    """A cron expression is malformed, or it never fires within the search horizon."""


class _Field(NamedTuple):
    label: str
    low: int
    high: int


_FIELDS: Final = (
    _Field("minute", 0, 59),
    _Field("hour", 0, 23),
    _Field("day of month", 1, 31),
    _Field("month", 1, 12),
    _Field("day of week", 0, 7),
)


class CronSpec(msgspec.Struct, frozen=True, kw_only=True):
    """A parsed cron expression: the sorted values each field allows.

    Attributes:
        expression: The text it was parsed from.
        minutes: Allowed minutes (0-59).
        hours: Allowed hours (0-23).
        days_of_month: Allowed days of the month (1-31).
        months: Allowed months (1-12).
        days_of_week: Allowed weekdays, 0 = Sunday ... 6 = Saturday (7 is folded into 0).
        day_of_month_restricted: The day-of-month field was not a literal ``*``.
        day_of_week_restricted: The day-of-week field was not a literal ``*``.
    """

    expression: str
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days_of_month: tuple[int, ...]
    months: tuple[int, ...]
    days_of_week: tuple[int, ...]
    day_of_month_restricted: bool
    day_of_week_restricted: bool

    def matches_day(self, day: dt.date) -> bool:
        """Whether `day` (its month ignored) passes the day-of-month / day-of-week rule."""
        dom_ok = day.day in self.days_of_month
        dow_ok = day.isoweekday() % 7 in self.days_of_week
        if self.day_of_month_restricted and self.day_of_week_restricted:
            return dom_ok or dow_ok
        return dom_ok and dow_ok


def _parse_number(text: str, low: int, high: int, label: str) -> int:
    if not _NUMBER_RE.fullmatch(text):
        raise InvalidCronError(f"invalid {label} value: {text}")
    # Past 9 digits it is out of range whatever it says, and int() refuses a text of over 4,300 digits.
    value = int(text) if len(text) <= 9 else high + 1
    if not low <= value <= high:
        raise InvalidCronError(f"{label} value out of range ({low}-{high}): {text}")
    return value


def _parse_range(text: str, field: _Field) -> tuple[int, int]:
    if text == "*":
        return field.low, field.high
    bounds = text.split("-")
    if len(bounds) > 2:
        raise InvalidCronError(f"invalid {field.label} range: {text}")
    start = _parse_number(bounds[0], field.low, field.high, field.label)
    end = _parse_number(bounds[1], field.low, field.high, field.label) if len(bounds) == 2 else start
    if start > end:
        raise InvalidCronError(f"{field.label} range is reversed: {text}")
    return start, end


def _parse_item(item: str, field: _Field) -> range:
    base, *steps = item.split("/")
    if len(steps) > 1:
        raise InvalidCronError(f"invalid {field.label} step: {item}")
    step = 1
    if steps:
        # A step on a single value cannot be told apart from a forgotten range end, so it is refused.
        if base != "*" and "-" not in base:
            raise InvalidCronError(f"step requires a range: {item}")
        step = _parse_number(steps[0], 1, field.high - field.low + 1, f"{field.label} step")
    start, end = _parse_range(base, field)
    return range(start, end + 1, step)


def _parse_field(text: str, field: _Field) -> set[int]:
    values: set[int] = set()
    for item in text.split(","):
        if not item:
            raise InvalidCronError(f"empty {field.label} entry: {text}")
        values.update(_parse_item(item, field))
    return values


def parse_cron(expression: str) -> CronSpec:
    """Parse a five-field cron expression.

    Example:
        >>> parse_cron("*/20 3 * * 1-5").minutes
        (0, 20, 40)

    Raises:
        InvalidCronError: The expression is malformed; the message names the field and the rule.
    """
    texts = expression.split()
    if len(texts) != len(_FIELDS):
        raise InvalidCronError(f"expected 5 fields (minute hour day month weekday): {expression}")
    minutes, hours, days, months, weekdays = (
        _parse_field(text, field) for text, field in zip(texts, _FIELDS, strict=True)
    )
    return CronSpec(
        expression=expression,
        minutes=tuple(sorted(minutes)),
        hours=tuple(sorted(hours)),
        days_of_month=tuple(sorted(days)),
        months=tuple(sorted(months)),
        days_of_week=tuple(sorted({value % 7 for value in weekdays})),
        day_of_month_restricted=texts[2] != "*",
        day_of_week_restricted=texts[4] != "*",
    )


def _first_minute_from(spec: CronSpec, from_minute: int) -> int | None:
    """The first allowed minute of a day at or after `from_minute` (minutes since midnight), if any."""
    from_hour, minute_in_hour = divmod(from_minute, 60)
    index = bisect.bisect_left(spec.hours, from_hour)
    if index == len(spec.hours):
        return None
    hour = spec.hours[index]
    if hour == from_hour:
        minute_index = bisect.bisect_left(spec.minutes, minute_in_hour)
        if minute_index < len(spec.minutes):
            return hour * 60 + spec.minutes[minute_index]
        if index + 1 == len(spec.hours):
            return None
        hour = spec.hours[index + 1]
    return hour * 60 + spec.minutes[0]


def _next_month_start(day: dt.date) -> dt.date:
    return dt.date(day.year + 1, 1, 1) if day.month == 12 else dt.date(day.year, day.month + 1, 1)


def next_cron_at(spec: CronSpec | str, after_ms: int) -> int:
    """The first matching minute strictly after `after_ms`, in epoch milliseconds (UTC).

    A time exactly on a match returns the following occurrence, so recomputing right after a fire never
    repeats it. The search walks months, then days, then hours and minutes, never minute by minute.

    Args:
        spec: A parsed spec or an expression to parse.
        after_ms: The instant to search after (epoch milliseconds).

    Raises:
        InvalidCronError: The expression is malformed, or it has no occurrence within
            `SEARCH_HORIZON_DAYS` days (for example ``0 0 31 2 *``).
    """
    cron = parse_cron(spec) if isinstance(spec, str) else spec
    start_minute = after_ms // _MINUTE_MS + 1
    start_day_number, from_minute = divmod(start_minute, _DAY_MINUTES)
    day = _EPOCH + dt.timedelta(days=start_day_number)
    horizon = day + dt.timedelta(days=SEARCH_HORIZON_DAYS)
    while day < horizon:
        if day.month not in cron.months:
            day, from_minute = _next_month_start(day), 0
            continue
        if cron.matches_day(day):
            minute = _first_minute_from(cron, from_minute)
            if minute is not None:
                return ((day - _EPOCH).days * _DAY_MINUTES + minute) * _MINUTE_MS
        day, from_minute = day + dt.timedelta(days=1), 0
    raise InvalidCronError(f"no occurrence within {SEARCH_HORIZON_DAYS} days")
