"""Integers on the command path stay within 0..MAX_SAFE_INTEGER: validated with a named error, or capped.

Regression tests for issue 2: reschedule took any integer (negative instants, values SQLite cannot bind), a
performer's retry_at and a huge fixed backoff went past MAX_SAFE_INTEGER, and out-of-range attempt numbers,
feed limits or feed positions surfaced as a bare OverflowError from the driver.
"""

from __future__ import annotations

import pytest

from tests.unit.shard.shard_world import T0, World
from tsumugi_core.options import MAX_SAFE_INTEGER, EnqueueValidationError, FixedBackoff
from tsumugi_core.states import JobState
from tsumugi_scheduler.shard.records import Failed, Succeeded

HUGE = 2**64


@pytest.mark.parametrize(
    ("run_after", "priority", "message"),
    [
        (-5, None, "run_after must not be negative"),
        (HUGE, None, f"run_after must be between 0 and {MAX_SAFE_INTEGER}"),
        (MAX_SAFE_INTEGER + 1, None, f"run_after must be between 0 and {MAX_SAFE_INTEGER}"),
        (1.5, None, "run_after must be an integer, got 1.5"),
        (T0, HUGE, f"priority must be between -{MAX_SAFE_INTEGER} and {MAX_SAFE_INTEGER}"),
        (T0, True, "priority must be an integer, got True"),
    ],
)
def test_reschedule_takes_only_what_enqueue_takes(
    world: World, run_after: object, priority: object, message: str
) -> None:
    job_id = world.enqueue(delay_ms=10_000)
    with pytest.raises(EnqueueValidationError) as caught:
        world.engine.reschedule(job_id, run_after, priority)  # type: ignore[arg-type]
    assert str(caught.value) == message
    job = world.engine.get(job_id)
    assert job is not None
    assert (job.run_after, job.priority) == (T0 + 10_000, 0)


def test_reschedule_accepts_the_edges_of_the_ranges(world: World) -> None:
    job_id = world.enqueue(delay_ms=10_000)
    assert world.engine.reschedule(job_id, MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER).ok is True
    job = world.engine.get(job_id)
    assert job is not None
    assert (job.run_after, job.eligible_at, job.priority) == (
        MAX_SAFE_INTEGER,
        MAX_SAFE_INTEGER,
        -MAX_SAFE_INTEGER,
    )


def test_a_performer_retry_at_past_max_safe_integer_is_capped(world: World) -> None:
    job_id = world.enqueue()
    world.dispatch()
    answer = world.engine.report(job_id, 1, Failed(error="later", retry_at=HUGE))
    job = world.engine.get(job_id)
    assert job is not None
    assert (answer.state, job.run_after, job.eligible_at) == (
        JobState.SCHEDULED,
        MAX_SAFE_INTEGER,
        MAX_SAFE_INTEGER,
    )


def test_a_huge_fixed_backoff_retries_at_most_at_max_safe_integer(world: World) -> None:
    job_id = world.enqueue(backoff=FixedBackoff(delay_ms=MAX_SAFE_INTEGER, jitter=False))
    world.dispatch()
    world.engine.report(job_id, 1, Failed(error="x"))
    assert world.engine.get(job_id).run_after == MAX_SAFE_INTEGER  # type: ignore[union-attr]


@pytest.mark.parametrize("attempt", [HUGE, -HUGE, 0])
def test_an_unbindable_attempt_number_is_refused_like_any_stale_one(world: World, attempt: int) -> None:
    job_id = world.enqueue()
    world.dispatch()
    assert world.engine.report(job_id, attempt, Succeeded(result=1)).accepted is False
    assert world.engine.report(job_id, attempt, Failed(error="x")).accepted is False
    assert world.engine.get(job_id).state == JobState.QUEUED  # type: ignore[union-attr]


def test_out_of_range_feed_limits_and_positions_read_or_ack_everything(world: World) -> None:
    job_id = world.enqueue(max_attempts=1)
    world.dispatch()
    world.engine.report(job_id, 1, Failed(error="x"))
    assert world.engine.changes(-1) == []  # a negative limit is an empty read, not an unbounded one
    assert [s.job.id for s in world.engine.changes(HUGE)] == [job_id]
    assert (world.engine.notices(HUGE), world.engine.run_events(HUGE)) == ([], [])
    world.engine.ack_changes(HUGE)
    world.engine.ack_notices(HUGE)
    world.engine.ack_run_events(HUGE)
    assert world.engine.changes() == []
    assert world.engine.tick().dispatches == []  # the stored projection cursor still binds


def test_unique_for_ms_at_its_accepted_maximum_reserves_the_key_for_good(world: World) -> None:
    # now + unique_for_ms passed 2**53 - 1: the reservation could not be stored and the whole batch failed.
    first = world.enqueue(unique_key="u", unique_for_ms=MAX_SAFE_INTEGER)
    assert world.enqueue(unique_key="u", unique_for_ms=MAX_SAFE_INTEGER) == first
    world.clock.advance(10 * 365 * 24 * 3_600_000)
    assert world.enqueue(unique_key="u") == first
