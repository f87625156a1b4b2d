"""A concurrency_key's slot outlives an attempt the shard stops waiting for while it may still run (ADR-0185).

The shard ends such an attempt's job at once (STALLED, CANCELLED, or SCHEDULED/FAILED for a retry), but the
performer is never stopped: it may run until its invocation's hard end. Until then the key's slot stays taken,
so per-key serialisation holds even when the next job of the key is ready long before. Each case states the
first attempt's own deadline (dispatch + timeout_ms), to show the next job waits past the point the shard
gave the attempt up.
"""

from __future__ import annotations

from tests.unit.shard.shard_world import T0, World
from tsumugi_core.liveness import MAX_INVOCATION_MS
from tsumugi_core.policy import PolicyPatch
from tsumugi_core.states import JobState
from tsumugi_scheduler.shard.records import Failed, Succeeded

GRACE = 30_000  # the default reaper_grace_ms
TEN_MINUTES = 600_000


def _sent(world: World) -> list[str]:
    return [m.job_id for m in world.dispatch()]


def _state(world: World, job_id: str) -> JobState:
    job = world.engine.get(job_id)
    assert job is not None
    return job.state


def _holds(world: World) -> list[tuple[str, int, str, int]]:
    rows = world.sql.exec(
        "SELECT job_id, attempt, key, until FROM key_hold ORDER BY job_id, attempt"
    ).toArray()
    return [(str(r["job_id"]), int(r["attempt"]), str(r["key"]), int(r["until"])) for r in rows]


def _pair(world: World, **options: object) -> tuple[str, str]:
    """Two jobs of key K; the first dispatched, the second waiting behind it."""
    first = world.enqueue(concurrency_key="K", **options)
    second = world.enqueue(concurrency_key="K", **options)
    assert _sent(world) == [first]
    return first, second


def _waits_until(world: World, job_id: str, until: int) -> None:
    """``job_id`` is not dispatched before ``until`` and is at ``until``; the shard wakes by then."""
    assert _sent(world) == []
    wake = world.engine.next_wake_at()
    assert wake is not None
    assert wake <= until
    world.clock.set(until - 1)
    assert _sent(world) == []
    world.clock.set(until)
    assert _sent(world) == [job_id]


def test_a_lost_at_most_once_call_ends_stalled_at_once_and_holds_its_key_to_the_claims_hard_end(
    world: World,
) -> None:
    first, second = _pair(world, guarantee="at-most-once", timeout_ms=TEN_MINUTES)
    world.clock.advance(100)
    assert world.engine.claim(first, 1)
    world.clock.advance(5_000)  # the performer call failed: it may still be running
    answer = world.engine.report(first, 1, Failed(error="connection lost", unknown=True))
    assert answer.state == JobState.STALLED  # the job's state changes at once
    assert world.clock.now_ms() < T0 + TEN_MINUTES  # the first attempt's own deadline is still ahead
    claim_end = T0 + 100 + MAX_INVOCATION_MS
    assert _holds(world) == [(first, 1, "K", claim_end)]
    _waits_until(world, second, claim_end)


def test_a_silent_claimed_at_most_once_job_is_stalled_and_its_key_waits_for_the_claims_hard_end(
    world: World,
) -> None:
    first, second = _pair(world, guarantee="at-most-once", timeout_ms=10_000)
    assert world.engine.claim(first, 1)
    world.clock.advance(10_000 + GRACE)  # its heartbeats were lost: the reaper gives it up
    assert _sent(world) == []
    assert _state(world, first) == JobState.STALLED
    _waits_until(world, second, T0 + MAX_INVOCATION_MS)


def test_an_unheeded_cancel_ends_the_job_after_grace_but_not_its_key_slot(world: World) -> None:
    first, second = _pair(world, guarantee="at-most-once", timeout_ms=TEN_MINUTES)
    assert world.engine.claim(first, 1)
    world.clock.advance(1_000)
    assert world.engine.cancel(first).requested
    world.clock.advance(GRACE)  # the performer ignores the request
    assert _sent(world) == []
    assert _state(world, first) == JobState.CANCELLED
    assert world.clock.now_ms() < T0 + TEN_MINUTES
    _waits_until(world, second, T0 + MAX_INVOCATION_MS)


