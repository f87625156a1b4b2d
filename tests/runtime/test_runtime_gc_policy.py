"""``tsumugi dev`` sets the cyclic GC for throughput once its runtime has started (tsumugi_dev.gc_policy)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from tsumugi_dev.gc_policy import YOUNG_THRESHOLD, tune_for_throughput


@pytest.fixture
def restored_gc() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.set_threshold(*thresholds)
    gc.unfreeze()


def test_tuning_freezes_what_is_alive_and_raises_the_young_threshold(restored_gc: None) -> None:
    gc.unfreeze()
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    assert tune_for_throughput() == before
    assert gc.get_threshold() == (YOUNG_THRESHOLD, before[1], before[2])
    assert gc.get_freeze_count() > 0  # what was alive is out of every later collection


def test_cycles_made_after_tuning_are_still_collected(restored_gc: None) -> None:
    tune_for_throughput()

    class Node:
        def __init__(self) -> None:
            self.me = self

    collected: list[str] = []
    node = Node()
    weakref.finalize(node, collected.append, "gone")
    del node
    gc.collect()
    assert collected == ["gone"]
