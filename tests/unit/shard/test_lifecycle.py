"""Enqueue, dispatch, claim, report, heartbeat, fencing, retries and the write budget."""

from __future__ import annotations

import msgspec
import pytest

from tests.unit.shard.shard_world import T0, World
from tsumugi_core.errors import RESULT_NOT_STORABLE_ERROR
from tsumugi_core.options import EnqueueItem, EnqueueValidationError, FixedBackoff
from tsumugi_core.states import JobState
from tsumugi_scheduler.shard.records import Failed, ReportAnswer, Succeeded


def test_first_try_success_costs_at_most_four_write_statements(world: World) -> None:
    before = world.sql.write_statements
    for _ in range(3):
        world.enqueue()
    messages = world.dispatch()
    for m in messages:
        world.engine.report(m.job_id, m.attempt, Succeeded(result={"ok": True}))
    assert len(messages) == 3
    assert (world.sql.write_statements - before) / 3 <= 4


def test_dispatch_message_carries_the_attempt_and_options(world: World) -> None:
    job_id = world.enqueue(payload={"to": "a"}, timeout_ms=500, guarantee="at-most-once")
    [message] = world.dispatch()
    assert (message.job_id, message.attempt, message.payload, message.claim_required) == (
        job_id,
        1,
        {"to": "a"},
        True,
    )
    assert message.deadline_at == T0 + 500 + 30_000
    assert message.max_attempts == 3  # the performer's JobContext tells it without another read
    assert world.engine.get(job_id).state == JobState.QUEUED  # type: ignore[union-attr]
    assert world.dispatch() == []  # CAS: a second tick does not dispatch it again


def test_dispatch_message_wire_body_names_max_attempts_in_camel_case(world: World) -> None:
    world.enqueue(max_attempts=7, traceparent="00-" + "1" * 32 + "-" + "2" * 16 + "-01")
    [message] = world.dispatch()
    body = msgspec.json.decode(msgspec.json.encode(message))
    assert body["maxAttempts"] == 7
    assert body["attempt"] == 1
    assert body["traceparent"].startswith("00-1111")


def test_explicit_id_is_idempotent_and_unique_key_returns_the_holder(world: World) -> None:
    first = world.engine.enqueue_many([EnqueueItem(binding="MAIL", payload=1, id="MAIL#0:fixed")])[0]
    again = world.engine.enqueue_many([EnqueueItem(binding="MAIL", payload=2, id="MAIL#0:fixed")])[0]
    assert (first.created, again.created, again.id) == (True, False, "MAIL#0:fixed")
    holder = world.enqueue(unique_key="k", unique_for_ms=1000)
    assert world.enqueue(unique_key="k", unique_for_ms=1000) == holder
    world.clock.advance(1000)
    assert world.enqueue(unique_key="k") != holder


def test_given_ids_already_stored_or_repeated_in_the_same_call_are_absorbed(world: World) -> None:
    world.engine.enqueue_many([EnqueueItem(binding="MAIL", payload=0, id="MAIL#0:old")])
    items = [EnqueueItem(binding="MAIL", payload=i, id=f"MAIL#0:n{i}") for i in range(300)]
    items += [
        EnqueueItem(binding="MAIL", payload="again", id="MAIL#0:n7"),
        EnqueueItem(binding="MAIL", payload="known", id="MAIL#0:old"),
    ]
    results = world.engine.enqueue_many(items)
    assert [r.created for r in results] == [True] * 300 + [False, False]
    assert [r.id for r in results[-2:]] == ["MAIL#0:n7", "MAIL#0:old"]
    stored = world.sql.exec("SELECT payload FROM job WHERE id = 'MAIL#0:n7'").one()["payload"]
    assert stored == "7"  # the first of the repeated id is kept


def test_an_invalid_item_rejects_the_whole_call(world: World) -> None:
    with pytest.raises(EnqueueValidationError, match="max_attempts must be at least 1"):
        world.engine.enqueue_many(
            [EnqueueItem(binding="MAIL", payload=1), EnqueueItem(binding="MAIL", payload=1, max_attempts=0)]
        )
    with pytest.raises(EnqueueValidationError, match="binding must be MAIL"):
        world.engine.enqueue_many([EnqueueItem(binding="OTHER", payload=1)])
    with pytest.raises(EnqueueValidationError, match="id must belong to shard 0"):
        world.engine.enqueue_many([EnqueueItem(binding="MAIL", payload=1, id="MAIL#1:x")])
    assert world.engine.diagnostics().counts["SCHEDULED"] == 0


