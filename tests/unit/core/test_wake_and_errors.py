"""The wake instant, the sweep wake floor, and the recorded error texts."""

from __future__ import annotations

from tsumugi_core.errors import RESULT_NOT_STORABLE_ERROR, timeout_error, truncate_error
from tsumugi_core.options import MAX_ERROR_CHARS
from tsumugi_core.wake import MIN_SWEEP_WAKE_MS, next_wake_at, sweep_wake_at


def test_next_wake_is_the_minimum_ignoring_none() -> None:
    assert next_wake_at(None, 7, 3, None) == 3
    assert next_wake_at() is None


def test_sweep_wake_is_the_earliest_retention_but_never_sooner_than_the_floor() -> None:
    assert sweep_wake_at(0, 300_000, 0, 604_800_000, now=0) == 300_000
    assert sweep_wake_at(None, 300_000, 10, 5, now=0) == MIN_SWEEP_WAKE_MS
    assert sweep_wake_at(None, 1, None, 1, now=0) is None


def test_error_texts() -> None:
    assert timeout_error("MAIL#0:abc", 5000) == "job timed out (MAIL#0:abc, 5000ms)"
    assert RESULT_NOT_STORABLE_ERROR == "cannot store the result (over 8192 chars or not serializable)"
    assert truncate_error("x" * 5000) == "x" * MAX_ERROR_CHARS
    assert truncate_error("short") == "short"
