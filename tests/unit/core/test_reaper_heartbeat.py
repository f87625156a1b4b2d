"""The reaper counts silence from the last heartbeat, and the middle attempt of three is retried (issue 17)."""

from __future__ import annotations

from typing import Any

from tsumugi_core.options import Guarantee
from tsumugi_core.reaper import CancelConfirmed, Fail, InFlightJob, Requeue, reap_decision
from tsumugi_core.states import JobState

GRACE = 30


def inflight(**fields: Any) -> InFlightJob:
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
    beating = inflight(heartbeat_at=5_000)
    assert reap_decision(beating, 1_130, GRACE) is None  # silent since dispatch would be over here
    assert reap_decision(beating, 5_129, GRACE) is None  # one ms before heartbeat + timeout + grace
    assert isinstance(reap_decision(beating, 5_130, GRACE), Requeue)


def test_without_a_heartbeat_the_same_job_is_reaped_at_dispatch_plus_timeout_and_grace() -> None:
    assert isinstance(reap_decision(inflight(), 1_130, GRACE), Requeue)


def test_the_middle_attempt_of_three_is_requeued_and_named_as_the_second() -> None:
    decision = reap_decision(inflight(attempts=1), 1_130, GRACE)
    assert isinstance(decision, Requeue)
    assert decision.reason.startswith("attempt 2 went silent")
    last = reap_decision(inflight(attempts=2), 1_130, GRACE)
    assert isinstance(last, Fail)
    assert "attempts exhausted (3/3)" in last.reason


def test_an_unanswered_cancel_says_when_it_was_requested_and_how_long_it_waited() -> None:
    decision = reap_decision(inflight(cancel_requested_at=1_050), 1_080, GRACE)
    assert decision == CancelConfirmed(reason="cancel requested at 1050; no report within 30 ms")


def test_a_silent_attempt_names_its_timeout_and_the_grace() -> None:
    assert reap_decision(inflight(), 1_130, GRACE) == Requeue(
        reason="attempt 1 went silent: no report within timeout_ms + reaper_grace_ms (100 + 30 ms) of its last "
        "sign of life"
    )
