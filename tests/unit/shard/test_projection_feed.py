"""The projection feed: a tick's own changes wait PROJECTION_HOLD_MS before they alone wake the shard; the cursor only moves forward."""

from __future__ import annotations

from tests.unit.shard.shard_world import T0, World
from tsumugi_core.states import JobState
from tsumugi_scheduler.shard.engine import PROJECTION_HOLD_MS
from tsumugi_scheduler.shard.records import Succeeded


def project_all(world: World) -> None:
    changes = world.engine.changes()
    if changes:
        world.engine.ack_changes(changes[-1].job.seq)


def test_a_dispatch_alone_wakes_the_shard_only_when_its_hold_ends(world: World) -> None:
    world.enqueue(timeout_ms=60_000)
    project_all(world)  # the alarm projects first (the SCHEDULED change), then ticks
    [message] = world.dispatch()
    assert message.attempt == 1
    assert [s.job.state for s in world.engine.changes()] == [JobState.QUEUED]  # still in the feed
    assert world.engine.next_wake_at() == T0 + PROJECTION_HOLD_MS
    world.clock.advance(PROJECTION_HOLD_MS)
    assert world.engine.next_wake_at() == T0 + PROJECTION_HOLD_MS  # due: the QUEUED change goes out now
    project_all(world)
    assert world.engine.changes() == []
    assert world.engine.next_wake_at() == T0 + 60_000 + world.engine.settings.policy.reaper_grace_ms


def test_a_report_wakes_the_shard_at_once_and_the_job_is_projected_once_completed(world: World) -> None:
    job_id = world.enqueue()
    project_all(world)
    [message] = world.dispatch()
    world.clock.advance(3)
    assert world.engine.report(job_id, message.attempt, Succeeded(result="ok")).accepted
    assert world.engine.next_wake_at() == world.clock.now_ms()
    [snapshot] = world.engine.changes()  # the QUEUED change was overtaken: one snapshot, COMPLETED
    assert snapshot.job.state is JobState.COMPLETED


def test_an_enqueue_during_the_hold_wakes_the_shard_now(world: World) -> None:
    world.enqueue()
    project_all(world)
    world.dispatch()
    assert world.engine.next_wake_at() == T0 + PROJECTION_HOLD_MS
    world.enqueue()
    assert world.engine.next_wake_at() == T0


def test_changes_older_than_the_tick_are_not_held(world: World) -> None:
    world.enqueue(delay_ms=10_000)  # never projected: the tick below must not hide it behind its hold
    world.enqueue()
    [_] = world.dispatch()
    assert world.engine.next_wake_at() == T0
    project_all(world)  # both go out; nothing is left to hold
    assert world.engine.next_wake_at() == T0 + 10_000


def test_a_tick_that_changes_nothing_holds_nothing(world: World) -> None:
    world.enqueue(delay_ms=10_000)
    project_all(world)
    assert world.dispatch() == []
    assert world.engine.next_wake_at() == T0 + 10_000


def test_an_ack_beyond_the_last_change_does_not_hide_later_changes(world: World) -> None:
    world.enqueue()
    world.engine.ack_changes(10**12)  # a seq no change has taken yet
    assert world.engine.changes() == []
    later = world.enqueue()
    assert [s.job.id for s in world.engine.changes()] == [later]
