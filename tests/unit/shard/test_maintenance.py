"""Reaper, cancellation (A6), expiry (A5), manual retry / reschedule, settings, sweep, notices."""

from __future__ import annotations

from collections.abc import Callable

from tests.unit.shard.shard_world import T0, World
from tsumugi_core.options import EnqueueItem, RateLimit
from tsumugi_core.policy import Policy, PolicyPatch, Retention, ShardSettings
from tsumugi_core.states import JobState
from tsumugi_core.testing import FixedRandom, SequentialIds
from tsumugi_scheduler.shard.engine import JobShardEngine
from tsumugi_scheduler.shard.records import Failed, FailureNotice, NoticeConfig, SettledNotice, Succeeded
from tsumugi_scheduler.shard.tick import MAX_MAINTENANCE_PER_TICK

SILENT = 60_000 + 30_000  # default timeout + reaper grace


def state(world: World, job_id: str) -> JobState:
    job = world.engine.get(job_id)
    assert job is not None
    return job.state


def test_reaper_requeues_then_fails_with_a_recorded_reason(world: World) -> None:
    job_id = world.enqueue(max_attempts=2)
    world.dispatch()
    world.clock.advance(SILENT)
    assert world.dispatch() == []  # reaped now, not re-dispatched in the same tick
    assert state(world, job_id) == JobState.SCHEDULED
    [m] = world.dispatch()
    assert m.attempt == 2
    world.clock.advance(SILENT)
    world.engine.tick()
    job = world.engine.get(job_id)
    assert job is not None
    assert job.state == JobState.FAILED
    assert "attempts exhausted (2/2)" in (job.reason or "")
    assert world.engine.report(job_id, 1, Succeeded()).accepted is False


def test_at_most_once_claimed_stalls_and_never_claimed_is_requeued(world: World) -> None:
    claimed = world.enqueue(guarantee="at-most-once")
    unclaimed = world.enqueue(guarantee="at-most-once")
    world.dispatch()
    world.engine.claim(claimed, 1)
    world.clock.advance(SILENT)
    world.engine.tick()
    assert state(world, claimed) == JobState.STALLED
    assert "never re-run automatically" in (world.engine.get(claimed).reason or "")  # type: ignore[union-attr]
    assert state(world, unclaimed) == JobState.SCHEDULED
    [m] = world.dispatch()
    assert (m.job_id, m.attempt) == (unclaimed, 2)
    assert world.engine.claim(unclaimed, 1) is False  # the old message can no longer start it


def test_cancel_scheduled_at_once_and_running_by_request(world: World) -> None:
    waiting = world.enqueue(delay_ms=10_000)
    running = world.enqueue()
    world.dispatch()
    assert world.engine.cancel(waiting).ok is True
    assert state(world, waiting) == JobState.CANCELLED
    answer = world.engine.cancel(running)
    assert (answer.ok, answer.requested) == (True, True)
    assert world.engine.heartbeat(running, 1).cancel_requested is True
    assert world.engine.report(running, 1, Failed(error="stopped")).state == JobState.CANCELLED
    assert world.engine.cancel(running).reason == "invalid-state"
    assert world.engine.cancel("MAIL#0:nope").reason == "gone"


def test_an_attempt_stopped_by_a_cancel_request_is_logged_cancelled_with_its_error(world: World) -> None:
    running = world.enqueue()
    world.dispatch()
    world.engine.cancel(running)
    world.clock.advance(1_000)
    world.engine.report(running, 1, Failed(error="StoppedError: asked to stop"))
    [attempt] = world.engine.attempts_of(running)
    # The job ends CANCELLED; its attempt must not read FAILED beside it (issue 11).
    assert (attempt.state, attempt.error) == (JobState.CANCELLED, "StoppedError: asked to stop")
    assert attempt.finished_at == T0 + 1_000


def test_unanswered_cancel_ends_after_grace_and_success_before_it_stays(world: World) -> None:
    quiet = world.enqueue()
    done = world.enqueue()
    world.dispatch()
    world.engine.report(done, 1, Succeeded(result=1))
    world.engine.cancel(quiet)
    world.clock.advance(29_999)
    world.engine.heartbeat(quiet, 1)  # a heartbeat does not postpone the cancel
    world.engine.tick()
    assert state(world, quiet) == JobState.QUEUED
    world.clock.advance(1)
    world.engine.tick()
    assert state(world, quiet) == JobState.CANCELLED
    assert world.engine.report(quiet, 1, Succeeded()).accepted is False
    assert state(world, done) == JobState.COMPLETED


