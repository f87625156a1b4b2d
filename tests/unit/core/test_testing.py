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
