"""Many rows as JSON texts within a byte bound (tsumugi_scheduler.json_batches)."""

from __future__ import annotations

import json

from tsumugi_scheduler.json_batches import json_arrays, json_objects


def test_what_fits_is_one_text_and_nothing_is_an_empty_list() -> None:
    assert json_arrays([[1, "a"], [2, None]]) == ['[[1,"a"],[2,null]]']
    assert json_objects({"a": [1], "b": None}) == ['{"a":[1],"b":null}']
    assert json_arrays([]) == []
    assert json_objects({}) == []


def test_over_the_bound_items_are_cut_into_texts_that_each_fit_and_keep_order() -> None:
    items = [f"item-{i:03}" for i in range(100)]
    texts = json_arrays(items, most_bytes=120)
    assert len(texts) > 1
    assert all(len(t.encode()) <= 120 for t in texts)
    assert [x for t in texts for x in json.loads(t)] == items
    entries = {f"k{i}": i for i in range(100)}
    parts = json_objects(entries, most_bytes=64)
    assert all(len(p.encode()) <= 64 for p in parts)
    assert {k: v for p in parts for k, v in json.loads(p).items()} == entries


def test_an_item_larger_than_the_bound_stands_alone() -> None:
    assert json_arrays(["x" * 50, "y"], most_bytes=20) == ['["' + "x" * 50 + '"]', '["y"]']
