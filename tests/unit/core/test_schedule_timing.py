"""Schedule timing: first fire, phase, the missed-period rule and cron in IANA time zones (ADR-0078)."""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Iterator
from typing import Any, cast

import pytest

from tsumugi_core.schedule_timing import (
    MAX_EVERY_MS,
    InvalidTimingError,
    Timing,
    first_occurrence,
    next_after,
    next_occurrences,
    validate_timing,
)

UTC = dt.UTC
MIN = 60_000


def z(text: str) -> int:
    """An ISO instant with its offset, as epoch ms."""
    return int(dt.datetime.fromisoformat(text).timestamp() * 1000)


def iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%MZ")


class TestEveryMs:
    def test_first_fire_is_one_period_after_registration(self) -> None:
        assert first_occurrence(Timing(every_ms=60_000), 1_000) == 61_000

    def test_on_time_fire_keeps_the_phase(self) -> None:
        assert next_after(Timing(every_ms=60_000), 61_000, 61_000) == 121_000
        assert next_after(Timing(every_ms=60_000), 61_000, 61_500) == 121_000

    def test_late_alarm_fires_the_oldest_and_jumps_to_the_next_boundary_after_now(self) -> None:
        # The original's example: every 60 s, woken 3 periods + 1 s late: next = first + 240 s.
        first = 60_000
        assert next_after(Timing(every_ms=60_000), first, 3 * 60_000 + 1_000) == 240_000

    def test_now_exactly_on_a_boundary_skips_it(self) -> None:
        assert next_after(Timing(every_ms=1_000), 1_000, 3_000) == 4_000


class TestCronUtc:
    def test_first_fire_is_the_first_match_after_registration(self) -> None:
        assert first_occurrence(Timing(cron="0 3 * * *"), z("2026-01-05T03:00:00+00:00")) == z(
            "2026-01-06T03:00:00+00:00"
        )

    def test_late_alarm_skips_missed_matches(self) -> None:
        timing = Timing(cron="*/5 * * * *")
        occurrence = z("2026-01-05T10:00:00+00:00")
        assert next_after(timing, occurrence, z("2026-01-05T10:17:00+00:00")) == z(
            "2026-01-05T10:20:00+00:00"
        )

    def test_original_cron_examples_hold(self) -> None:
        assert next_after(Timing(cron="0 0 13 * 5"), z("2026-01-05T12:00:00+00:00")) == z(
            "2026-01-09T00:00:00+00:00"
        )
        assert next_after(Timing(cron="0 0 29 2 *"), z("2025-03-01T00:00:00+00:00")) == z(
            "2028-02-29T00:00:00+00:00"
        )


class TestCronInAZone:
    def test_tokyo_has_no_daylight_saving_and_reads_local_time(self) -> None:
        timing = Timing(cron="0 3 * * *", timezone="Asia/Tokyo")
        assert iso(first_occurrence(timing, z("2026-01-05T00:00:00+00:00"))) == "2026-01-05T18:00Z"

    @pytest.mark.parametrize(
        ("zone", "cron", "before", "expected"),
        [
            # New York springs forward 2026-03-08 02:00 EST -> 03:00 EDT: 02:30 does not exist.
            ("America/New_York", "30 2 * * *", "2026-03-07T07:30:00+00:00", "2026-03-08T07:00Z"),
            # Berlin springs forward 2026-03-29 02:00 CET -> 03:00 CEST.
            ("Europe/Berlin", "30 2 * * *", "2026-03-28T01:30:00+00:00", "2026-03-29T01:00Z"),
        ],
    )
    def test_a_skipped_local_time_fires_once_at_the_first_valid_minute(
        self, zone: str, cron: str, before: str, expected: str
    ) -> None:
        timing = Timing(cron=cron, timezone=zone)
        gap_fire = next_after(timing, z(before))
        assert iso(gap_fire) == expected
        # ...and the day after, the normal local time again.
        assert next_after(timing, gap_fire) - gap_fire == 23 * 3_600_000 + 30 * MIN  # 03:00 -> 02:30 next day

    @pytest.mark.parametrize(
        ("zone", "start"),
        [("America/New_York", "2026-03-08T06:00:00+00:00"), ("Europe/Berlin", "2026-03-29T00:00:00+00:00")],
    )
    def test_every_minute_of_a_gap_fires_one_occurrence_at_its_end(self, zone: str, start: str) -> None:
        # */15 in the skipped hour: 02:00, 02:15, 02:30, 02:45 all map to 03:00, which fires once.
        fires = next_occurrences(
            Timing(cron="*/15 2,3 * * *", timezone=zone),
            next_after(Timing(cron="*/15 2,3 * * *", timezone=zone), z(start)),
            5,
        )
        gap_end = fires[0]
        assert fires == [gap_end, gap_end + 15 * MIN, gap_end + 30 * MIN, gap_end + 45 * MIN, fires[4]]
        assert fires[4] == gap_end + 23 * 3_600_000  # the next day's 02:00

    @pytest.mark.parametrize(
        ("zone", "cron", "start", "first_pass"),
        [
            # New York falls back 2026-11-01 02:00 EDT -> 01:00 EST: 01:30 happens twice.
            ("America/New_York", "30 1 * * *", "2026-11-01T04:00:00+00:00", "2026-11-01T05:30Z"),
            # Berlin falls back 2026-10-25 03:00 CEST -> 02:00 CET: 02:30 happens twice.
            ("Europe/Berlin", "30 2 * * *", "2026-10-24T22:00:00+00:00", "2026-10-25T00:30Z"),
        ],
    )
    def test_a_repeated_local_time_fires_once_at_its_first_occurrence(
        self, zone: str, cron: str, start: str, first_pass: str
    ) -> None:
        timing = Timing(cron=cron, timezone=zone)
        first = next_after(timing, z(start))
        assert iso(first) == first_pass
        following = next_after(timing, first)
        # Not an hour later (the second pass): the next day, 25 hours on.
        assert following - first == 25 * 3_600_000

    def test_registered_during_the_second_pass_skips_times_that_already_occurred(self) -> None:
        timing = Timing(cron="*/20 1 * * *", timezone="America/New_York")
        # 01:10 EST (second pass) = 06:10Z; 01:20 and 01:40 already happened in the first pass (EDT).
        assert iso(first_occurrence(timing, z("2026-11-01T06:10:00+00:00"))) == "2026-11-02T06:00Z"

    def test_late_alarm_in_a_zone_fires_the_next_local_boundary_after_now(self) -> None:
        timing = Timing(cron="0 * * * *", timezone="Europe/Berlin")
        occurrence = z("2026-01-05T09:00:00+01:00")
        assert next_after(timing, occurrence, z("2026-01-05T11:30:00+01:00")) == z(
            "2026-01-05T12:00:00+01:00"
        )


