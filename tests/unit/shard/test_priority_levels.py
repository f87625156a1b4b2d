"""The dispatch read walks only priority levels that hold a ready job, and the oldest ready jobs always compete.

Regression tests for two audit cases (issue 2): levels holding only delayed jobs used to count toward the
per-tick level cap (a ready job below 64 such levels waited until they became due), and a job aged past more
than 64 ready levels was never seen.
"""

from __future__ import annotations

from tests.unit.shard.shard_world import T0, World
from tsumugi_core.options import EnqueueItem
from tsumugi_core.policy import PolicyPatch
from tsumugi_core.throttle import Candidate, dispatch_order
from tsumugi_scheduler.shard.level_walk import MAX_LEVEL_PROBES_PER_TICK, MAX_LEVELS_PAST_WANT

MIN = 60_000
HOUR = 60 * MIN


def _enqueue_levels(world: World, priorities: range, **options: object) -> list[str]:
    items = [EnqueueItem(binding="MAIL", payload=p, priority=p, **options) for p in priorities]  # type: ignore[arg-type]
    return [r.id for r in world.engine.enqueue_many(items)]


def test_levels_holding_only_delayed_jobs_do_not_hide_a_ready_job(world: World) -> None:
    _enqueue_levels(world, range(1, MAX_LEVELS_PAST_WANT + 7), delay_ms=HOUR)
    ready = world.enqueue(priority=0)
    assert [m.job_id for m in world.dispatch()] == [ready]
    assert world.engine.get(ready).state == "QUEUED"  # type: ignore[union-attr]


def test_a_ready_level_under_many_delayed_levels_beats_older_lower_jobs(world: World) -> None:
    # More old priority-0 jobs than one window holds, so only the level walk can find the urgent job.
    world.engine.configure(PolicyPatch(concurrency=1, aging_interval_ms=None))
    world.engine.enqueue_many([EnqueueItem(binding="MAIL", payload=i) for i in range(300)])
    _enqueue_levels(world, range(101, 101 + MAX_LEVELS_PAST_WANT + 6), delay_ms=HOUR)
    world.clock.advance(1)
    urgent = world.enqueue(priority=100)
    assert [m.job_id for m in world.dispatch()] == [urgent]


def test_an_aged_job_beats_more_ready_levels_than_one_walk_visits(world: World) -> None:
    world.engine.configure(PolicyPatch(concurrency=1))
    aged = world.enqueue(priority=0)
    world.clock.advance(5_000 * MIN)  # effective priority 5,000
    _enqueue_levels(world, range(1000, 1100))
    [m] = world.dispatch()
    assert m.job_id == aged


def test_past_the_probe_budget_the_oldest_ready_job_still_goes(world: World) -> None:
    _enqueue_levels(world, range(1, MAX_LEVEL_PROBES_PER_TICK + 10), delay_ms=HOUR)
    ready = world.enqueue(priority=0)
    assert [m.job_id for m in world.dispatch()] == [ready]


def test_a_batch_follows_the_exact_dispatch_order_with_ties_across_levels(world: World) -> None:
    # Aging makes jobs of different levels tie on effective priority; ties go by eligible_at, created_at, id.
    world.engine.configure(PolicyPatch(concurrency=40))
    ids: list[str] = []
    for step in range(6):
        ids += _enqueue_levels(world, range(step % 3, 4))
        _enqueue_levels(world, range(10, 14), delay_ms=HOUR)  # delayed levels above every ready one
        world.clock.advance(MIN if step % 2 else MIN // 2)
    now = world.clock.now_ms()
    rows = [row for row in (world.engine.get(i) for i in ids) if row is not None]
    candidates = [
        Candidate(id=r.id, priority=r.priority, eligible_at=r.eligible_at, created_at=r.created_at)
        for r in rows
    ]
    expected = dispatch_order(candidates, now, MIN)
    assert len(expected) == len(ids) <= 40
    assert now > T0
    assert [m.job_id for m in world.dispatch()] == [c.id for c in expected]
