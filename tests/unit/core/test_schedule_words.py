"""A schedule's timing in words."""

from __future__ import annotations

import pytest

from tsumugi_core.schedule_timing import Timing
from tsumugi_core.schedule_words import describe, describe_every


@pytest.mark.parametrize(
    ("timing", "words"),
    [
        (Timing(cron="0 3 * * *", timezone="Asia/Tokyo"), "every day at 03:00, Asia/Tokyo"),
        (Timing(cron="* * * * *"), "every minute, UTC"),
        (Timing(cron="*/10 * * * *"), "every 10 minutes, UTC"),
        (Timing(cron="5 * * * *"), "every hour at minute 5, UTC"),
        (Timing(cron="0 */6 * * *"), "every 6 hours at minute 0, UTC"),
        (Timing(cron="30 9 * * 1-5"), "Monday to Friday at 09:30, UTC"),
        (Timing(cron="0 9 * * 0,6"), "Sunday and Saturday at 09:00, UTC"),
        (Timing(cron="0 9 * * 7"), "every Sunday at 09:00, UTC"),
        (Timing(cron="0 0 1,15 * *"), "on days 1, 15 of every month at 00:00, UTC"),
        (Timing(cron="0 0 1 1 *"), "on day 1 of January at 00:00, UTC"),
        (Timing(cron="0 8 * 6-8 *"), "every day in June to August at 08:00, UTC"),
        (Timing(cron="*/5 * * 6 *"), "every 5 minutes in June, UTC"),
        (Timing(cron="15 10,22 * * *"), "every day at 10:15, 22:15, UTC"),
        (Timing(cron="0 0 13 * 5"), "cron 0 0 13 * 5, UTC"),
        (Timing(cron="1,2,3,4,5 1,2 * * *"), "cron 1,2,3,4,5 1,2 * * *, UTC"),
        (Timing(every_ms=1000), "every second"),
        (Timing(every_ms=1500), "every 1.5 seconds"),
        (Timing(every_ms=600_000), "every 10 minutes"),
        (Timing(every_ms=7_200_000), "every 2 hours"),
        (Timing(every_ms=86_400_000), "every day"),
        (Timing(every_ms=12_345), "every 12345 ms"),
    ],
)
def test_reads(timing: Timing, words: str) -> None:
    assert describe(timing) == words


# The boundaries of the words rules: which periods read in units, how lists join, when times are listed.


@pytest.mark.parametrize(
    ("every_ms", "words"),
    [
        (1234, "every 1234 ms"),  # under 10 seconds but not a tenth of one: milliseconds
        (9500, "every 9.5 seconds"),  # under 10 units: a tenth reads well
        (10_500, "every 10500 ms"),  # 10 units or more: whole units only
        (5_400_000, "every 1.5 hours"),
        (36_000_000, "every 10 hours"),
    ],
)
def test_a_fraction_reads_only_below_ten_units_and_in_tenths(every_ms: int, words: str) -> None:
    assert describe_every(every_ms) == words


@pytest.mark.parametrize(
    ("cron", "words"),
    [
        # Two neighbouring days are joined with "and"; a run of three or more reads "to".
        ("0 9 * * 1,2", "Monday and Tuesday at 09:00, UTC"),
        ("0 9 * * 1-3", "Monday to Wednesday at 09:00, UTC"),
        ("0 9 * * 1,3,5", "Monday, Wednesday and Friday at 09:00, UTC"),
        ("0 9 * 1,4,7,10 *", "every day in January, April, July and October at 09:00, UTC"),
        # A step over the whole field, however few its values.
        ("*/30 * * * *", "every 30 minutes, UTC"),
        ("*/2 * * * *", "every 2 minutes, UTC"),
        ("0 */2 * * *", "every 2 hours at minute 0, UTC"),
        ("0 */12 * * *", "every 12 hours at minute 0, UTC"),
        # Values from the field's start that are not a step up to its end are not "every n".
        ("0,10 * * * *", "cron 0,10 * * * *, UTC"),
        ("0 0,5 * * *", "every day at 00:00, 05:00, UTC"),
        # Up to four times of day are listed; five are not.
        ("0,30 9,17 * * *", "every day at 09:00, 09:30, 17:00, 17:30, UTC"),
        ("0 1,2,3,4,5 * * *", "cron 0 1,2,3,4,5 * * *, UTC"),
        # A repeating time on some weekdays reads "on" the days; on some months it reads "in".
        ("*/15 * * * 1-5", "every 15 minutes on Monday to Friday, UTC"),
        ("0 * * * 6", "every hour at minute 0 on every Saturday, UTC"),
        ("*/5 * * 6 *", "every 5 minutes in June, UTC"),
    ],
)
def test_cron_shapes_at_the_edges_of_each_rule(cron: str, words: str) -> None:
    assert describe(Timing(cron=cron)) == words


@pytest.mark.parametrize(
    ("cron", "words"),
    [
        # A step that does not divide the field leaves a shorter gap where the field wraps: no interval.
        ("*/7 * * * *", "cron */7 * * * *, UTC"),
        ("*/45 * * * *", "cron */45 * * * *, UTC"),
        ("0 */5 * * *", "cron 0 */5 * * *, UTC"),
        ("*/15 * * * *", "every 15 minutes, UTC"),
        ("0 */8 * * *", "every 8 hours at minute 0, UTC"),
    ],
)
def test_a_step_reads_as_an_interval_only_when_the_gaps_are_equal(cron: str, words: str) -> None:
    assert describe(Timing(cron=cron)) == words
