"""RUNNING marks, silence from the start, and at-most-once attempts whose outcome is unknown (ADR-0051, 0052)."""

from __future__ import annotations

from tests.unit.shard.shard_world import T0, World
from tsumugi_core.liveness import MAX_INVOCATION_MS
from tsumugi_core.states import JobState
from tsumugi_scheduler.shard.records import Failed, Succeeded


def _state(world: World, job_id: str) -> JobState:
    job = world.engine.get(job_id)
    assert job is not None
    return job.state


def test_start_many_marks_live_attempts_running_in_one_statement(world: World) -> None:
    ids = [world.enqueue() for _ in range(3)]
    messages = world.dispatch()
    world.clock.advance(40)
    before = world.sql.write_statements
    answers = world.engine.start_many([(m.job_id, m.attempt) for m in messages] + [(ids[0], 7)])
    assert world.sql.write_statements - before == 1
    assert answers == [True, True, True, False]  # a stale attempt changes nothing
    for job_id in ids:
        job = world.engine.get(job_id)
        assert job is not None
        assert (job.state, job.heartbeat_at, job.silence_at) == (
            JobState.RUNNING,
            T0 + 40,
            T0 + 40 + job.timeout_ms,
        )


def test_a_mark_after_the_report_or_a_duplicate_changes_nothing(world: World) -> None:
    job_id = world.enqueue()
    (message,) = world.dispatch()
    world.engine.report(job_id, message.attempt, Succeeded(result=None))
    assert world.engine.start_many([(job_id, 1), (job_id, 1)]) == [False, False]
    assert _state(world, job_id) == JobState.COMPLETED


def test_a_first_try_success_with_its_running_mark_costs_at_most_three_writes(world: World) -> None:
    before = world.sql.write_statements
    for _ in range(10):
        world.enqueue()
    messages = world.dispatch()
    world.engine.start_many([(m.job_id, m.attempt) for m in messages])
    for m in messages:
        world.engine.report(m.job_id, m.attempt, Succeeded(result=None))
    assert (world.sql.write_statements - before) / 10 <= 3


def test_the_reaper_measures_silence_from_the_start(world: World) -> None:
    job_id = world.enqueue(timeout_ms=1_000)
    world.dispatch()
    world.clock.advance(20_000)  # the message reached a consumer late
    world.engine.start_many([(job_id, 1)])
    world.clock.advance(1_000 + 30_000 - 1)  # start + timeout + grace - 1: dispatch's deadline is long past
    world.engine.tick()
    assert _state(world, job_id) == JobState.RUNNING
    world.clock.advance(1)
    world.engine.tick()
    assert _state(world, job_id) == JobState.SCHEDULED


def test_an_at_most_once_failure_flagged_unknown_ends_stalled(world: World) -> None:
    job_id = world.enqueue(guarantee="at-most-once", timeout_ms=2_000, max_attempts=3)
    world.dispatch()
    assert world.engine.claim(job_id, 1)
    answer = world.engine.report(job_id, 1, Failed(error="TsumugiTimeoutError: x", unknown=True))
    assert answer.state == JobState.STALLED


def test_an_at_most_once_failure_reported_after_its_silence_point_ends_stalled(world: World) -> None:
    job_id = world.enqueue(guarantee="at-most-once", timeout_ms=2_000, max_attempts=3)
    world.dispatch()
    assert world.engine.claim(job_id, 1)
    world.clock.advance(2_000)  # an old consumer that does not flag its timeouts
    assert world.engine.report(job_id, 1, Failed(error="late")).state == JobState.STALLED


def test_a_definite_at_most_once_failure_is_retried(world: World) -> None:
    job_id = world.enqueue(guarantee="at-most-once", timeout_ms=2_000, max_attempts=3)
    world.dispatch()
    assert world.engine.claim(job_id, 1)
    world.clock.advance(1_999)
    assert world.engine.report(job_id, 1, Failed(error="boom")).state == JobState.SCHEDULED


def test_an_at_least_once_timeout_is_retried(world: World) -> None:
    job_id = world.enqueue(timeout_ms=2_000, max_attempts=3)
    world.dispatch()
    world.clock.advance(2_000)
    assert world.engine.report(job_id, 1, Failed(error="t", unknown=True)).state == JobState.SCHEDULED


def test_a_retried_stalled_at_most_once_job_waits_for_the_claims_invocation_end(world: World) -> None:
    job_id = world.enqueue(guarantee="at-most-once", timeout_ms=2_000, max_attempts=3)
    world.dispatch()
    world.clock.advance(10)
    assert world.engine.claim(job_id, 1)
    world.engine.report(job_id, 1, Failed(error="t", unknown=True))
    assert world.engine.retry(job_id).ok
    job = world.engine.get(job_id)
    assert job is not None
    assert (job.state, job.run_after, job.eligible_at) == (
        JobState.SCHEDULED,
        T0 + 10 + MAX_INVOCATION_MS,
        T0 + 10 + MAX_INVOCATION_MS,
    )
    assert world.dispatch() == []
    world.clock.advance(MAX_INVOCATION_MS)
    assert [m.job_id for m in world.dispatch()] == [job_id]
