"""Dispatch finds the next dispatchable job past any number of jobs of a blocked key (issue 10 item 2).

Only each (concurrency_key, priority) group's oldest SCHEDULED job is in the dispatch indexes (ADR-0054), so a
key holding a million jobs costs the dispatch read one row, not a window of them.
"""

from __future__ import annotations

from tests.unit.shard.shard_world import T0, World
from tsumugi_core.options import EnqueueItem, RateLimit
from tsumugi_core.policy import PolicyPatch
from tsumugi_scheduler.shard.records import Failed, Succeeded


def _burst(world: World, count: int, **options: object) -> list[str]:
    items = [EnqueueItem(binding="MAIL", payload=n, **options) for n in range(count)]  # type: ignore[arg-type]
    return [r.id for r in world.engine.enqueue_many(items)]


def test_a_busy_key_does_not_starve_another_key(world: World) -> None:
    # The audit case: default policy, 1,000 jobs on K, then one on L; L used to wait for 702 K jobs to finish.
    k_jobs = _burst(world, 1_000, concurrency_key="K")
    world.clock.advance(1)
    other = world.enqueue(concurrency_key="L")
    assert {m.job_id for m in world.dispatch()} == {k_jobs[0], other}


def test_a_key_blocked_by_its_rate_does_not_starve_another_key(world: World) -> None:
    world.engine.configure(
        PolicyPatch(per_key_concurrency=100, per_key_rate=RateLimit(tokens=1, interval_ms=60_000))
    )
    k_jobs = _burst(world, 600, concurrency_key="K")
    world.clock.advance(1)
    other = world.enqueue(concurrency_key="L")
    assert {m.job_id for m in world.dispatch()} == {k_jobs[0], other}


def test_the_dispatch_read_holds_one_row_per_blocked_key(world: World) -> None:
    _burst(world, 2_000, concurrency_key="K")
    world.dispatch()
    window = world.engine._store.ready_window(world.clock.now_ms(), 100, 60_000)  # pyright: ignore[reportPrivateUsage]
    assert len(window.rows) == 1


def test_a_key_with_room_for_several_jobs_gets_them_in_one_tick(world: World) -> None:
    world.engine.configure(PolicyPatch(per_key_concurrency=3))
    k_jobs = _burst(world, 50, concurrency_key="K")
    assert [m.job_id for m in world.dispatch()] == k_jobs[:3]
    [first, *_] = world.engine.tick().dispatches or [None]
    assert first is None  # the key is full


def test_the_next_job_of_a_key_goes_when_the_first_finishes(world: World) -> None:
    k_jobs = _burst(world, 5, concurrency_key="K")
    for expected in k_jobs:
        [message] = world.dispatch()
        assert message.job_id == expected
        world.engine.report(message.job_id, message.attempt, Succeeded(result=None))
    assert world.dispatch() == []


def test_a_retried_job_goes_behind_its_keys_older_jobs(world: World) -> None:
    world.engine.configure(PolicyPatch(aging_interval_ms=None))
    k_jobs = _burst(world, 3, concurrency_key="K")
    [message] = world.dispatch()
    world.clock.advance(1)
    world.engine.report(message.job_id, message.attempt, Failed(error="x", retry_at=world.clock.now_ms()))
    # Its eligible_at moved to now, so the key's two older jobs are ahead of it.
    [again] = world.dispatch()
    assert again.job_id == k_jobs[1]


def test_an_earlier_job_enqueued_later_becomes_the_head(world: World) -> None:
    delayed = world.enqueue(concurrency_key="K", delay_ms=60_000)
    now_job = world.enqueue(concurrency_key="K")
    assert [m.job_id for m in world.dispatch()] == [now_job]
    assert world.engine.get(delayed).state == "SCHEDULED"  # type: ignore[union-attr]


def test_rescheduling_the_head_hands_the_key_to_the_next_job(world: World) -> None:
    first, second = _burst(world, 2, concurrency_key="K")
    assert world.engine.reschedule(first, world.clock.now_ms() + 60_000).ok
    assert [m.job_id for m in world.dispatch()] == [second]


def test_a_new_priority_moves_a_job_to_its_level_in_the_key(world: World) -> None:
    first, second, third = _burst(world, 3, concurrency_key="K")
    assert world.engine.reschedule(third, world.clock.now_ms(), priority=5).ok
    assert [m.job_id for m in world.dispatch()] == [third]
    assert world.engine.reschedule(first, world.clock.now_ms(), priority=-1).ok
    world.engine.configure(PolicyPatch(per_key_concurrency=3))
    assert [m.job_id for m in world.dispatch()] == [second, first]


def test_cancelling_the_head_hands_the_key_to_the_next_job(world: World) -> None:
    first, second = _burst(world, 2, concurrency_key="K")
    assert world.engine.cancel(first).ok
    assert [m.job_id for m in world.dispatch()] == [second]


def test_a_job_rescheduled_to_a_past_instant_gains_no_aging_from_it(world: World) -> None:
    delayed = world.enqueue(delay_ms=7_200_000)  # created at T0, asked to wait two hours
    world.clock.advance(3_600_000)
    urgent = world.enqueue(priority=30)
    world.engine.configure(PolicyPatch(concurrency=1))
    # "Run it now", given as a past instant: it is ready from now on, not since it was created.
    assert world.engine.reschedule(delayed, T0).ok
    assert [m.job_id for m in world.dispatch()] == [urgent]


def test_a_job_rescheduled_to_a_past_instant_does_not_jump_its_keys_queue(world: World) -> None:
    world.engine.configure(PolicyPatch(per_key_concurrency=2, aging_interval_ms=None))
    retried = world.enqueue(concurrency_key="K")
    world.enqueue(concurrency_key="K")
    assert len(world.dispatch()) == 2
    world.clock.advance(10)
    waiting = world.enqueue(concurrency_key="K")  # ready since T0 + 10, waiting for K
    world.engine.report(retried, 1, Failed(error="boom", retry_at=T0 + 3_600_000))
    world.clock.advance(5)
    assert world.engine.reschedule(retried, T0).ok
    assert [m.job_id for m in world.dispatch()] == [waiting]


def test_a_ready_job_rescheduled_to_a_past_instant_keeps_its_place(world: World) -> None:
    world.engine.configure(PolicyPatch(concurrency=1, aging_interval_ms=None))
    first = world.enqueue()
    world.clock.advance(10)
    second = world.enqueue()
    world.clock.advance(10)
    assert world.engine.reschedule(second, T0 + 10).ok  # already ready since then: nothing moves
    assert [m.job_id for m in world.dispatch()] == [first]
