"""Dispatch order over the whole backlog (priority, aging from eligible_at) and per-key throttling."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.shard.shard_world import World
from tsumugi_core.policy import Policy, PolicyPatch, ShardSettings
from tsumugi_scheduler.shard.records import Succeeded
from tsumugi_scheduler.shard.tick import BLOCKED_SAMPLE_PER_TICK

MIN = 60_000


def test_higher_priority_first_across_levels_even_beyond_a_window(world: World) -> None:
    world.engine.configure(PolicyPatch(concurrency=1, aging_interval_ms=None))
    for _ in range(300):
        world.enqueue(priority=0)
    urgent = world.enqueue(priority=9)
    [m] = world.dispatch()
    assert m.job_id == urgent


def test_aging_counts_from_eligibility_so_delayed_jobs_do_not_jump_the_queue(world: World) -> None:
    world.engine.configure(PolicyPatch(concurrency=1))
    delayed = world.enqueue(priority=0, delay_ms=10 * MIN)
    world.clock.advance(10 * MIN)
    fresh_high = world.enqueue(priority=2)
    [m] = world.dispatch()
    assert m.job_id == fresh_high  # the delayed job was created 10 min ago but only just became ready
    world.engine.report(m.job_id, 1, Succeeded())
    [m] = world.dispatch()
    assert m.job_id == delayed


def test_an_old_low_priority_job_ages_past_a_new_high_one(world: World) -> None:
    world.engine.configure(PolicyPatch(concurrency=1))
    old = world.enqueue(priority=0)
    world.clock.advance(10 * MIN)
    world.enqueue(priority=5)
    [m] = world.dispatch()
    assert m.job_id == old


def test_per_key_concurrency_serialises_a_key_without_starving_others(world: World) -> None:
    a1 = world.enqueue(concurrency_key="a", priority=5)
    world.enqueue(concurrency_key="a", priority=5)
    b1 = world.enqueue(concurrency_key="b")
    free = world.enqueue()
    assert {m.job_id for m in world.dispatch()} == {a1, b1, free}
    # The second job of "a" waits behind its key's head (ADR-0054); once it is the head, the key holds it back.
    assert world.dispatch() == []
    assert world.engine.diagnostics().blocked.per_key_concurrency == 1


def test_concurrency_counts_in_flight_jobs(world: World) -> None:
    world.engine.enqueue_many([], settings=ShardSettings(policy=Policy(concurrency=2)))
    for _ in range(5):
        world.enqueue()
    assert len(world.dispatch()) == 2
    assert world.dispatch() == []
    assert world.engine.diagnostics().blocked.capacity == 3


def test_a_tick_reads_only_what_it_may_dispatch_and_counts_the_jobs_behind(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ADR-0179: the blocked sample is an index count, not 200 more rows through the dispatch read.
    world.engine.enqueue_many([], settings=ShardSettings(policy=Policy(concurrency=2)))
    for _ in range(BLOCKED_SAMPLE_PER_TICK + 10):
        world.enqueue()
    store = world.engine._store  # pyright: ignore[reportPrivateUsage]
    read: list[int] = []
    ready_window = store.ready_window

    def spy(*args: Any, **kwargs: Any) -> Any:
        window = ready_window(*args, **kwargs)
        read.append(len(window.rows))
        return window

    monkeypatch.setattr(store, "ready_window", spy)
    assert len(world.dispatch()) == 2
    assert world.engine.diagnostics().blocked.capacity == BLOCKED_SAMPLE_PER_TICK
    assert world.dispatch() == []
    assert world.engine.diagnostics().blocked.capacity == 2 + BLOCKED_SAMPLE_PER_TICK
    assert read == [2, 2]
