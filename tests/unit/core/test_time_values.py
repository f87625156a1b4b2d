"""timedelta and aware datetime are accepted wherever a duration or an instant is; naive is refused (ADR-0142)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from tsumugi_client._enqueue_kwargs import item_from_fields
from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.time_values import duration_ms, instant_ms
from tsumugi_performer import RetryAfterError
from tsumugi_scheduler.definition import DefinitionError, define_tsumugi

NEW_YEAR_MS = 1_767_225_600_000
"""2026-01-01T00:00:00Z."""


def test_a_timedelta_is_milliseconds_and_an_int_passes_through() -> None:
    assert duration_ms("timeout_ms", dt.timedelta(minutes=1, milliseconds=5)) == 60_005
    assert duration_ms("timeout_ms", 250) == 250


def test_an_aware_datetime_is_epoch_milliseconds_in_any_zone() -> None:
    assert instant_ms("run_at", dt.datetime(2026, 1, 1, tzinfo=dt.UTC)) == NEW_YEAR_MS
    assert instant_ms("run_at", dt.datetime(2026, 1, 1, 9, tzinfo=ZoneInfo("Asia/Tokyo"))) == NEW_YEAR_MS


def test_a_naive_datetime_is_refused_by_name() -> None:
    with pytest.raises(InvalidFieldError) as caught:
        instant_ms("run_at", dt.datetime(2026, 1, 1))
    assert caught.value.field == "run_at"
    assert caught.value.rule.startswith("must be a timezone-aware datetime")


def test_a_sub_millisecond_timedelta_is_refused() -> None:
    with pytest.raises(InvalidFieldError, match="delay_ms must be a whole number of milliseconds"):
        duration_ms("delay_ms", dt.timedelta(microseconds=1500))


def test_enqueue_options_take_timedelta_and_datetime() -> None:
    item = item_from_fields(
        {
            "binding": "MAIL",
            "payload": {},
            "timeout_ms": dt.timedelta(seconds=30),
            "run_at": dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
            "unique_for_ms": dt.timedelta(hours=1),
            "expires_at": dt.datetime(2026, 1, 1, 1, tzinfo=dt.UTC),
        }
    )
    assert (item.timeout_ms, item.run_at, item.unique_for_ms, item.expires_at) == (
        30_000,
        NEW_YEAR_MS,
        3_600_000,
        NEW_YEAR_MS + 3_600_000,
    )
    with pytest.raises(InvalidFieldError, match="expires_at must be a timezone-aware datetime"):
        item_from_fields({"binding": "MAIL", "payload": {}, "expires_at": dt.datetime(2026, 1, 1)})


def test_retry_after_takes_timedelta_and_datetime() -> None:
    assert RetryAfterError(delay_ms=dt.timedelta(seconds=30)).retry_at(1_000) == 31_000
    assert RetryAfterError(at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC)).retry_at(0) == NEW_YEAR_MS
    with pytest.raises(InvalidFieldError, match="at must be a timezone-aware datetime"):
        RetryAfterError(at=dt.datetime(2026, 1, 1))


def test_define_tsumugi_takes_timedelta_for_policy_schedule_retention_and_runs() -> None:
    definition = define_tsumugi(
        performers=["Hello"],
        bindings={
            "Hello": {
                "policy": {
                    "reaper_grace_ms": dt.timedelta(seconds=5),
                    "rate": {"tokens": 2, "interval_ms": dt.timedelta(seconds=1)},
                },
                "failed_retention_ms": dt.timedelta(days=1),
            }
        },
        schedules={"often": {"binding": "Hello", "payload": {}, "every_ms": dt.timedelta(minutes=10)}},
        retention={"older_than_ms": dt.timedelta(days=2)},
        runs={"sweep_after_ms": dt.timedelta(minutes=1)},
    )
    settings = definition.settings_of("Hello")
    assert settings is not None
    assert settings.policy.reaper_grace_ms == 5_000
    assert settings.policy.rate is not None
    assert settings.policy.rate.interval_ms == 1_000
    assert settings.retention.failed_retention_ms == 86_400_000
    assert definition.schedules.specs["often"].timing.every_ms == 600_000
    assert (definition.sweep.older_than_ms, definition.runs.sweep_after_ms) == (172_800_000, 60_000)


def test_define_tsumugi_names_the_option_of_a_bad_timedelta() -> None:
    with pytest.raises(DefinitionError) as caught:
        define_tsumugi(bindings={"Hello": {"policy": {"reaper_grace_ms": dt.timedelta(microseconds=1)}}})
    assert caught.value.field == "bindings.Hello.policy.reaper_grace_ms"
