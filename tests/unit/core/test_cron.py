"""The cron dialect: parsing, error messages and next occurrence.

Source: docs/reference/original.md §3.12, §2.14.
"""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tsumugi_core.cron import SEARCH_HORIZON_DAYS, CronSpec, InvalidCronError, next_cron_at, parse_cron

UTC = dt.UTC


def ms(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> int:
    return int(dt.datetime(year, month, day, hour, minute, second, tzinfo=UTC).timestamp()) * 1000


class TestReferenceExamples:
    def test_every_minute_rounds_up_to_the_next_minute(self) -> None:
        assert next_cron_at("* * * * *", ms(2026, 1, 5, 10, 20, 30)) == ms(2026, 1, 5, 10, 21)

    def test_a_time_exactly_on_a_match_returns_the_next_occurrence(self) -> None:
        assert next_cron_at("0 3 * * *", ms(2026, 1, 5, 3, 0, 0)) == ms(2026, 1, 6, 3, 0)

    def test_day_of_month_or_day_of_week_when_both_are_restricted(self) -> None:
        # Mon 2026-01-05 12:00: the 13th is the following Tuesday, but Friday 01-09 comes first.
        assert dt.date(2026, 1, 5).weekday() == 0
        assert next_cron_at("0 0 13 * 5", ms(2026, 1, 5, 12)) == ms(2026, 1, 9)

    def test_leap_day_waits_for_the_next_leap_year(self) -> None:
        assert next_cron_at("0 0 29 2 *", ms(2025, 3, 1)) == ms(2028, 2, 29)


class TestNextCronAt:
    def test_accepts_a_parsed_spec(self) -> None:
        spec = parse_cron("30 * * * *")
        assert next_cron_at(spec, ms(2026, 1, 1, 0, 30)) == ms(2026, 1, 1, 1, 30)

    def test_milliseconds_inside_a_matching_minute_go_to_the_next_match(self) -> None:
        assert next_cron_at("* * * * *", ms(2026, 1, 1, 0, 0) + 59_999) == ms(2026, 1, 1, 0, 1)

    def test_later_minute_in_the_same_hour(self) -> None:
        assert next_cron_at("10,40 * * * *", ms(2026, 1, 1, 5, 10)) == ms(2026, 1, 1, 5, 40)

    def test_rolls_over_to_the_next_allowed_hour(self) -> None:
        assert next_cron_at("10 5,7 * * *", ms(2026, 1, 1, 5, 10)) == ms(2026, 1, 1, 7, 10)

    def test_rolls_over_the_year(self) -> None:
        assert next_cron_at("0 0 1 1 *", ms(2026, 12, 31, 23, 59)) == ms(2027, 1, 1)

    def test_skips_to_an_allowed_month(self) -> None:
        assert next_cron_at("15 6 * 11 *", ms(2026, 3, 2)) == ms(2026, 11, 1, 6, 15)

    def test_day_of_week_only(self) -> None:
        # 2026-01-05 is a Monday; "6" is Saturday.
        assert next_cron_at("0 9 * * 6", ms(2026, 1, 5)) == ms(2026, 1, 10, 9)

    def test_seven_means_sunday(self) -> None:
        assert next_cron_at("0 0 * * 7", ms(2026, 1, 5)) == ms(2026, 1, 11)
        assert parse_cron("0 0 * * 7").days_of_week == (0,)
        assert parse_cron("0 0 * * 0,7").days_of_week == (0,)

    def test_day_of_month_only_requires_both_when_weekday_is_star(self) -> None:
        assert next_cron_at("0 0 13 * *", ms(2026, 1, 5)) == ms(2026, 1, 13)

    def test_stepped_star_counts_as_restricted(self) -> None:
        # "*/1" is not literally "*": with a restricted day of month the OR rule applies and every day matches.
        assert next_cron_at("0 0 13 * */1", ms(2026, 1, 5, 12)) == ms(2026, 1, 6)

    def test_month_ranges_with_steps(self) -> None:
        assert next_cron_at("0 0 1 1-12/3 *", ms(2026, 2, 1)) == ms(2026, 4, 1)

    def test_day_31_skips_short_months(self) -> None:
        assert next_cron_at("0 0 31 * *", ms(2026, 4, 1)) == ms(2026, 5, 31)

    def test_before_the_epoch(self) -> None:
        assert next_cron_at("0 0 * * *", -1) == 0

    def test_impossible_date_raises(self) -> None:
        with pytest.raises(InvalidCronError, match=r"^no occurrence within 1830 days$"):
            next_cron_at("0 0 31 2 *", ms(2026, 1, 1))
        with pytest.raises(InvalidCronError, match="no occurrence within 1830 days"):
            next_cron_at("0 0 30 2 *", ms(2026, 1, 1))

    def test_leap_day_beyond_the_horizon_raises(self) -> None:
        # 2100 is not a leap year: from 2096-03-01 the next 29 February is in 2104, past 1830 days.
        with pytest.raises(InvalidCronError, match="no occurrence"):
            next_cron_at("0 0 29 2 *", ms(2096, 3, 1))

    def test_horizon_is_1830_days(self) -> None:
        assert SEARCH_HORIZON_DAYS == 1830

    def test_weekday_or_leap_day_in_february(self) -> None:
        # Both day fields restricted: any Monday in February, or 29 February.
        assert next_cron_at("59 23 29 2 1", ms(2026, 1, 1)) == ms(2026, 2, 2, 23, 59)
        assert next_cron_at("59 23 29 2 1", ms(2028, 2, 28)) == ms(2028, 2, 28, 23, 59)
        assert next_cron_at("59 23 29 2 1", ms(2028, 2, 28, 23, 59)) == ms(2028, 2, 29, 23, 59)


class TestParse:
    def test_spec_fields(self) -> None:
        spec = parse_cron("  */15 9-17/4 1,15 * 1-5 ")
        assert spec == CronSpec(
            expression="  */15 9-17/4 1,15 * 1-5 ",
            minutes=(0, 15, 30, 45),
            hours=(9, 13, 17),
            days_of_month=(1, 15),
            months=tuple(range(1, 13)),
            days_of_week=(1, 2, 3, 4, 5),
            day_of_month_restricted=True,
            day_of_week_restricted=True,
        )

    def test_star_fields_are_unrestricted(self) -> None:
        spec = parse_cron("0 0 * * *")
        assert not spec.day_of_month_restricted
        assert not spec.day_of_week_restricted
        assert spec.days_of_week == (0, 1, 2, 3, 4, 5, 6)

    def test_tabs_and_repeated_spaces_separate_fields(self) -> None:
        assert parse_cron("5\t4  * * *").hours == (4,)

    def test_largest_step_is_the_field_width(self) -> None:
        assert parse_cron("*/60 * * * *").minutes == (0,)
        assert parse_cron("* * * * */8").days_of_week == (0,)

    def test_duplicates_collapse(self) -> None:
        assert parse_cron("5,5,0-10/5 * * * *").minutes == (0, 5, 10)

    def test_leading_zeros(self) -> None:
        assert parse_cron("07 * * * *").minutes == (7,)


class TestParseErrors:
    @pytest.mark.parametrize(
        ("expression", "message"),
        [
            ("* * * *", "expected 5 fields (minute hour day month weekday): * * * *"),
            ("* * * * * *", "expected 5 fields (minute hour day month weekday): * * * * * *"),
            ("", "expected 5 fields (minute hour day month weekday): "),
            ("x * * * *", "invalid minute value: x"),
            ("* * * JAN *", "invalid month value: JAN"),
            ("* * * * MON", "invalid day of week value: MON"),
            ("-1 * * * *", "invalid minute value: "),
            ("\u0665 * * * *", "invalid minute value: \u0665"),
            ("60 * * * *", "minute value out of range (0-59): 60"),
            ("* 24 * * *", "hour value out of range (0-23): 24"),
            ("* * 0 * *", "day of month value out of range (1-31): 0"),
            ("* * 32 * *", "day of month value out of range (1-31): 32"),
            ("* * * 0 *", "month value out of range (1-12): 0"),
            ("* * * 13 *", "month value out of range (1-12): 13"),
            ("* * * * 8", "day of week value out of range (0-7): 8"),
            # int() refuses a text of over 4,300 digits; the rule is the same as for 60.
            ("1" * 5000 + " * * * *", "minute value out of range (0-59): " + "1" * 5000),
            ("*/" + "9" * 5000 + " * * * *", "minute step value out of range (1-60): " + "9" * 5000),
            ("30-10 * * * *", "minute range is reversed: 30-10"),
            ("1-2-3 * * * *", "invalid minute range: 1-2-3"),
            ("*/5/2 * * * *", "invalid minute step: */5/2"),
            ("5/2 * * * *", "step requires a range: 5/2"),
            ("*/0 * * * *", "minute step value out of range (1-60): 0"),
            ("*/61 * * * *", "minute step value out of range (1-60): 61"),
            ("* */25 * * *", "hour step value out of range (1-24): 25"),
            ("*/x * * * *", "invalid minute step value: x"),
            ("*/ * * * *", "invalid minute step value: "),
            ("1,,2 * * * *", "empty minute entry: 1,,2"),
            ("* 1, * * *", "empty hour entry: 1,"),
            ("* * * ,1 *", "empty month entry: ,1"),
        ],
    )
    def test_rejections_name_the_field_and_rule(self, expression: str, message: str) -> None:
        with pytest.raises(InvalidCronError) as caught:
            parse_cron(expression)
        assert str(caught.value) == message

    def test_next_cron_at_parses_strings(self) -> None:
        with pytest.raises(InvalidCronError, match="invalid minute value"):
            next_cron_at("x * * * *", 0)

    def test_is_a_value_error(self) -> None:
        assert issubclass(InvalidCronError, ValueError)


def _brute_force_next(spec: CronSpec, after_ms: int, limit_minutes: int) -> int | None:
    """Reference model: step minute by minute (only usable for short windows)."""
    minute = after_ms // 60_000 + 1
    for candidate in range(minute, minute + limit_minutes):
        at = dt.datetime.fromtimestamp(candidate * 60, UTC)
        if (
            at.minute in spec.minutes
            and at.hour in spec.hours
            and at.month in spec.months
            and spec.matches_day(at.date())
        ):
            return candidate * 60_000
    return None


def _field(low: int, high: int) -> st.SearchStrategy[str]:
    value = st.integers(low, high).map(str)
    span = st.tuples(st.integers(low, high), st.integers(low, high)).map(
        lambda pair: f"{min(pair)}-{max(pair)}"
    )
    stepped = st.tuples(st.sampled_from(["*", f"{low}-{high}"]), st.integers(1, 7)).map(
        lambda pair: f"{pair[0]}/{pair[1]}"
    )
    item = st.one_of(st.just("*"), value, span, stepped)
    return st.lists(item, min_size=1, max_size=3).map(",".join)


@settings(max_examples=60, deadline=None)
@given(
    minute=_field(0, 59),
    hour=_field(0, 23),
    day=_field(1, 31),
    weekday=_field(0, 7),
    after_minutes=st.integers(0, 60 * 24 * 365 * 60),
)
def test_agrees_with_a_minute_by_minute_reference(
    minute: str, hour: str, day: str, weekday: str, after_minutes: int
) -> None:
    # Month is left free so the answer (if any) lies within the 40-day brute-force window.
    spec = parse_cron(f"{minute} {hour} {day} * {weekday}")
    after_ms = after_minutes * 60_000 + 1234
    expected = _brute_force_next(spec, after_ms, 60 * 24 * 40)
    if expected is None:
        assert next_cron_at(spec, after_ms) > after_ms + 40 * 86_400_000 - 60_000
    else:
        assert next_cron_at(spec, after_ms) == expected


# A December that does not match, and the step limits of fields that start at 1. Limits are literal numbers
# here, not derived from the code's tables.


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
