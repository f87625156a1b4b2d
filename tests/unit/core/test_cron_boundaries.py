"""Cron edges mutation testing found untested: a December that does not match, and step limits of fields
that start at 1 (issue 17). Limits are literal numbers here, not derived from the code's tables."""

from __future__ import annotations

import datetime as dt

import pytest

from tsumugi_core.cron import InvalidCronError, next_cron_at, parse_cron


def ms(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> int:
    return int(dt.datetime(year, month, day, hour, minute, tzinfo=dt.UTC).timestamp()) * 1000


def test_a_december_that_does_not_match_moves_on_to_the_first_of_january() -> None:
    # December is skipped month-wise from its 5th: the next month starts on 1 January of the next year.
    assert next_cron_at("0 0 * 1 *", ms(2026, 12, 5, 12)) == ms(2027, 1, 1)
    assert next_cron_at("30 6 * 1,2 *", ms(2026, 12, 31, 7)) == ms(2027, 1, 1, 6, 30)


def test_a_january_only_first_of_month_is_found_from_mid_december() -> None:
    assert next_cron_at("0 0 1 1 *", ms(2026, 12, 15)) == ms(2027, 1, 1)


@pytest.mark.parametrize(
    ("expression", "field", "allowed"),
    [
        ("* */24 * * *", "hours", (0,)),
        ("* * */31 * *", "days_of_month", (1,)),
        ("* * 1-31/31 * *", "days_of_month", (1,)),
        ("* * * */12 *", "months", (1,)),
        ("* * * 1-12/12 *", "months", (1,)),
    ],
)
def test_the_largest_step_of_a_field_is_its_width(
    expression: str, field: str, allowed: tuple[int, ...]
) -> None:
    assert getattr(parse_cron(expression), field) == allowed


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("* * */32 * *", "day of month step value out of range (1-31): 32"),
        ("* * * */13 *", "month step value out of range (1-12): 13"),
        ("* */25 * * *", "hour step value out of range (1-24): 25"),
        ("* * * * */9", "day of week step value out of range (1-8): 9"),
    ],
)
def test_one_more_than_the_width_is_refused_naming_the_field(expression: str, message: str) -> None:
    with pytest.raises(InvalidCronError) as caught:
        parse_cron(expression)
    assert str(caught.value) == message


def midnight_ms(day: dt.date) -> int:
    return ms(day.year, day.month, day.day)


def test_the_search_covers_1830_days_from_its_first_day_and_not_one_more() -> None:
    # 2100 is not a leap year: after 29 February 2096 the next one is 29 February 2104, 2,922 days later.
    leap_day = dt.date(2104, 2, 29)
    last_start = leap_day - dt.timedelta(days=1_829)  # the leap day is the 1,830th day searched
    assert next_cron_at("0 0 29 2 *", midnight_ms(last_start) - 60_000) == midnight_ms(leap_day)
    one_day_earlier = leap_day - dt.timedelta(days=1_830)
    with pytest.raises(InvalidCronError, match="no occurrence within 1830 days"):
        next_cron_at("0 0 29 2 *", midnight_ms(one_day_earlier) - 60_000)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("* * 1-x * *", "invalid day of month value: x"),
        ("* * 1-32 * *", "day of month value out of range (1-31): 32"),
        ("* * * 2-13 *", "month value out of range (1-12): 13"),
    ],
)
def test_a_bad_range_end_is_named_by_its_field(expression: str, message: str) -> None:
    with pytest.raises(InvalidCronError) as caught:
        parse_cron(expression)
    assert str(caught.value) == message