def test_cancelling_an_unstarted_at_most_once_job_is_immediate(world: World) -> None:
    job_id = world.enqueue(guarantee="at-most-once")
    world.dispatch()
    assert world.engine.cancel(job_id).requested is False
    assert state(world, job_id) == JobState.CANCELLED
    assert world.engine.claim(job_id, 1) is False


def test_expiry_cancels_waiting_jobs_and_asks_dispatched_ones_to_stop(world: World) -> None:
    waiting = world.enqueue(delay_ms=5000, expires_in_ms=1000)
    running = world.enqueue(expires_at=T0 + 1000)
    world.dispatch()
    world.clock.advance(1000)
    world.engine.tick()
    assert state(world, waiting) == JobState.CANCELLED
    assert world.engine.heartbeat(running, 1).cancel_requested is True
    world.clock.advance(30_000)
    world.engine.tick()
    assert state(world, running) == JobState.CANCELLED


def test_jobs_expired_beyond_one_ticks_maintenance_bound_are_never_dispatched(world: World) -> None:
    count = MAX_MAINTENANCE_PER_TICK + 50
    ids = [world.enqueue(expires_at=T0 + 1000) for _ in range(count)]
    world.clock.advance(1000)  # exactly at expires_at: expired (expiry uses expires_at <= now)
    assert world.dispatch() == []  # 200 cancelled by expiry, the other 50 skipped by the dispatch filter
    assert sum(state(world, i) == JobState.CANCELLED for i in ids) == MAX_MAINTENANCE_PER_TICK
    assert world.dispatch() == []
    assert {state(world, i) for i in ids} == {JobState.CANCELLED}


def test_an_unclaimed_at_most_once_job_both_expired_and_silent_ends_cancelled(world: World) -> None:
    job_id = world.enqueue(guarantee="at-most-once", expires_in_ms=1000, timeout_ms=500)
    [message] = world.dispatch()
    world.clock.advance(100_000)  # past the expiry and past the silence deadline in the same tick
    assert world.dispatch() == []
    job = world.engine.get(job_id)
    assert job is not None
    assert (job.state, job.reason) == (JobState.CANCELLED, f"expired at {T0 + 1000}")
    assert world.engine.claim(job_id, message.attempt) is False


def test_a_dispatched_job_both_expired_and_silent_is_cancelled_not_requeued(world: World) -> None:
    job_id = world.enqueue(expires_in_ms=1000, timeout_ms=500)
    [message] = world.dispatch()
    world.clock.advance(100_000)
    assert world.dispatch() == []  # expiry asks it to stop; its attempt is already over, so it ends now
    job = world.engine.get(job_id)
    assert job is not None
    assert job.state == JobState.CANCELLED
    assert job.attempts == 1  # the silent attempt is counted and fenced off
    assert world.engine.report(job_id, message.attempt, Succeeded()).accepted is False


def test_a_job_silent_while_its_cancel_waits_out_the_grace_is_cancelled(world: World) -> None:
    job_id = world.enqueue()
    world.dispatch()
    world.clock.advance(80_000)  # past the timeout, inside the reaper grace
    assert world.engine.cancel(job_id).requested is True
    world.clock.advance(10_000)  # silent now; the cancel's own grace would end 20 s later
    assert world.dispatch() == []
    job = world.engine.get(job_id)
    assert job is not None
    assert job.state == JobState.CANCELLED
    assert (job.reason or "").startswith(f"cancel requested at {T0 + 80_000}")


def test_manual_retry_and_reschedule_answers(world: World) -> None:
    job_id = world.enqueue(max_attempts=1)
    world.dispatch()
    world.engine.report(job_id, 1, Failed(error="e"))
    assert world.engine.reschedule(job_id, T0).reason == "invalid-state"
    assert world.engine.retry(job_id).ok is True
    assert state(world, job_id) == JobState.SCHEDULED
    assert world.engine.retry(job_id).reason == "invalid-state"
    assert world.engine.reschedule(job_id, T0 + 5000, priority=3).ok is True
    job = world.engine.get(job_id)
    assert job is not None
    assert (job.run_after, job.priority) == (T0 + 5000, 3)
    assert world.engine.retry("MAIL#0:nope").reason == "gone"
    bulk = world.engine.mutate_many("cancel", [job_id, "MAIL#0:nope"])
    assert bulk.ok == [job_id]
    assert [(f.id, f.reason) for f in bulk.failed] == [("MAIL#0:nope", "gone")]


