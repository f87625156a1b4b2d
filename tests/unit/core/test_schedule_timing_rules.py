"""The edges of the timing rules: the every_ms bounds, milliseconds, odd minutes in a gap, the machine's zone."""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Iterator
from typing import Any, cast

import pytest

from tsumugi_core.schedule_timing import MAX_EVERY_MS, InvalidTimingError, Timing, next_after, validate_timing

MIN = 60_000


def z(text: str) -> int:
    """An ISO instant with its offset, as epoch ms."""
    return int(dt.datetime.fromisoformat(text).timestamp() * 1000)


def test_every_ms_of_exactly_366_days_is_allowed() -> None:
    assert validate_timing(Timing(every_ms=MAX_EVERY_MS)).every_ms == 366 * 86_400_000


@pytest.mark.parametrize("value", [1500.0, "5000"])
def test_every_ms_that_is_not_an_integer_is_refused(value: object) -> None:
    # Callers that bypass typing (a decoded dict, a test double) get the rule, not a TypeError.
    with pytest.raises(InvalidTimingError) as caught:
        validate_timing(Timing(every_ms=cast(Any, value)))
    assert (caught.value.field, caught.value.rule) == (
        "every_ms",
        f"must be an integer of at least 1000, got {value!r}",
    )


def test_the_milliseconds_of_now_count_in_a_zone() -> None:
    # One millisecond before 04:57:00 in Tokyo: the next minute is 04:57:00 itself, not 04:58. (This instant's
    # remainders by 1000 and by 1001 differ, so the reading must divide by exactly 1000.)
    now = 60_060_000 * 29_637 - 1
    assert dt.datetime.fromtimestamp((now + 1) / 1000, dt.UTC).isoformat() == "2026-05-28T19:57:00+00:00"
    assert next_after(Timing(cron="* * * * *", timezone="Asia/Tokyo"), now) == now + 1


@pytest.mark.parametrize("cron", ["15 2 * * *", "45 2 * * *", "59 2 * * *"])
def test_an_odd_minute_in_a_gap_fires_at_the_gap_end_not_after_it(cron: str) -> None:
    # New York skips 02:00-03:00 on 2026-03-08: every skipped minute fires at 03:00 EDT (07:00Z) exactly.
    timing = Timing(cron=cron, timezone="America/New_York")
    assert next_after(timing, z("2026-03-07T12:00:00+00:00")) == z("2026-03-08T07:00:00+00:00")


@pytest.fixture
def machine_zone_west_of_utc() -> Iterator[None]:
    """The process's local zone set to UTC-5 (POSIX TZ): results must not depend on it."""
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "EST5"
    time.tzset()
    try:
        yield
    finally:
        if saved is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = saved
        time.tzset()


@pytest.mark.usefixtures("machine_zone_west_of_utc")
@pytest.mark.parametrize(
    ("zone", "now", "expected"),
    [
        ("Asia/Tokyo", "2026-01-05T00:00:00+09:00", "2026-01-05T03:00:00+09:00"),
        ("America/New_York", "2026-01-05T00:00:00-05:00", "2026-01-05T03:00:00-05:00"),
        ("Europe/Berlin", "2026-07-05T02:59:00+02:00", "2026-07-05T03:00:00+02:00"),
    ],
)
def test_the_machine_local_zone_does_not_shift_a_zone_cron(zone: str, now: str, expected: str) -> None:
    assert next_after(Timing(cron="0 3 * * *", timezone=zone), z(now)) == z(expected)
