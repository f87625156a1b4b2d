"""A schedule's timing in words."""

from __future__ import annotations

import pytest

from tsumugi_core.schedule_timing import Timing
from tsumugi_core.schedule_words import describe


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
