"""A resumed run node's new job takes the old job's steps before it is stored (ADR-0176)."""

from __future__ import annotations

from tests.unit.shard.shard_world import World
from tsumugi_core.states import JobState
from tsumugi_core.steps import StepCommand

NEW = "MAIL#0:resumed0000000000000000000"


def _with_steps(world: World, guarantee: str) -> str:
    """A job that finished step ``fetch``, began step ``charge``, waited in ``event:paid``, then went silent
    (at-most-once: STALLED, its outcome unknown)."""
    job_id = world.enqueue(guarantee=guarantee, max_attempts=1)
    (message,) = world.dispatch()
    if guarantee == "at-most-once":
        assert world.engine.claim(job_id, message.attempt)
    step = world.engine.step
    step(job_id, message.attempt, StepCommand(op="save", name="fetch", result='"page"'))
    step(job_id, message.attempt, StepCommand(op="begin", name="charge"))
    step(
        job_id,
        message.attempt,
        StepCommand(op="wait", name="event:paid", event="paid", key="o1", until=10**13),
    )
    world.clock.advance(3_600_000)  # silent past its timeout: STALLED, the attempt's outcome unknown
    world.dispatch()
    job = world.engine.get(job_id)
    assert job is not None
    assert job.state == (JobState.STALLED if guarantee == "at-most-once" else JobState.FAILED)
    return job_id


def test_an_at_most_once_jobs_begun_and_finished_steps_pass_on_its_waits_do_not(world: World) -> None:
    old = _with_steps(world, "at-most-once")
    assert world.engine.inherit_steps(NEW, old) == 2
    assert [(s.name, s.state, s.result) for s in world.engine.steps_of(NEW)] == [
        ("charge", "started", None),
        ("fetch", "done", '"page"'),
    ]
    assert world.engine.inherit_steps(NEW, old) == 2  # a repeated call copies nothing twice


def test_an_at_least_once_jobs_steps_do_not_pass_on(world: World) -> None:
    old = _with_steps(world, "at-least-once")
    assert world.engine.inherit_steps(NEW, old) == 0
    assert world.engine.steps_of(NEW) == []


def test_a_job_stored_already_keeps_its_own_steps(world: World) -> None:
    old = _with_steps(world, "at-most-once")
    stored = world.enqueue(guarantee="at-most-once")
    assert world.engine.inherit_steps(stored, old) == 0
    assert world.engine.steps_of(stored) == []


def test_a_job_that_is_gone_passes_nothing_on(world: World) -> None:
    assert world.engine.inherit_steps(NEW, "MAIL#0:gone00000000000000000000000") == 0
