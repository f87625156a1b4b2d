"""Durations and instants in words (the explanations' texts): two largest units, relative with UTC beside."""

from __future__ import annotations

import doctest

import pytest

import tsumugi_scheduler.time_words
from tsumugi_scheduler.time_words import duration_words, instant_words

NOW = 1_767_225_600_000  # 2026-01-01T00:00:00Z


@pytest.mark.parametrize(
    ("ms", "words"),
    [
        (0, "0 ms"),
        (999, "999 ms"),
        (1_000, "1 s"),
        (61_000, "1 min 1 s"),
        (252_000, "4 min 12 s"),
        (3_600_000, "1 h"),
        (7_500_000, "2 h 5 min"),
        (604_800_000, "7 d"),
        (90_061_000, "1 d 1 h"),
    ],
)
def test_durations_use_the_two_largest_units(ms: int, words: str) -> None:
    assert duration_words(ms) == words


def test_instants_read_relative_to_now_with_the_utc_time_beside() -> None:
    assert instant_words(NOW + 252_000, now=NOW) == "in 4 min 12 s (2026-01-01T00:04:12Z)"
    assert instant_words(NOW - 3_000, now=NOW) == "3 s ago (2025-12-31T23:59:57Z)"


def test_docstring_examples_run() -> None:
    assert doctest.testmod(tsumugi_scheduler.time_words).failed == 0
