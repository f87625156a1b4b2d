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
