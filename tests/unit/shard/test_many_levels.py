"""Priority over the whole backlog holds for any number of ready priority levels (issue 10 item 3)."""

from __future__ import annotations

import pytest

from tests.unit.shard.shard_world import World
from tsumugi_core.options import EnqueueItem
from tsumugi_core.policy import PolicyPatch
from tsumugi_dev.do_sql import SqlStorage

MIN = 60_000


def test_a_thousand_levels_oldest_lowest_dispatch_the_top_hundred(world: World) -> None:
    # The audit case: priorities 1..1,000, the oldest the lowest, concurrency 100; one tick used to dispatch
    # priorities 265-300 instead of 901-1,000.
    for priority in range(1, 1_001):
        world.engine.enqueue_many([EnqueueItem(binding="MAIL", payload=priority, priority=priority)])
        world.clock.advance(1)
    dispatched = [m.payload for m in world.dispatch()]
    assert sorted(dispatched) == list(range(901, 1_001))


def test_aged_jobs_below_hundreds_of_levels_take_their_place(world: World) -> None:
    # Old low-priority jobs aged above 500 fresh levels: the batch is the exact top by effective priority.
    world.engine.configure(PolicyPatch(concurrency=50))
    world.engine.enqueue_many([EnqueueItem(binding="MAIL", payload=-p, priority=-p) for p in range(1, 31)])
    world.clock.advance(600 * MIN)  # effective priorities 599 .. 570
    world.engine.enqueue_many([EnqueueItem(binding="MAIL", payload=p, priority=p) for p in range(0, 500)])
    dispatched = sorted(m.payload for m in world.dispatch())
    assert dispatched == sorted([-p for p in range(1, 31)] + list(range(480, 500)))


def test_an_aged_job_below_more_levels_than_the_walk_may_visit_still_goes(world: World) -> None:
    # 400 fresh levels: the walk fills its window, visits MAX_LEVELS_PAST_WANT more and stops; the pages of the
    # oldest ready jobs then bring the aged job, whose effective priority beats every level.
    world.engine.configure(PolicyPatch(concurrency=1))
    aged = world.enqueue(priority=0)
    world.clock.advance(5_000 * MIN)
    world.engine.enqueue_many(
        [EnqueueItem(binding="MAIL", payload=p, priority=p) for p in range(1_000, 1_400)]
    )
    assert [m.job_id for m in world.dispatch()] == [aged]


def test_the_dispatch_read_crosses_one_value_per_row(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each row of the level walk is one JSON array text (ADR-0166): a tick's largest read crosses the SQL API
    # as one value per row instead of six.
    widths: dict[str, set[int]] = {}
    exec_ = SqlStorage.exec

    def recording(self: SqlStorage, query: str, *bindings: object) -> object:
        cursor = exec_(self, query, *bindings)
        if "INDEXED BY job_ready" in query and query.lstrip().startswith("SELECT json_array"):
            widths.setdefault(query, set()).add(len(cursor.columnNames))
        return cursor

    monkeypatch.setattr(SqlStorage, "exec", recording)
    world.engine.enqueue_many([EnqueueItem(binding="MAIL", payload=p, priority=p % 7) for p in range(300)])
    dispatched = sorted(m.payload for m in world.dispatch())
    assert len(dispatched) == 100
    assert widths
    assert all(w == {1} for w in widths.values())
