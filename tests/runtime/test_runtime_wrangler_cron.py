"""Cloudflare's cron dialect for ``triggers.crons`` (``tsumugi_dev.wrangler_cron``) and its config check."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tsumugi_dev.config import ConfigError, load_config
from tsumugi_dev.wrangler_cron import WranglerCronError, next_fire_at, parse_wrangler_cron


def fires(expression: str, after: str, count: int = 3) -> list[str]:
    """The next ``count`` instants of ``expression`` after ``after`` (ISO date, UTC), as 'Mon 2026-01-05 17:00'."""
    spec = parse_wrangler_cron(expression)
    at = int(dt.datetime.fromisoformat(after).replace(tzinfo=dt.UTC).timestamp() * 1000)
    found: list[str] = []
    for _ in range(count):
        at = next_fire_at(spec, at)
        found.append(dt.datetime.fromtimestamp(at / 1000, dt.UTC).strftime("%a %Y-%m-%d %H:%M"))
    return found


def test_weekday_1_is_sunday_and_names_mean_the_same() -> None:
    assert fires("0 17 * * 1", "2026-01-03", 2) == ["Sun 2026-01-04 17:00", "Sun 2026-01-11 17:00"]
    assert fires("0 17 * * sun", "2026-01-03", 2) == fires("0 17 * * 1", "2026-01-03", 2)
    assert fires("10 7 * * mon-fri", "2026-01-03", 5) == fires("10 7 * * 2-6", "2026-01-03", 5)
    assert fires("10 7 * * MON-FRI", "2026-01-03", 1) == ["Mon 2026-01-05 07:10"]


def test_month_names_steps_and_wrapping_ranges() -> None:
    assert fires("0 0 1 feb,Apr *", "2026-01-03", 2) == ["Sun 2026-02-01 00:00", "Wed 2026-04-01 00:00"]
    assert fires("0 9 * * FRI-SUN", "2026-01-05", 3) == [
        "Fri 2026-01-09 09:00",
        "Sat 2026-01-10 09:00",
        "Sun 2026-01-11 09:00",
    ]
    assert fires("*/20 22-1 * * *", "2026-01-05 00:50", 4) == [  # hours 22, 23, 0 and 1
        "Mon 2026-01-05 01:00",
        "Mon 2026-01-05 01:20",
        "Mon 2026-01-05 01:40",
        "Mon 2026-01-05 22:00",
    ]
    assert fires("45/5 0 * * *", "2026-01-05", 3) == [
        "Mon 2026-01-05 00:45",
        "Mon 2026-01-05 00:50",
        "Mon 2026-01-05 00:55",
    ]


def test_last_day_and_offsets_from_it() -> None:
    assert fires("0 0 L * *", "2028-01-31", 2) == ["Tue 2028-02-29 00:00", "Fri 2028-03-31 00:00"]
    assert fires("0 0 L-3 * *", "2026-02-01", 1) == ["Wed 2026-02-25 00:00"]


def test_w_is_the_nearest_weekday_inside_the_month() -> None:
    assert fires("0 0 15W * *", "2026-02-01", 1) == ["Mon 2026-02-16 00:00"]  # the 15th is a Sunday
    assert fires("0 0 13W * *", "2026-03-01", 1) == ["Fri 2026-03-13 00:00"]  # already a weekday
    assert fires("0 0 1W 8 *", "2026-01-01", 1) == ["Mon 2026-08-03 00:00"]  # Saturday the 1st: Monday
    assert fires("0 0 31W 5 *", "2026-01-01", 1) == ["Fri 2026-05-29 00:00"]  # Sunday the 31st: Friday
    assert fires("59 23 LW 5 *", "2026-01-01", 1) == ["Fri 2026-05-29 23:59"]


def test_last_and_nth_weekday_of_the_month() -> None:
    assert fires("0 18 * * 6L", "2026-01-01", 2) == ["Fri 2026-01-30 18:00", "Fri 2026-02-27 18:00"]
    assert fires("0 18 * * friL", "2026-01-01", 1) == ["Fri 2026-01-30 18:00"]
    assert fires("0 10 * * MON#2", "2026-01-01", 2) == ["Mon 2026-01-12 10:00", "Mon 2026-02-09 10:00"]
    # January 2026 has five Fridays, February four: the fifth Friday skips to May.
    assert fires("0 0 * * 6#5", "2026-01-01", 2) == ["Fri 2026-01-30 00:00", "Fri 2026-05-29 00:00"]


def test_day_of_month_or_day_of_week_when_both_are_given() -> None:
    assert fires("0 0 13 * 6", "2026-02-01", 3) == [
        "Fri 2026-02-06 00:00",
        "Fri 2026-02-13 00:00",
        "Fri 2026-02-20 00:00",
    ]
    assert fires("0 0 13 * 3", "2026-02-01", 3) == [
        "Tue 2026-02-03 00:00",
        "Tue 2026-02-10 00:00",
        "Fri 2026-02-13 00:00",
    ]


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("0 17 * * 0", "day of week: 0 is outside 1-7"),
        ("0 17 * *", "expected 5 fields"),
        ("0 0 ? * 1", "day of month: '?' is not supported"),
        ("0 0 * * ?", "day of week: '?' is not supported"),
        ("0 0 * * L", "day of week: 'L' is not supported"),
        ("0 0 * * MON#6", "the number after # must be 1 to 5"),
        ("0 0 * * 8#1", "day of week: 8 is outside 1-7"),
        ("0 0 L-31 * *", "L-n or L-nW with n from 1 to 30"),
        ("0 0 1,L * *", "day of month: '1,L'"),
        ("*/0 * * * *", "minute: step '0' must be a number from 1 to 59"),
        ("0 0 * JANUARY *", "month: 'JANUARY' is not a number or a name"),
        ("0 24 * * *", "hour: 24 is outside 0-23"),
        ("5L * * * *", "minute: '5L' uses a special character"),
        ("0 0 30 2 *", "never fires"),
    ],
)
def test_bad_expressions_name_the_field_and_the_rule(expression: str, message: str) -> None:
    with pytest.raises(WranglerCronError, match=message.replace("?", r"\?").replace("*", r"\*")):
        parse_wrangler_cron(expression)


def test_a_bad_cron_in_a_config_is_a_config_error_naming_its_index(tmp_path: Path) -> None:
    config = tmp_path / "wrangler.jsonc"
    config.write_text(
        '{"name": "w", "main": "entry.py", "triggers": {"crons": ["0 17 * * sun", "0 17 * * 0"]}}'
    )
    with pytest.raises(
        ConfigError, match=r"wrangler.jsonc: triggers.crons\[1\]: day of week: 0 is outside 1-7"
    ):
        load_config(config)
    config.write_text('{"name": "w", "main": "entry.py", "triggers": {"crons": ["0 18 * * friL"]}}')
    assert load_config(config).crons == ("0 18 * * friL",)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("\u00b2 * * * *", "minute: '\u00b2' is not a number"),
        ("*/\u00b2 * * * *", "minute: step '\u00b2' must be a number from 1 to 59"),
        ("0 0 L-\u00b2 * *", "L-n or L-nW with n from 1 to 30"),
        ("0 0 * * 5#\u00b2", "the number after # must be 1 to 5"),
        ("0 0 * * 5#\u0663", "the number after # must be 1 to 5"),  # ARABIC-INDIC THREE: int() read it as 3
    ],
)
def test_a_digit_that_is_not_ascii_is_not_a_number(expression: str, message: str) -> None:
    # str.isdigit() holds for '²', which int() refuses: the error names the field, never a bare ValueError.
    with pytest.raises(WranglerCronError, match=message.replace("*", r"\*")):
        parse_wrangler_cron(expression)