def test_an_unheeded_cancel_of_an_at_least_once_job_holds_its_key_from_its_last_sign_of_life(
    world: World,
) -> None:
    first, second = _pair(world, timeout_ms=TEN_MINUTES)
    world.clock.advance(200)
    assert world.engine.start_many([(first, 1)]) == [True]
    world.clock.advance(2_000)
    assert world.engine.heartbeat(first, 1).accepted
    assert world.engine.cancel(first).requested
    world.clock.advance(GRACE)
    assert _sent(world) == []
    assert _state(world, first) == JobState.CANCELLED
    _waits_until(world, second, T0 + 2_200 + MAX_INVOCATION_MS)


def test_an_expired_running_job_that_does_not_stop_holds_its_key(world: World) -> None:
    first = world.enqueue(
        concurrency_key="K", guarantee="at-most-once", timeout_ms=TEN_MINUTES, expires_in_ms=5_000
    )
    second = world.enqueue(concurrency_key="K", guarantee="at-most-once", timeout_ms=TEN_MINUTES)
    assert _sent(world) == [first]
    assert world.engine.claim(first, 1)
    world.clock.advance(5_000 + GRACE)
    world.engine.tick()  # expiry asks it to stop
    world.clock.advance(GRACE)
    assert _sent(world) == []
    assert _state(world, first) == JobState.CANCELLED
    _waits_until(world, second, T0 + MAX_INVOCATION_MS)


def test_an_at_least_once_timeout_holds_the_key_for_its_own_retry_and_the_keys_next_job(world: World) -> None:
    first, second = _pair(world, timeout_ms=10_000)
    world.clock.advance(150)
    assert world.engine.start_many([(first, 1)]) == [True]
    world.clock.advance(10_000)  # the consumer gave up waiting; the performer was not stopped
    assert world.engine.report(first, 1, Failed(error="TsumugiTimeoutError", unknown=True)).state == (
        JobState.SCHEDULED
    )
    world.clock.advance(60_000)  # its backoff is long over
    assert _sent(world) == []
    world.engine.ack_changes(world.engine.feed_head())
    until = T0 + 150 + MAX_INVOCATION_MS
    assert world.engine.next_wake_at() == until  # nothing else is due: the shard wakes for the hold's end
    world.clock.set(until)
    # One job of K at a time again: the oldest waiting one, then the retry once it finished.
    assert _sent(world) == [second]
    assert _sent(world) == []
    assert world.engine.report(second, 1, Succeeded(result=None)).accepted
    assert _sent(world) == [first]


def test_an_abandoned_attempt_never_marked_holds_its_key_from_the_report(world: World) -> None:
    # A timeout shorter than the start mark's delay: the consumer called the performer, so it started.
    first, second = _pair(world, timeout_ms=50, max_attempts=1)
    world.clock.advance(50)
    assert world.engine.report(first, 1, Failed(error="timeout", unknown=True)).state == JobState.FAILED
    _waits_until(world, second, T0 + 50 + MAX_INVOCATION_MS)


def test_a_silent_at_least_once_attempt_that_showed_life_holds_its_key_after_the_requeue(
    world: World,
) -> None:
    first, second = _pair(world, timeout_ms=10_000)
    world.clock.advance(3_000)
    assert world.engine.heartbeat(first, 1).accepted
    world.clock.advance(10_000 + GRACE)
    assert _sent(world) == []
    assert _state(world, first) == JobState.SCHEDULED
    _waits_until(world, second, T0 + 3_000 + MAX_INVOCATION_MS)


def test_an_attempt_that_never_showed_life_holds_nothing(world: World) -> None:
    # A lost message: an at-most-once attempt never claimed can no longer be claimed, and an at-least-once one
    # with no start mark, heartbeat or report gives the shard nothing to bound it by.
    pairs = [
        [world.enqueue(concurrency_key=guarantee, guarantee=guarantee, timeout_ms=10_000) for _ in range(2)]
        for guarantee in ("at-most-once", "at-least-once")
    ]
    assert _sent(world) == [first for first, _ in pairs]
    world.clock.advance(10_000 + GRACE)
    assert _sent(world) == [second for _, second in pairs]
    assert [_state(world, first) for first, _ in pairs] == [JobState.SCHEDULED] * 2
    assert _holds(world) == []


