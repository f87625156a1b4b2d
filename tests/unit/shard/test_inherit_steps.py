"""A resumed run node's new job takes the old job's steps as its enqueue stores it (ADR-0176, ADR-0184)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.shard.shard_world import World
from tsumugi_core.options import CheckedJob, EnqueueItem, EnqueueValidationError, Guarantee, check_enqueue
from tsumugi_core.states import JobState
from tsumugi_core.steps import StepCommand
from tsumugi_scheduler.shard_host import _steps_from  # pyright: ignore[reportPrivateUsage]

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


def _node_job(job_id: str = NEW) -> CheckedJob:
    return check_enqueue(
        EnqueueItem(binding="MAIL", id=job_id, payload={"n": 2}, guarantee=Guarantee.AT_MOST_ONCE)
    )


def test_an_at_most_once_jobs_begun_and_finished_steps_pass_on_its_waits_do_not(world: World) -> None:
    old = _with_steps(world, "at-most-once")
    (stored,) = world.engine.enqueue_checked([_node_job()], steps_from={NEW: old})
    assert (stored.id, stored.created) == (NEW, True)
    assert [(s.name, s.state, s.result) for s in world.engine.steps_of(NEW)] == [
        ("charge", "started", None),
        ("fetch", "done", '"page"'),
    ]
    (again,) = world.engine.enqueue_checked([_node_job()], steps_from={NEW: old})  # a repeated send
    assert again.created is False
    assert len(world.engine.steps_of(NEW)) == 2  # nothing copied twice


def test_an_at_least_once_jobs_steps_do_not_pass_on(world: World) -> None:
    old = _with_steps(world, "at-least-once")
    world.engine.enqueue_checked([_node_job()], steps_from={NEW: old})
    assert world.engine.steps_of(NEW) == []


def test_a_job_stored_already_keeps_its_own_steps(world: World) -> None:
    old = _with_steps(world, "at-most-once")
    stored = world.enqueue(guarantee="at-most-once")
    (answer,) = world.engine.enqueue_checked([_node_job(stored)], steps_from={stored: old})
    assert answer.created is False
    assert world.engine.steps_of(stored) == []


def test_a_job_that_is_gone_passes_nothing_on(world: World) -> None:
    world.engine.enqueue_checked([_node_job()], steps_from={NEW: "MAIL#0:gone00000000000000000000000"})
    assert world.engine.steps_of(NEW) == []


def test_a_refused_enqueue_leaves_no_step_behind(world: World) -> None:
    old = _with_steps(world, "at-most-once")
    other_shard = _node_job("MAIL#1:resumed0000000000000000000")
    with pytest.raises(EnqueueValidationError, match="must belong to shard 0"):
        world.engine.enqueue_checked([_node_job(), other_shard], steps_from={NEW: old})
    assert (world.engine.get(NEW), world.engine.steps_of(NEW)) == (None, [])


def test_the_job_and_its_steps_are_stored_together_or_not_at_all(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = _with_steps(world, "at-most-once")
    store = world.engine._steps  # pyright: ignore[reportPrivateUsage]
    copy = store.inherit

    def copy_then_fail(job_id: str, from_job_id: str) -> Any:
        copy(job_id, from_job_id)
        raise RuntimeError("the transaction fails after the copy")

    monkeypatch.setattr(store, "inherit", copy_then_fail)
    with pytest.raises(RuntimeError, match="after the copy"):
        world.engine.enqueue_checked([_node_job()], steps_from={NEW: old})
    assert (world.engine.get(NEW), world.engine.steps_of(NEW)) == (None, [])  # both rolled back


def test_steps_from_must_be_an_object_of_job_ids() -> None:
    assert _steps_from('{"MAIL#0:a": "MAIL#0:b"}') == {"MAIL#0:a": "MAIL#0:b"}
    with pytest.raises(EnqueueValidationError, match="steps_from must be a JSON object of job ids"):
        _steps_from('["MAIL#0:a"]')
