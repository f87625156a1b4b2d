"""A schedule's timing in words, for the dashboard and the API ("every day at 03:00, Asia/Tokyo").

Common shapes read as sentences; anything else reads as the expression itself, so a reading is never wrong.

Examples:
    >>> describe(Timing(cron="0 3 * * *", timezone="Asia/Tokyo"))
    'every day at 03:00, Asia/Tokyo'
    >>> describe(Timing(cron="*/15 * * * *"))
    'every 15 minutes, UTC'
    >>> describe(Timing(cron="30 9 * * 1-5"))
    'Monday to Friday at 09:30, UTC'
    >>> describe(Timing(cron="0 9 * * 1"))
    'every Monday at 09:00, UTC'
    >>> describe(Timing(cron="0 0 1 * *"))
    'on day 1 of every month at 00:00, UTC'
    >>> describe(Timing(every_ms=600_000))
    'every 10 minutes'
    >>> describe(Timing(every_ms=1_500))
    'every 1.5 seconds'
"""

from __future__ import annotations

from typing import Final

from tsumugi_core.cron import CronSpec, parse_cron
from tsumugi_core.schedule_timing import Timing

__all__ = ["describe", "describe_every"]

_DAYS: Final = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_MONTHS: Final = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_UNITS: Final = ((86_400_000, "day"), (3_600_000, "hour"), (60_000, "minute"), (1000, "second"))


def _count(value: float, unit: str) -> str:
    text = f"{value:g}"
    return f"every {unit}" if text == "1" else f"every {text} {unit}s"


def describe_every(every_ms: int) -> str:
    """``every_ms`` in the largest unit that reads well (``every 10 minutes``, ``every 1.5 seconds``)."""
    for size, unit in _UNITS:
        if every_ms >= size and (
            every_ms % size == 0 or (every_ms // size < 10 and every_ms * 10 % size == 0)
        ):
            return _count(every_ms / size, unit)
    return f"every {every_ms} ms"


def _list(values: tuple[int, ...], names: tuple[str, ...], offset: int = 0) -> str:
    words = [names[v - offset] for v in values]
    if len(values) > 2 and values == tuple(range(values[0], values[-1] + 1)):
        return f"{words[0]} to {words[-1]}"
    return ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else words[0]


def _step(values: tuple[int, ...], low: int, high: int) -> int | None:
    """The step when ``values`` is ``low, low+s, ...`` up to the field's end and ``s`` divides the field, else None.

    ``*/7`` on minutes fires at :56 and then :00, four minutes apart: "every 7 minutes" would be wrong.
    """
    if len(values) < 2 or values[0] != low:
        return None
    step = values[1] - values[0]
    regular = (high - low + 1) % step == 0
    return step if regular and values == tuple(range(low, high + 1, step)) else None


def _days(spec: CronSpec) -> str | None:
    parts: list[str] = []
    if spec.day_of_month_restricted and spec.day_of_week_restricted:
        return None  # the "either" rule reads badly in words: the expression is clearer
    if spec.day_of_week_restricted:
        parts.append(("every " if len(spec.days_of_week) == 1 else "") + _list(spec.days_of_week, _DAYS))
    elif spec.day_of_month_restricted:
        days = ", ".join(str(d) for d in spec.days_of_month)
        parts.append(f"on day{'s' if len(spec.days_of_month) > 1 else ''} {days} of")
    if len(spec.months) < 12:
        if not parts:
            parts.append("every day")
        parts.append(("in " if not spec.day_of_month_restricted else "") + _list(spec.months, _MONTHS, 1))
    elif spec.day_of_month_restricted:
        parts.append("every month")
    return " ".join(parts) if parts else "every day"


def _times(spec: CronSpec) -> str | None:
    every_hour = len(spec.hours) == 24
    minute_step = _step(spec.minutes, 0, 59)
    if every_hour and len(spec.minutes) == 60:
        return "every minute"
    if every_hour and minute_step is not None:
        return f"every {minute_step} minutes"
    hour_step = _step(spec.hours, 0, 23)
    if len(spec.minutes) == 1 and (every_hour or hour_step is not None):
        hours = "every hour" if every_hour else f"every {hour_step} hours"
        return f"{hours} at minute {spec.minutes[0]}"
    if len(spec.hours) * len(spec.minutes) <= 4:
        return "at " + ", ".join(f"{h:02d}:{m:02d}" for h in spec.hours for m in spec.minutes)
    return None


def describe(timing: Timing) -> str:
    """``timing`` in words; a cron shape with no sentence reads as ``cron <expression>, <zone>``."""
    if timing.every_ms is not None:
        return describe_every(timing.every_ms)
    assert timing.cron is not None
    spec = parse_cron(timing.cron)
    days, times = _days(spec), _times(spec)
    if days is None or times is None:
        return f"cron {timing.cron}, {timing.timezone}"
    if days == "every day" and times.startswith("every"):
        return f"{times}, {timing.timezone}"
    if times.startswith("every"):
        days = days.removeprefix("every day ")
        return f"{times} {'on ' if spec.day_of_week_restricted else ''}{days}, {timing.timezone}"
    return f"{days} {times}, {timing.timezone}"
