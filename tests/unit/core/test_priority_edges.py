"""Aging at its smallest intervals: 0 is off, 1 ms ages every millisecond, and the result stays an integer."""

from __future__ import annotations

from tsumugi_core.priority import effective_priority


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
