"""What happens to a dispatched job that went silent, or whose cancellation was not answered.

Rules (docs/reference/original.md §1.7, docs/reference/additions.md A6, original gap 12):

- a cancel request older than ``grace_ms`` ends the job CANCELLED;
- silence is measured from the later of dispatch and the last sign of life (the attempt's start, then each
  heartbeat: the shard keeps both in ``heartbeat_at``, ADR-0052): the attempt is over at
  ``silence_deadline(...)``; then
- a job with a pending cancel request ends CANCELLED (a silent attempt is a failed one, and a failure after
  the request is never retried: ADR-0017), whatever its guarantee or attempts left;
- an at-most-once job that was claimed (RUNNING) may have run, so it is STALLED for a human to decide;
- a job that may be re-run (at-least-once, or at-most-once never claimed) is requeued while attempts remain,
  and FAILED once the silent attempt used the last one.

A silent attempt counts as a finished attempt, so ``max_attempts`` bounds the tries whether attempts fail
loudly or silently, and the next dispatch carries a new attempt number (fencing).
"""

from __future__ import annotations

import msgspec

from tsumugi_core.options import Guarantee
from tsumugi_core.states import JobState

__all__ = [
    "CancelConfirmed",
    "Fail",
    "InFlightJob",
    "ReapDecision",
    "Requeue",
    "Stall",
    "reap_decision",
    "silence_deadline",
]


class InFlightJob(msgspec.Struct, frozen=True, kw_only=True):
    """A dispatched job as the reaper sees it."""

    id: str
    state: JobState
    guarantee: Guarantee
    attempts: int
    max_attempts: int
    timeout_ms: int
    dispatched_at: int
    heartbeat_at: int | None = None
    cancel_requested_at: int | None = None


class Requeue(msgspec.Struct, frozen=True, kw_only=True, tag="requeue"):
    """Back to SCHEDULED, eligible now, with the silent attempt counted."""

    reason: str


class Fail(msgspec.Struct, frozen=True, kw_only=True, tag="fail"):
    """To FAILED: the silent attempt was the last one."""

    reason: str


class Stall(msgspec.Struct, frozen=True, kw_only=True, tag="stall"):
    """To STALLED: an at-most-once job that started and went silent."""

    reason: str


class CancelConfirmed(msgspec.Struct, frozen=True, kw_only=True, tag="cancel"):
    """To CANCELLED: the cancel request was not answered within the grace period."""

    reason: str


ReapDecision = Requeue | Fail | Stall | CancelConfirmed


def silence_deadline(dispatched_at: int, heartbeat_at: int | None, timeout_ms: int, grace_ms: int) -> int:
    """The instant a dispatched attempt counts as silent; an early heartbeat never shortens it."""
    last_sign = dispatched_at if heartbeat_at is None else max(dispatched_at, heartbeat_at)
    return last_sign + timeout_ms + grace_ms


def _silent_reason(job: InFlightJob, grace_ms: int) -> str:
    return (
        f"attempt {job.attempts + 1} went silent: no report within timeout_ms + reaper_grace_ms "
        f"({job.timeout_ms} + {grace_ms} ms) of its last sign of life"
    )


def reap_decision(job: InFlightJob, now: int, grace_ms: int) -> ReapDecision | None:
    """Decide the fate of one in-flight job at ``now``; None while it may still report."""
    if job.cancel_requested_at is not None and now >= job.cancel_requested_at + grace_ms:
        return CancelConfirmed(
            reason=f"cancel requested at {job.cancel_requested_at}; no report within {grace_ms} ms"
        )
    if now < silence_deadline(job.dispatched_at, job.heartbeat_at, job.timeout_ms, grace_ms):
        return None
    reason = _silent_reason(job, grace_ms)
    if job.cancel_requested_at is not None:
        return CancelConfirmed(reason=f"cancel requested at {job.cancel_requested_at}; {reason}")
    if job.guarantee == Guarantee.AT_MOST_ONCE and job.state == JobState.RUNNING:
        return Stall(reason=f"{reason}; an at-most-once job that started is never re-run automatically")
    if job.guarantee == Guarantee.AT_MOST_ONCE:
        reason = f"{reason}; it was never claimed, so it never started"
    if job.attempts + 1 >= job.max_attempts:
        return Fail(reason=f"{reason}; attempts exhausted ({job.attempts + 1}/{job.max_attempts})")
    return Requeue(reason=reason)
