"""Cloudflare's cron dialect, the one ``triggers.crons`` in a wrangler config is written in.

It is not the dialect of Tsumugi's own schedules (``tsumugi_core.cron``): five UTC fields ``minute hour
day-of-month month day-of-week`` with day-of-week ``1``-``7`` where ``1`` is Sunday, case-insensitive
three-letter names for months (``JAN``-``DEC``) and weekdays (``SUN``-``SAT``), and Quartz-like specials:

* day of month: ``L`` (last day), ``L-n`` (n days before it), ``LW`` (last weekday), ``L-nW``, and ``nW``
  (the weekday nearest day n, never leaving the month);
* day of week: ``nL`` (the last weekday n of the month, ``6L`` = ``friL`` = last Friday) and ``n#k``
  (the k-th weekday n, k from 1 to 5).

Items are ``*``, ``N``, ``A-B`` (a range may wrap, ``FRI-SUN``), ``*/S``, ``A/S`` and ``A-B/S``; the specials
stand alone in their field. When neither day field is a literal ``*`` a day matches if either matches.

Examples:
    >>> import datetime as dt
    >>> after = int(dt.datetime(2026, 1, 3, tzinfo=dt.UTC).timestamp() * 1000)  # a Saturday
    >>> at = next_fire_at(parse_wrangler_cron("0 17 * * 1"), after)
    >>> dt.datetime.fromtimestamp(at / 1000, dt.UTC).strftime("%a %Y-%m-%d %H:%M")
    'Sun 2026-01-04 17:00'
"""

from __future__ import annotations

import bisect
import calendar
import datetime as dt
from typing import Final, Literal, NamedTuple

import msgspec

__all__ = [
    "DayOfMonthRule",
    "DayOfWeekRule",
    "WranglerCron",
    "WranglerCronError",
    "next_fire_at",
    "parse_wrangler_cron",
]

_MINUTE_MS: Final = 60_000
_DAY_MINUTES: Final = 24 * 60
_EPOCH: Final = dt.date(1970, 1, 1)
_HORIZON_DAYS: Final = 366 * 9
"""Search window: every cycle fits (29 February may be eight years apart across a century)."""
_CHECK_FROM_MS: Final = 946_684_800_000
"""2000-01-01: where `parse_wrangler_cron` looks for a first occurrence to refuse expressions that never fire."""

_MONTH_NAMES: Final = {name.upper(): i for i, name in enumerate(calendar.month_abbr) if name}
_WEEKDAY_NAMES: Final = {"SUN": 1, "MON": 2, "TUE": 3, "WED": 4, "THU": 5, "FRI": 6, "SAT": 7}


class WranglerCronError(ValueError):
    """A ``triggers.crons`` expression Cloudflare would refuse (or one that never fires)."""


class _Field(NamedTuple):
    label: str
    low: int
    high: int
    names: dict[str, int]


_MINUTE: Final = _Field("minute", 0, 59, {})
_HOUR: Final = _Field("hour", 0, 23, {})
_DAY_OF_MONTH: Final = _Field("day of month", 1, 31, {})
_MONTH: Final = _Field("month", 1, 12, _MONTH_NAMES)
_DAY_OF_WEEK: Final = _Field("day of week", 1, 7, _WEEKDAY_NAMES)


def _weekday(day: dt.date) -> int:
    """The dialect's number of ``day``'s weekday: 1 = Sunday ... 7 = Saturday."""
    return day.isoweekday() % 7 + 1


def _nearest_weekday(day: int, last: int, year: int, month: int) -> int:
    """The Monday-Friday day of the month nearest ``day`` without leaving the month (Quartz's ``W``)."""
    weekday = _weekday(dt.date(year, month, day))
    if weekday == 7:  # Saturday: the Friday before, or the Monday after when the 1st is a Saturday
        return 3 if day == 1 else day - 1
    if weekday == 1:  # Sunday: the Monday after, or the Friday before when it is the last day
        return day - 2 if day == last else day + 1
    return day


class DayOfMonthRule(msgspec.Struct, frozen=True, kw_only=True):
    """The day-of-month field.

    Attributes:
        kind: ``any`` (``*``), ``days`` (a list), ``last`` (``L``/``L-n``), ``last_weekday`` (``LW``/``L-nW``)
            or ``nearest_weekday`` (``nW``).
        days: The allowed days for ``days``.
        offset: Days before the last day for ``last`` / ``last_weekday``; the day n for ``nearest_weekday``.
    """

    kind: Literal["any", "days", "last", "last_weekday", "nearest_weekday"]
    days: tuple[int, ...] = ()
    offset: int = 0

    def matches(self, day: dt.date) -> bool:
        """Whether ``day`` passes this field."""
        last = calendar.monthrange(day.year, day.month)[1]
        if self.kind == "any":
            return True
        if self.kind == "days":
            return day.day in self.days
        if self.kind == "nearest_weekday":
            return self.offset <= last and day.day == _nearest_weekday(self.offset, last, day.year, day.month)
        target = last - self.offset
        if target < 1:
            return False
        if self.kind == "last":
            return day.day == target
        return day.day == _nearest_weekday(target, last, day.year, day.month)


