"""The run projection sends only the newest snapshot of each run and node of a batch, in feed order."""

from __future__ import annotations

from tsumugi_scheduler.run.projection import latest


def test_only_the_newest_snapshot_of_each_target_is_sent() -> None:
    rows = [
        {"seq": 1, "kind": "node", "target": "a", "snapshot": "a1"},
        {"seq": 2, "kind": "run", "target": "r", "snapshot": "r1"},
        {"seq": 3, "kind": "node", "target": "b", "snapshot": "b1"},
        {"seq": 4, "kind": "node", "target": "a", "snapshot": "a2"},
        {"seq": 5, "kind": "run", "target": "r", "snapshot": "r2"},
    ]
    assert [r["snapshot"] for r in latest(rows)] == ["b1", "a2", "r2"]
