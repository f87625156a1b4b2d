"""The wake time: a ready job that can go always wakes the shard now; a blocked one does not spin it."""

from __future__ import annotations

from tests.unit.shard.shard_world import T0, World
from tsumugi_core.policy import PolicyPatch
from tsumugi_scheduler.shard.records import Failed


def ack_all(world: World) -> None:
    world.engine.ack_changes(world.engine.changes()[-1].job.seq)


def test_a_due_delayed_job_no_tick_saw_keeps_the_wake_at_now_after_other_commands(world: World) -> None:
    running = world.enqueue(guarantee="at-most-once")
    delayed = world.enqueue(delay_ms=5000)
    [message] = world.dispatch()
    ack_all(world)
    assert world.engine.next_wake_at() == T0 + 5000
    world.clock.advance(6000)  # run_after passed; no tick has dispatched it yet
    assert world.engine.claim(running, message.attempt) is True
    ack_all(world)
    assert (world.engine.next_wake_at() or T0 + 10**9) <= world.clock.now_ms()
    world.engine.heartbeat(running, message.attempt, 0.5)
    assert world.engine.report(running, message.attempt + 1, Failed(error="stale")).accepted is False
    ack_all(world)
    assert (world.engine.next_wake_at() or T0 + 10**9) <= world.clock.now_ms()
    [late] = world.dispatch()
    assert late.job_id == delayed


def test_a_due_job_blocked_by_capacity_does_not_keep_the_shard_awake(world: World) -> None:
    world.engine.configure(PolicyPatch(concurrency=1))
    world.enqueue()
    world.enqueue(delay_ms=5000)
    world.dispatch()
    world.clock.advance(6000)
    assert world.dispatch() == []  # the slot is taken
    ack_all(world)
    wake = world.engine.next_wake_at()
    assert wake is not None
    assert wake > world.clock.now_ms()  # the running job's silence deadline, not a busy loop