class DayOfWeekRule(msgspec.Struct, frozen=True, kw_only=True):
    """The day-of-week field, weekdays numbered as written (1 = Sunday ... 7 = Saturday).

    Attributes:
        kind: ``any`` (``*``), ``days`` (a list), ``last`` (``nL``) or ``nth`` (``n#k``).
        weekdays: The allowed weekdays (one for ``last`` and ``nth``).
        nth: k of ``n#k``.
    """

    kind: Literal["any", "days", "last", "nth"]
    weekdays: tuple[int, ...] = ()
    nth: int = 0

    def matches(self, day: dt.date) -> bool:
        """Whether ``day`` passes this field."""
        if self.kind == "any":
            return True
        if _weekday(day) not in self.weekdays:
            return False
        if self.kind == "last":
            return day.day + 7 > calendar.monthrange(day.year, day.month)[1]
        if self.kind == "nth":
            return (day.day - 1) // 7 + 1 == self.nth
        return True


class WranglerCron(msgspec.Struct, frozen=True, kw_only=True):
    """A parsed ``triggers.crons`` expression.

    Attributes:
        expression: The text it was parsed from.
        minutes: Allowed minutes, sorted.
        hours: Allowed hours, sorted.
        months: Allowed months (1-12), sorted.
        day_of_month: The day-of-month field.
        day_of_week: The day-of-week field.
    """

    expression: str
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    months: tuple[int, ...]
    day_of_month: DayOfMonthRule
    day_of_week: DayOfWeekRule

    def matches_day(self, day: dt.date) -> bool:
        """Whether ``day`` is a day this expression fires on (its month included)."""
        if day.month not in self.months:
            return False
        by_month, by_week = self.day_of_month, self.day_of_week
        if by_month.kind != "any" and by_week.kind != "any":
            return by_month.matches(day) or by_week.matches(day)
        return by_month.matches(day) and by_week.matches(day)


def _value(text: str, field: _Field) -> int:
    named = field.names.get(text.upper())
    if named is not None:
        return named
    if not (text.isascii() and text.isdigit()):  # str.isdigit() also holds for '²', which int() refuses
        names = f" or a name ({', '.join(field.names)})" if field.names else ""
        raise WranglerCronError(f"{field.label}: {text!r} is not a number{names}")
    number = int(text)
    if not field.low <= number <= field.high:
        raise WranglerCronError(f"{field.label}: {number} is outside {field.low}-{field.high}")
    return number


def _span(start: int, end: int, field: _Field) -> list[int]:
    """``start`` to ``end`` inclusive, wrapping past the field's top when ``start > end`` (``FRI-SUN``)."""
    if start <= end:
        return list(range(start, end + 1))
    return [*range(start, field.high + 1), *range(field.low, end + 1)]


def _item(text: str, field: _Field) -> list[int]:
    base, slash, step_text = text.partition("/")
    if base == "*":
        start, end = field.low, field.high
    elif "-" in base:
        first, _, second = base.partition("-")
        start, end = _value(first, field), _value(second, field)
    else:
        start = _value(base, field)
        end = field.high if slash else start
    values = _span(start, end, field)
    if not slash:
        return values
    if not (step_text.isascii() and step_text.isdigit()) or not 1 <= int(step_text) <= field.high - field.low:
        raise WranglerCronError(
            f"{field.label}: step {step_text!r} must be a number from 1 to {field.high - field.low}"
        )
    return values[:: int(step_text)]


def _values(text: str, field: _Field) -> tuple[int, ...]:
    if any(mark in text.upper() for mark in ("L", "W", "#", "?")) and not field.names:
        raise WranglerCronError(
            f"{field.label}: {text!r} uses a special character ({field.label} takes only * , - /)"
        )
    found: set[int] = set()
    for item in text.split(","):
        if not item:
            raise WranglerCronError(f"{field.label}: empty item in {text!r}")
        found.update(_item(item, field))
    return tuple(sorted(found))