def test_an_answered_attempt_frees_its_key_at_once(world: World) -> None:
    first, second = _pair(world, guarantee="at-most-once", timeout_ms=TEN_MINUTES)
    assert world.engine.claim(first, 1)
    world.clock.advance(1_000)
    assert world.engine.cancel(first).requested
    # The performer heard the request and stopped: its failure is an answer, nothing runs on.
    assert world.engine.report(first, 1, Failed(error="stopped")).state == JobState.CANCELLED
    assert _sent(world) == [second]
    assert _holds(world) == []


def test_a_hold_takes_one_of_several_key_slots(world: World) -> None:
    world.engine.configure(PolicyPatch(per_key_concurrency=2))
    jobs = [world.enqueue(concurrency_key="K", guarantee="at-most-once") for _ in range(4)]
    assert _sent(world) == jobs[:2]
    assert world.engine.claim(jobs[0], 1)
    world.engine.report(jobs[0], 1, Failed(error="lost", unknown=True))
    assert _sent(world) == []  # the stalled attempt and jobs[1]
    world.engine.report(jobs[1], 1, Succeeded(result=None))
    assert _sent(world) == [jobs[2]]
    assert _sent(world) == []
    assert world.engine.diagnostics().blocked.per_key_concurrency == 1


def test_a_hold_binds_its_key_only(world: World) -> None:
    world.engine.configure(PolicyPatch(concurrency=1))
    first, _ = _pair(world, guarantee="at-most-once")
    other_key = world.enqueue(concurrency_key="L")
    no_key = world.enqueue()
    assert world.engine.claim(first, 1)
    world.engine.report(first, 1, Failed(error="lost", unknown=True))
    # The binding's concurrency counts jobs in flight only: the slot a hold keeps is its key's.
    assert _sent(world) == [other_key]
    world.engine.report(other_key, 1, Succeeded(result=None))
    assert _sent(world) == [no_key]


def test_a_job_without_a_key_holds_nothing(world: World) -> None:
    job_id = world.enqueue(guarantee="at-most-once")
    world.dispatch()
    assert world.engine.claim(job_id, 1)
    world.engine.report(job_id, 1, Failed(error="lost", unknown=True))
    assert _holds(world) == []


def test_an_ended_hold_is_dropped_and_a_late_reap_holds_nothing(world: World) -> None:
    first, second = _pair(world, guarantee="at-most-once", timeout_ms=10_000)
    assert world.engine.claim(first, 1)
    world.engine.report(first, 1, Failed(error="lost", unknown=True))
    assert len(_holds(world)) == 1
    world.clock.set(T0 + MAX_INVOCATION_MS)
    assert _sent(world) == [second]
    assert _holds(world) == []  # the tick at its end dropped it
    assert world.engine.claim(second, 1)
    # The shard slept through the attempt's whole invocation: by the time the reaper acts it cannot be running.
    world.clock.advance(MAX_INVOCATION_MS)
    assert _sent(world) == []
    assert _state(world, second) == JobState.STALLED
    assert _holds(world) == []


def test_a_hold_survives_its_jobs_sweep(world: World) -> None:
    first, second = _pair(world, guarantee="at-most-once", timeout_ms=TEN_MINUTES)
    assert world.engine.claim(first, 1)
    world.clock.advance(1_000)
    world.engine.cancel(first)
    world.clock.advance(GRACE)
    assert _sent(world) == []
    world.engine.ack_changes(world.engine.feed_head())
    world.clock.advance(300_001)  # CANCELLED rows go after sweep_after_ms (5 minutes)
    assert _sent(world) == []
    assert world.engine.get(first) is None
    _waits_until(world, second, T0 + MAX_INVOCATION_MS)