def test_retry_is_gone_after_failed_retention(world: World) -> None:
    job_id = world.enqueue(max_attempts=1)
    world.dispatch()
    world.engine.report(job_id, 1, Failed(error="e"))
    world.clock.advance(604_800_000)
    assert world.engine.retry(job_id).reason == "gone"


def test_pause_pins_over_code_settings_and_reset_returns_to_them(world: World) -> None:
    code = ShardSettings(policy=Policy(concurrency=1))
    world.engine.enqueue_many([], settings=code)
    world.enqueue()
    world.enqueue()
    world.engine.configure(PolicyPatch(paused=True))
    assert world.dispatch() == []
    assert world.engine.diagnostics().blocked.paused == 2
    world.enqueue()  # enqueue still accepted while paused
    world.engine.enqueue_many([], settings=ShardSettings(policy=Policy(concurrency=5)))
    assert world.engine.settings.policy.paused is True  # code settings do not undo a pin
    world.engine.reset_policy()
    assert len(world.dispatch()) == 3


def test_rate_bucket_is_persisted_and_tells_when_to_wake(world: World) -> None:
    world.engine.configure(PolicyPatch(rate=RateLimit(tokens=1, interval_ms=1000)))
    for _ in range(2):
        world.enqueue()
    first = world.engine.tick()
    assert len(first.dispatches) == 1
    assert first.wake_at == T0  # the change feed is still pending
    world.engine.ack_changes(world.engine.changes()[-1].job.seq)
    assert world.engine.next_wake_at() == T0 + 1000
    world.clock.advance(1000)
    assert len(world.dispatch()) == 1


def test_sweep_waits_for_projection_and_retention(world: World) -> None:
    job_id = world.enqueue()
    world.engine.enqueue_many([], settings=ShardSettings(retention=Retention(sweep_after_ms=300_000)))
    world.dispatch()
    world.engine.report(job_id, 1, Succeeded())
    world.clock.advance(300_001)
    world.engine.tick()
    assert world.engine.get(job_id) is not None  # not yet projected
    world.engine.ack_changes(world.engine.changes()[-1].job.seq)
    world.engine.tick()
    assert world.engine.get(job_id) is None
    assert world.engine.cancel(job_id).reason == "gone"


def test_notices_are_written_with_the_terminal_transition(make_world: Callable[..., World]) -> None:
    config = NoticeConfig(
        on_failure="NOTIFY",
        on_settled_binding="SETTLED",
        on_settled_states=frozenset({JobState.COMPLETED, JobState.FAILED}),
    )
    world = make_world(notices=config)
    failing = world.enqueue(max_attempts=1)
    ok = world.enqueue()
    world.dispatch()
    world.engine.report(failing, 1, Failed(error="boom"))
    world.engine.report(ok, 1, Succeeded(result={"r": 1}))
    notices = world.engine.notices()
    assert [(n.target, type(n.notice)) for n in notices] == [
        ("NOTIFY", FailureNotice),
        ("SETTLED", SettledNotice),
        ("SETTLED", SettledNotice),
    ]
    failure = notices[0].notice
    assert isinstance(failure, FailureNotice)
    assert (failure.job_id, failure.state, failure.error, failure.attempts) == (
        failing,
        JobState.FAILED,
        "boom",
        1,
    )
    settled = notices[2].notice
    assert isinstance(settled, SettledNotice)
    assert settled.result == {"r": 1}
    assert settled.error is None
    world.engine.ack_notices(notices[-1].seq)
    assert world.engine.notices() == []


def test_jobs_of_a_notice_binding_are_not_notified(make_world: Callable[..., World]) -> None:
    world = make_world(notices=NoticeConfig(on_failure="MAIL"))
    job_id = world.enqueue(max_attempts=1)
    world.dispatch()
    world.engine.report(job_id, 1, Failed(error="boom"))
    assert world.engine.notices() == []