def _day_of_month(text: str) -> DayOfMonthRule:
    upper = text.upper()
    if upper == "*":
        return DayOfMonthRule(kind="any")
    if upper.startswith("L"):
        weekday = upper.endswith("W")
        rest = upper[1 : len(upper) - 1 if weekday else len(upper)]
        offset = 0
        if rest:
            days = rest[1:]
            if (
                not rest.startswith("-")
                or not (days.isascii() and days.isdigit())
                or not 1 <= int(days) <= 30
            ):
                raise WranglerCronError(
                    f"day of month: {text!r} must be L, LW, L-n or L-nW with n from 1 to 30"
                )
            offset = int(rest[1:])
        return DayOfMonthRule(kind="last_weekday" if weekday else "last", offset=offset)
    if upper.endswith("W"):
        return DayOfMonthRule(kind="nearest_weekday", offset=_value(upper[:-1], _DAY_OF_MONTH))
    if "?" in upper or "#" in upper or "L" in upper or "W" in upper:
        raise WranglerCronError(
            f"day of month: {text!r} is not supported (specials: L, L-n, LW, L-nW, nW, each on its own)"
        )
    return DayOfMonthRule(kind="days", days=_values(text, _DAY_OF_MONTH))


def _day_of_week(text: str) -> DayOfWeekRule:
    upper = text.upper()
    if upper == "*":
        return DayOfWeekRule(kind="any")
    if "#" in upper:
        day, _, nth = upper.partition("#")
        if not (nth.isascii() and nth.isdigit()) or not 1 <= int(nth) <= 5:
            raise WranglerCronError(f"day of week: {text!r}: the number after # must be 1 to 5")
        return DayOfWeekRule(kind="nth", weekdays=(_value(day, _DAY_OF_WEEK),), nth=int(nth))
    if upper.endswith("L") and upper != "L":
        return DayOfWeekRule(kind="last", weekdays=(_value(upper[:-1], _DAY_OF_WEEK),))
    if upper == "L" or "?" in upper or "W" in upper.replace("WED", ""):
        raise WranglerCronError(
            f"day of week: {text!r} is not supported (specials: nL as in 6L or friL, n#k as in MON#2)"
        )
    return DayOfWeekRule(kind="days", weekdays=_values(text, _DAY_OF_WEEK))


def parse_wrangler_cron(expression: str) -> WranglerCron:
    """Parse a ``triggers.crons`` expression in Cloudflare's dialect.

    Raises:
        WranglerCronError: The expression is malformed (the message names the field and the rule), or it
            never fires (for example ``0 0 30 2 *``).
    """
    texts = expression.split()
    if len(texts) != 5:
        raise WranglerCronError(
            f"{expression!r}: expected 5 fields (minute hour day-of-month month day-of-week), got {len(texts)}"
        )
    spec = WranglerCron(
        expression=expression,
        minutes=_values(texts[0], _MINUTE),
        hours=_values(texts[1], _HOUR),
        months=_values(texts[3], _MONTH),
        day_of_month=_day_of_month(texts[2]),
        day_of_week=_day_of_week(texts[4]),
    )
    if _search(spec, _CHECK_FROM_MS) is None:
        raise WranglerCronError(f"{expression!r}: never fires (no matching day)")
    return spec


def _first_minute_from(spec: WranglerCron, from_minute: int) -> int | None:
    """The first allowed minute of a day at or after ``from_minute`` (minutes since midnight), if any."""
    for hour in spec.hours[bisect.bisect_left(spec.hours, from_minute // 60) :]:
        low = from_minute % 60 if hour == from_minute // 60 else 0
        index = bisect.bisect_left(spec.minutes, low)
        if index < len(spec.minutes):
            return hour * 60 + spec.minutes[index]
    return None


def _search(spec: WranglerCron, after_ms: int) -> int | None:
    start_day, from_minute = divmod(after_ms // _MINUTE_MS + 1, _DAY_MINUTES)
    day = _EPOCH + dt.timedelta(days=start_day)
    horizon = day + dt.timedelta(days=_HORIZON_DAYS)
    while day < horizon:
        if spec.matches_day(day):
            minute = _first_minute_from(spec, from_minute)
            if minute is not None:
                return ((day - _EPOCH).days * _DAY_MINUTES + minute) * _MINUTE_MS
        day, from_minute = day + dt.timedelta(days=1), 0
    return None


def next_fire_at(spec: WranglerCron, after_ms: int) -> int:
    """The first matching minute strictly after ``after_ms``, in epoch milliseconds (UTC).

    Raises:
        WranglerCronError: No occurrence within nine years (only for an expression that never fires).
    """
    found = _search(spec, after_ms)
    if found is None:
        raise WranglerCronError(f"{spec.expression!r}: no occurrence within {_HORIZON_DAYS} days")
    return found
