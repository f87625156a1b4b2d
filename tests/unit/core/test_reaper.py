"""Reaper decisions: silence deadline boundaries, guarantees, exhaustion and cancel confirmation."""

from __future__ import annotations

from typing import Any

from tsumugi_core.options import Guarantee
from tsumugi_core.reaper import (
    CancelConfirmed,
    Fail,
    InFlightJob,
    Requeue,
    Stall,
    reap_decision,
    silence_deadline,
)
from tsumugi_core.states import JobState

GRACE = 30


def inflight(**fields: Any) -> InFlightJob:
    base: dict[str, Any] = {
        "id": "M#0:a",
        "state": JobState.QUEUED,
        "guarantee": Guarantee.AT_LEAST_ONCE,
        "attempts": 0,
        "max_attempts": 3,
        "timeout_ms": 100,
        "dispatched_at": 1000,
    }
    base.update(fields)
    return InFlightJob(**base)


def test_deadline_counts_from_the_later_of_dispatch_and_heartbeat() -> None:
    assert silence_deadline(1000, None, 100, GRACE) == 1130
    assert silence_deadline(1000, 1500, 100, GRACE) == 1630
    assert silence_deadline(1000, 900, 100, GRACE) == 1130  # an early heartbeat never shortens it


def test_nothing_happens_one_ms_before_the_deadline_and_requeue_at_it() -> None:
    assert reap_decision(inflight(), 1129, GRACE) is None
    decision = reap_decision(inflight(), 1130, GRACE)
    assert isinstance(decision, Requeue)
    assert "attempt 1 went silent" in decision.reason


def test_the_last_attempt_fails_with_a_reason() -> None:
    decision = reap_decision(inflight(attempts=2), 1130, GRACE)
    assert isinstance(decision, Fail)
    assert "attempts exhausted (3/3)" in decision.reason


def test_claimed_at_most_once_stalls_even_with_attempts_left() -> None:
    decision = reap_decision(inflight(guarantee=Guarantee.AT_MOST_ONCE, state=JobState.RUNNING), 1130, GRACE)
    assert isinstance(decision, Stall)
    assert "never re-run automatically" in decision.reason


def test_never_claimed_at_most_once_is_requeued_not_stalled() -> None:
    decision = reap_decision(inflight(guarantee=Guarantee.AT_MOST_ONCE), 1130, GRACE)
    assert isinstance(decision, Requeue)
    assert "never claimed" in decision.reason
    last = reap_decision(inflight(guarantee=Guarantee.AT_MOST_ONCE, attempts=2), 1130, GRACE)
    assert isinstance(last, Fail)


def test_an_unanswered_cancel_request_is_confirmed_after_grace() -> None:
    job = inflight(cancel_requested_at=1010, timeout_ms=10_000)
    assert reap_decision(job, 1039, GRACE) is None
    assert isinstance(reap_decision(job, 1040, GRACE), CancelConfirmed)


def test_a_silent_job_with_a_pending_cancel_is_cancelled_not_requeued_failed_or_stalled() -> None:
    # Silent at 1130, cancel requested at 1120: its grace would end at 1150, but the attempt is already over.
    for fields in ({}, {"attempts": 2}, {"guarantee": Guarantee.AT_MOST_ONCE, "state": JobState.RUNNING}):
        job = inflight(cancel_requested_at=1120, **fields)
        assert reap_decision(job, 1129, GRACE) is None
        decision = reap_decision(job, 1130, GRACE)
        assert isinstance(decision, CancelConfirmed), fields
        assert "cancel requested at 1120" in decision.reason
        assert "went silent" in decision.reason


# The reaper counts silence from the last heartbeat, and the middle attempt of three is retried.


def running(**fields: Any) -> InFlightJob:
    base: dict[str, Any] = {
        "id": "M#0:a",
        "state": JobState.RUNNING,
        "guarantee": Guarantee.AT_LEAST_ONCE,
        "attempts": 0,
        "max_attempts": 3,
        "timeout_ms": 100,
        "dispatched_at": 1_000,
    }
    base.update(fields)
    return InFlightJob(**base)


def test_a_heartbeat_keeps_a_job_alive_past_the_deadline_counted_from_dispatch() -> None:
    beating = running(heartbeat_at=5_000)
    assert reap_decision(beating, 1_130, GRACE) is None  # silent since dispatch would be over here
    assert reap_decision(beating, 5_129, GRACE) is None  # one ms before heartbeat + timeout + grace
    assert isinstance(reap_decision(beating, 5_130, GRACE), Requeue)


def test_without_a_heartbeat_the_same_job_is_reaped_at_dispatch_plus_timeout_and_grace() -> None:
    assert isinstance(reap_decision(running(), 1_130, GRACE), Requeue)


def test_the_middle_attempt_of_three_is_requeued_and_named_as_the_second() -> None:
    decision = reap_decision(running(attempts=1), 1_130, GRACE)
    assert isinstance(decision, Requeue)
    assert decision.reason.startswith("attempt 2 went silent")
    last = reap_decision(running(attempts=2), 1_130, GRACE)
    assert isinstance(last, Fail)
    assert "attempts exhausted (3/3)" in last.reason


def test_an_unanswered_cancel_says_when_it_was_requested_and_how_long_it_waited() -> None:
    decision = reap_decision(running(cancel_requested_at=1_050), 1_080, GRACE)
    assert decision == CancelConfirmed(reason="cancel requested at 1050; no report within 30 ms")


def test_a_silent_attempt_names_its_timeout_and_the_grace() -> None:
    assert reap_decision(running(), 1_130, GRACE) == Requeue(
        reason="attempt 1 went silent: no report within timeout_ms + reaper_grace_ms (100 + 30 ms) of its last "
        "sign of life"
    )
