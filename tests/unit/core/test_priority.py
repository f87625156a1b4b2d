"""Aging counts from eligible_at; None disables it (docs/reference/original.md §3.7 examples, gap 16)."""

from __future__ import annotations

from tsumugi_core.priority import aging_bound, effective_priority

MIN = 60_000


def test_a_low_priority_job_waiting_ten_minutes_beats_a_new_priority_five() -> None:
    now = 10 * MIN
    assert effective_priority(0, 0, now, MIN) > effective_priority(5, now, now, MIN)
    assert effective_priority(0, now - 4 * MIN, now, MIN) < effective_priority(5, now, now, MIN)


def test_aging_disabled_never_lets_the_low_one_win() -> None:
    assert effective_priority(0, 0, 10**9, None) == 0


def test_aging_counts_from_eligibility_not_creation() -> None:
    # A job delayed until now has not waited at all, however old it is.
    assert effective_priority(0, eligible_at=10 * MIN, now=10 * MIN, aging_interval_ms=MIN) == 0
    assert effective_priority(0, eligible_at=11 * MIN, now=10 * MIN, aging_interval_ms=MIN) == 0


def test_aging_bound_uses_the_oldest_ready_job() -> None:
    assert aging_bound(3, oldest_eligible_at=0, now=5 * MIN, aging_interval_ms=MIN) == 8
    assert aging_bound(3, oldest_eligible_at=None, now=5 * MIN, aging_interval_ms=MIN) == 3


# Aging at its smallest intervals: 0 is off, 1 ms ages every millisecond, and the result stays an integer.


def test_an_aging_interval_of_0_is_off_like_none() -> None:
    assert effective_priority(5, 0, 10_000, 0) == 5
    assert effective_priority(5, 0, 10_000, None) == 5


def test_an_aging_interval_of_1_ms_adds_one_level_a_millisecond_from_eligibility() -> None:
    assert effective_priority(5, 100, 103, 1) == 8
    assert effective_priority(5, 100, 100, 1) == 5  # eligible just now: not aged yet
    assert effective_priority(5, 100, 90, 1) == 5  # not eligible yet: never below its own priority


def test_aging_counts_whole_intervals_only() -> None:
    aged = effective_priority(0, 0, 1_500, 1_000)
    assert aged == 1
    assert isinstance(aged, int)