def test_claim_wins_once_and_only_for_the_live_attempt(world: World) -> None:
    job_id = world.enqueue(guarantee="at-most-once")
    [m] = world.dispatch()
    assert world.engine.claim(job_id, m.attempt + 1) is False
    assert world.engine.claim(job_id, m.attempt) is True
    assert world.engine.claim(job_id, m.attempt) is False
    assert world.engine.claim("MAIL#0:unknown", 1) is False
    assert world.engine.get(job_id).state == JobState.RUNNING  # type: ignore[union-attr]


def test_failure_retries_with_backoff_then_fails_when_exhausted(world: World) -> None:
    job_id = world.enqueue(max_attempts=2, backoff=FixedBackoff(delay_ms=1000, jitter=False))
    [m] = world.dispatch()
    answer = world.engine.report(job_id, 1, Failed(error="boom"))
    assert (answer.accepted, answer.state) == (True, JobState.SCHEDULED)
    assert world.engine.get(job_id).run_after == T0 + 1000  # type: ignore[union-attr]
    assert world.dispatch() == []
    world.clock.advance(1000)
    [m] = world.dispatch()
    assert m.attempt == 2
    assert world.engine.report(job_id, 2, Failed(error="x" * 3000)).state == JobState.FAILED
    log = world.engine.attempts_of(job_id)
    assert [(a.attempt, a.state) for a in log] == [(2, JobState.FAILED), (1, JobState.FAILED)]
    assert len(log[0].error or "") == 2000


def test_late_and_duplicate_reports_never_touch_a_newer_attempt(world: World) -> None:
    job_id = world.enqueue(backoff=FixedBackoff(delay_ms=0, jitter=False))
    world.dispatch()
    world.engine.report(job_id, 1, Failed(error="first"))
    [m] = world.dispatch()
    assert m.attempt == 2
    late = world.engine.report(job_id, 1, Succeeded(result="stale"))
    assert (late.accepted, late.state) == (False, JobState.QUEUED)
    assert world.engine.heartbeat(job_id, 1).accepted is False
    assert world.engine.report(job_id, 2, Succeeded(result="fresh")).accepted is True
    assert world.engine.report(job_id, 2, Succeeded(result="dup")).accepted is False
    assert world.engine.get(job_id).result == '"fresh"'  # type: ignore[union-attr]


def test_performer_retry_control(world: World) -> None:
    fatal = world.enqueue()
    later = world.enqueue(max_attempts=2)
    world.dispatch()
    assert world.engine.report(fatal, 1, Failed(error="bad", retryable=False)).state == JobState.FAILED
    world.engine.report(later, 1, Failed(error="429", retry_at=T0 + 50_000))
    assert world.engine.get(later).run_after == T0 + 50_000  # type: ignore[union-attr]
    world.clock.advance(50_000)
    world.dispatch()
    # retry_at never grants attempts beyond max_attempts
    assert world.engine.report(later, 2, Failed(error="429", retry_at=T0 + 99_000)).state == JobState.FAILED


def test_a_performer_retry_at_in_the_past_means_now(world: World) -> None:
    job_id = world.enqueue()
    world.dispatch()
    world.clock.advance(5_000)
    answer = world.engine.report(job_id, 1, Failed(error="429", retry_at=T0 - 60_000))
    job = world.engine.get(job_id)
    assert job is not None
    assert (answer.state, job.run_after, job.eligible_at) == (JobState.SCHEDULED, T0 + 5_000, T0 + 5_000)


def test_claim_refuses_a_queued_job_with_a_pending_cancel(world: World) -> None:
    # Reachable: cancelling a QUEUED at-least-once job only asks it to stop (A6), and claim is open to any
    # guarantee, so a late claim must not start a job the operator already cancelled.
    job_id = world.enqueue()
    [m] = world.dispatch()
    assert world.engine.cancel(job_id).requested is True
    assert world.engine.claim(job_id, m.attempt) is False
    assert world.engine.get(job_id).state == JobState.QUEUED  # type: ignore[union-attr]