BOTH = NoticeConfig(
    on_failure="NOTIFY",
    on_settled_binding="SETTLED",
    on_settled_states=frozenset({JobState.COMPLETED, JobState.FAILED}),
)


def _fail_and_complete(world: World) -> list[tuple[str, str]]:
    failing = world.engine.enqueue_many(
        [EnqueueItem(binding=world.engine.binding, payload=1, max_attempts=1)]
    )[0].id
    ok = world.engine.enqueue_many([EnqueueItem(binding=world.engine.binding, payload=2)])[0].id
    world.dispatch()
    world.engine.report(failing, 1, Failed(error="boom"))
    world.engine.report(ok, 1, Succeeded(result=None))
    names = {failing: "failed", ok: "completed"}
    return [(n.target, names[n.notice.job_id]) for n in world.engine.notices()]


def test_failures_of_the_on_settled_binding_reach_on_failure(make_world: Callable[..., World]) -> None:
    # Only the on_failure binding's own failures are kept from it; on_settled's jobs are notified like any.
    assert _fail_and_complete(make_world(notices=BOTH, binding="SETTLED")) == [("NOTIFY", "failed")]


def test_jobs_of_the_on_failure_binding_reach_neither_notice_binding(
    make_world: Callable[..., World],
) -> None:
    assert _fail_and_complete(make_world(notices=BOTH, binding="NOTIFY")) == []


def test_every_other_binding_is_notified_to_both(make_world: Callable[..., World]) -> None:
    assert _fail_and_complete(make_world(notices=BOTH, binding="MAIL")) == [
        ("NOTIFY", "failed"),
        ("SETTLED", "failed"),
        ("SETTLED", "completed"),
    ]


def test_a_runtime_change_pins_every_field_until_reset(world: World) -> None:
    # Seed: settings changed at run time win over the bindings', and after that the bindings' no longer apply.
    world.engine.enqueue_many([], settings=ShardSettings(policy=Policy(concurrency=1, reaper_grace_ms=7)))
    world.engine.configure(PolicyPatch(paused=True))
    deploy = ShardSettings(
        policy=Policy(concurrency=5, reaper_grace_ms=9), retention=Retention(sweep_after_ms=3)
    )
    world.engine.enqueue_many([], settings=deploy)  # a deploy that changes fields the pin did not name
    assert world.engine.settings == ShardSettings(
        policy=Policy(concurrency=1, reaper_grace_ms=7, paused=True)
    )
    assert world.engine.pinned is True
    world.engine.reset_policy()
    assert world.engine.settings == deploy
    assert world.engine.pinned is False


def test_a_retention_only_change_pins_retention_and_policy(world: World) -> None:
    world.engine.enqueue_many([], settings=ShardSettings(policy=Policy(concurrency=4)))
    world.engine.configure(PolicyPatch(failed_retention_ms=60_000))
    pinned = ShardSettings(policy=Policy(concurrency=4), retention=Retention(failed_retention_ms=60_000))
    assert world.engine.settings == pinned
    world.engine.enqueue_many([], settings=ShardSettings(policy=Policy(concurrency=8)))
    assert world.engine.settings == pinned
    world.engine.configure(PolicyPatch(concurrency=2))  # a second change builds on the pinned settings
    assert world.engine.settings.policy.concurrency == 2
    assert world.engine.settings.retention.failed_retention_ms == 60_000


def test_field_pins_stored_before_adr_0058_become_whole_pins_when_the_shard_opens(world: World) -> None:
    world.engine.enqueue_many([], settings=ShardSettings(policy=Policy(concurrency=3)))
    world.sql.exec("INSERT INTO setting (key, value) VALUES ('pins', ?)", '{"paused":true,"sweepAfterMs":5}')
    reopened = JobShardEngine(
        world.sql, binding="MAIL", shard=0, clock=world.clock, ids=SequentialIds(), rand=FixedRandom(0.5)
    )
    pinned = ShardSettings(policy=Policy(concurrency=3, paused=True), retention=Retention(sweep_after_ms=5))
    assert (reopened.settings, reopened.pinned) == (pinned, True)
    assert world.sql.exec("SELECT value FROM setting WHERE key = 'pins'").toArray() == []
    reopened.enqueue_many([], settings=ShardSettings(policy=Policy(concurrency=9)))
    assert reopened.settings == pinned