class TestNextOccurrences:
    def test_lists_the_start_and_those_after_it(self) -> None:
        assert next_occurrences(Timing(every_ms=1_000), 5_000, 3) == [5_000, 6_000, 7_000]

    def test_cron_in_a_zone(self) -> None:
        got = next_occurrences(
            Timing(cron="0 9 * * 1-5", timezone="Asia/Tokyo"), z("2026-01-09T00:00:00+00:00"), 2
        )
        assert [iso(m) for m in got] == ["2026-01-09T00:00Z", "2026-01-12T00:00Z"]


class TestValidation:
    @pytest.mark.parametrize(
        ("timing", "message"),
        [
            (Timing(), "every_ms or cron: exactly one is required"),
            (Timing(every_ms=1000, cron="* * * * *"), "every_ms or cron: exactly one is required"),
            (Timing(every_ms=999), "every_ms must be an integer of at least 1000, got 999"),
            (Timing(every_ms=True), "every_ms must be an integer of at least 1000, got True"),
            (
                Timing(every_ms=366 * 86_400_000 + 1),
                "every_ms must be at most 31622400000 (366 days), got 31622400001",
            ),
            (Timing(cron="0 0 31 2 *"), "cron is invalid: no occurrence within 1830 days"),
            (Timing(cron="0 0 * * MON"), "cron is invalid: invalid day of week value: MON"),
            (
                Timing(cron="0 3 * * *", timezone="Mars/Olympus"),
                "timezone must be an IANA time zone such as Asia/Tokyo, got 'Mars/Olympus'",
            ),
            (
                Timing(cron="0 3 * * *", timezone="../etc/passwd"),
                "timezone must be an IANA time zone such as Asia/Tokyo, got '../etc/passwd'",
            ),
            (
                Timing(every_ms=1000, timezone="Asia/Tokyo"),
                "timezone applies to cron only: every_ms is a period in real time",
            ),
        ],
    )
    def test_each_rule_names_its_field(self, timing: Timing, message: str) -> None:
        with pytest.raises(InvalidTimingError) as caught:
            validate_timing(timing)
        assert str(caught.value) == message

    def test_valid_timings_pass(self) -> None:
        assert validate_timing(Timing(every_ms=1000)) == Timing(every_ms=1000)
        assert validate_timing(Timing(cron="0 3 * * *", timezone="Asia/Tokyo")).timezone == "Asia/Tokyo"


# The edges of the timing rules: the every_ms bounds, milliseconds, odd minutes in a gap, the machine's zone.


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


@pytest.mark.parametrize("name", ["America", "Etc", "Europe/"])
def test_a_folder_of_zones_is_not_a_zone(name: str) -> None:
    # zoneinfo raises IsADirectoryError (an OSError) for a folder of tzdata, not ZoneInfoNotFoundError.
    with pytest.raises(InvalidTimingError) as caught:
        validate_timing(Timing(cron="0 3 * * *", timezone=name))
    assert caught.value.field == "timezone"