def test_heartbeat_extends_the_deadline_and_clamps_progress(world: World) -> None:
    job_id = world.enqueue(timeout_ms=1000)
    world.dispatch()
    world.clock.advance(900)
    answer = world.engine.heartbeat(job_id, 1, progress=7.0)
    assert (answer.accepted, answer.cancel_requested) == (True, False)
    assert world.engine.get(job_id).progress == 1.0  # type: ignore[union-attr]
    world.clock.advance(1000 + 30_000 - 1)  # silent since the heartbeat, one ms short of the deadline
    world.engine.tick()
    assert world.engine.get(job_id).state == JobState.QUEUED  # type: ignore[union-attr]
    world.clock.advance(1)
    world.engine.tick()
    assert world.engine.get(job_id).state == JobState.SCHEDULED  # type: ignore[union-attr]


def test_results_over_the_cap_are_null_and_fail_run_owned_jobs(world: World) -> None:
    plain = world.enqueue()
    owned = world.enqueue(run_id="flow:r1", node_id="n1", max_attempts=1)
    world.dispatch()
    assert world.engine.report(plain, 1, Succeeded(result="x" * 9000)).state == JobState.COMPLETED
    assert world.engine.get(plain).result is None  # type: ignore[union-attr]
    assert world.engine.report(owned, 1, Succeeded(result="x" * 9000)).state == JobState.FAILED
    assert world.engine.attempts_of(owned)[0].error == RESULT_NOT_STORABLE_ERROR
    [event] = world.engine.run_events()
    assert (event.run_id, event.node_id, event.state, event.error) == (
        "flow:r1",
        "n1",
        JobState.FAILED,
        RESULT_NOT_STORABLE_ERROR,
    )
    world.engine.ack_run_events(event.seq)
    assert world.engine.run_events() == []


def test_second_try_success_is_logged_first_try_is_not(world: World) -> None:
    once = world.enqueue()
    twice = world.enqueue(backoff=FixedBackoff(delay_ms=0))
    world.dispatch()
    world.engine.report(once, 1, Succeeded())
    world.engine.report(twice, 1, Failed(error="e"))
    world.dispatch()
    world.engine.report(twice, 2, Succeeded())
    assert world.engine.attempts_of(once) == []
    assert [a.state for a in world.engine.attempts_of(twice)] == [JobState.COMPLETED, JobState.FAILED]


def test_a_success_clears_the_attempt_and_tells_its_run_and_the_feed(world: World) -> None:
    job_id = world.enqueue(run_id="flow:r2", node_id="n2", backoff=FixedBackoff(delay_ms=0, jitter=False))
    world.dispatch()
    world.engine.report(job_id, 1, Failed(error="first"))
    world.clock.advance(10)
    world.dispatch()
    world.engine.heartbeat(job_id, 2, 0.5)
    world.clock.advance(10)
    answer = world.engine.report(job_id, 2, Succeeded(result={"sum": 3}))
    assert (answer.accepted, answer.state) == (True, JobState.COMPLETED)
    job = world.engine.get(job_id)
    assert job is not None
    assert (job.attempts, job.result, job.updated_at) == (2, '{"sum":3}', T0 + 20)
    assert (job.heartbeat_at, job.progress, job.silence_at) == (None, None, None)
    [success, failure] = world.engine.attempts_of(job_id)
    assert (success.attempt, success.state, success.started_at, success.finished_at) == (
        2,
        JobState.COMPLETED,
        T0 + 10,
        T0 + 20,
    )
    assert failure.error == "first"
    assert [(e.state, e.result) for e in world.engine.run_events()][-1] == (JobState.COMPLETED, '{"sum":3}')
    changes = world.engine.changes()
    assert changes[-1].job.id == job_id  # the success is the latest change in the feed
    assert world.engine.report(job_id, 2, Succeeded(result="again")) == ReportAnswer(
        accepted=False, state=JobState.COMPLETED
    )


def test_a_report_naming_a_malformed_attempt_is_refused_not_an_error(world: World) -> None:
    job_id = world.enqueue()
    world.dispatch()
    refused = world.engine.report(job_id, "1", Succeeded())  # type: ignore[arg-type]  # as if from a bad wire body
    assert refused == ReportAnswer(accepted=False, state=JobState.QUEUED)
