"""The deterministic clock, id and random sources."""

from __future__ import annotations

import re

import pytest

from tsumugi_core.testing import FixedClock, FixedRandom, SequentialIds


def test_fixed_clock_moves_only_when_told() -> None:
    clock = FixedClock(100)
    assert clock.now_ms() == 100
    clock.advance(50)
    assert clock.now_ms() == 150
    clock.set(10)
    assert clock.now_ms() == 10
    with pytest.raises(ValueError, match="ms must not be negative"):
        clock.advance(-1)


def test_sequential_ids_are_valid_unique_and_ordered() -> None:
    ids = SequentialIds("t")
    made = [ids.new_local_id() for _ in range(3)]
    assert all(re.fullmatch(r"[a-z][a-z0-9]{23}", i) for i in made)
    assert made == sorted(made)
    assert len(set(made)) == 3
    with pytest.raises(ValueError, match="prefix"):
        SequentialIds("9bad")


def test_fixed_random() -> None:
    assert FixedRandom(0.25).random() == 0.25
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        FixedRandom(1.0)


# The doubles at their defaults and edges.


def test_a_fixed_clock_starts_at_0_advances_by_0_and_refuses_going_back() -> None:
    clock = FixedClock()
    assert clock.now_ms() == 0
    clock.advance(0)
    assert clock.now_ms() == 0
    with pytest.raises(ValueError, match="ms must not be negative: -1"):
        clock.advance(-1)


def test_sequential_ids_count_from_1_one_at_a_time_with_the_job_prefix() -> None:
    ids = SequentialIds()
    assert [ids.new_local_id(), ids.new_local_id()] == [
        "job000000000000000000001",
        "job000000000000000000002",
    ]


def test_a_fixed_random_is_0_5_by_default_takes_0_and_refuses_1() -> None:
    assert FixedRandom().random() == 0.5
    assert FixedRandom(0.0).random() == 0.0
    with pytest.raises(ValueError, match=r"value must be in \[0, 1\): 1.0"):
        FixedRandom(1.0)
