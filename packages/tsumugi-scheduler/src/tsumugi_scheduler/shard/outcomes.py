"""What a report does to the live attempt: the change for a success or a failure.

Rules: docs/reference/original.md §1.3 step 5, ADR-0035 (result cap), docs/reference/additions.md A6 (a
failure after a cancel request ends CANCELLED), A8 (``retryable=False`` fails now; ``retry_at`` picks the next
try, still bounded by max_attempts) and ADR-0051 (an at-most-once attempt whose outcome is unknown, a timeout
above all, ends STALLED: it may still run or may have done its work, so no other attempt follows it
automatically).
"""

from __future__ import annotations

from typing import Any

import msgspec

from tsumugi_core.backoff import next_retry
from tsumugi_core.errors import RESULT_NOT_STORABLE_ERROR, truncate_error
from tsumugi_core.liveness import outcome_unknown
from tsumugi_core.options import MAX_RESULT_CHARS, MAX_SAFE_INTEGER, Backoff, Guarantee
from tsumugi_core.states import JobState
from tsumugi_scheduler.shard.changes import NoticeWriter, key_hold, transition
from tsumugi_scheduler.shard.port import JobChange
from tsumugi_scheduler.shard.records import Failed, Outcome, Suspended
from tsumugi_scheduler.shard.schema import AttemptRow, JobRow
from tsumugi_scheduler.shard.step_commands import suspend_change

__all__ = ["encode_result", "outcome_change"]

_backoff_decoder = msgspec.json.Decoder(Backoff)


def encode_result(result: Any) -> str | None:
    """The result as stored JSON text; None when it is None, not serialisable or over MAX_RESULT_CHARS."""
    if result is None:
        return None
    try:
        text = msgspec.json.encode(result).decode()
    except (TypeError, ValueError, OverflowError):
        return None
    return text if len(text) <= MAX_RESULT_CHARS else None


def _attempt(job: JobRow, number: int, state: JobState, now: int, error: str | None) -> AttemptRow:
    return AttemptRow(
        job_id=job.id, attempt=number, state=state, started_at=job.dispatched_at, finished_at=now, error=error
    )


def _failure(job: JobRow, failed: Failed, now: int, rand: float, notices: NoticeWriter) -> JobChange:
    change = _failure_change(job, failed, now, rand, notices)
    # The consumer stopped waiting (timeout, lost call): the performer may still run, so the job's key keeps the
    # slot until it cannot, whatever the job's state now (ADR-0185).
    hold = key_hold(job, now, abandoned=True) if failed.unknown else None
    return change if hold is None else msgspec.structs.replace(change, key_hold=hold)


def _failure_change(job: JobRow, failed: Failed, now: int, rand: float, notices: NoticeWriter) -> JobChange:
    attempts = job.attempts + 1
    error = truncate_error(failed.error)
    base: dict[str, Any] = {"attempts": attempts, "error": error, "silence_at": None}
    if job.cancel_requested_at is not None:
        # The attempt stopped because it was asked to: it is logged CANCELLED, as the job ends, with the
        # error it raised kept (the reaper's confirmed cancel logs the same state; ADR-0074).
        base["reason"] = "cancelled: the attempt failed after the cancel request"
        log = _attempt(job, attempts, JobState.CANCELLED, now, error)
        return transition(job, JobState.CANCELLED, now, notices, base, log)
    log = _attempt(job, attempts, JobState.FAILED, now, error)
    if job.guarantee == Guarantee.AT_MOST_ONCE and outcome_unknown(
        flagged=failed.unknown, now=now, silence_at=job.silence_at
    ):
        base["reason"] = (
            f"attempt {attempts} of an at-most-once job ended without a known outcome (timed out or lost); "
            "it may still be running or may have done its work, so it is never re-run automatically"
        )
        return transition(job, JobState.STALLED, now, notices, base, log)
    if not failed.retryable:
        base["reason"] = "the performer marked the failure as not retryable"
        return transition(job, JobState.FAILED, now, notices, base, log)
    decision = next_retry(attempts, job.max_attempts, _backoff_decoder.decode(job.backoff), now, rand)
    if decision.exhausted or decision.retry_at is None:
        base["reason"] = f"attempts exhausted ({attempts}/{job.max_attempts})"
        return transition(job, JobState.FAILED, now, notices, base, log)
    # A performer's retry_at in the past means now; far in the future it is capped like any computed instant.
    retry_at = (
        decision.retry_at if failed.retry_at is None else min(MAX_SAFE_INTEGER, max(now, failed.retry_at))
    )
    base.update(run_after=retry_at, eligible_at=max(job.created_at, retry_at), dispatched_at=None)
    return transition(job, JobState.SCHEDULED, now, notices, base, log)


def outcome_change(job: JobRow, outcome: Outcome, now: int, rand: float, notices: NoticeWriter) -> JobChange:
    """The change a fenced (already accepted) report makes."""
    if isinstance(outcome, Failed):
        return _failure(job, outcome, now, rand, notices)
    if isinstance(outcome, Suspended):
        return suspend_change(job, outcome, now, notices)
    stored = encode_result(outcome.result)
    if stored is None and outcome.result is not None and job.run_id is not None:
        # A run's successors read this result, so losing it must fail the attempt (ADR-0035 of the original).
        return _failure(job, Failed(error=RESULT_NOT_STORABLE_ERROR), now, rand, notices)
    attempts = job.attempts + 1
    # A first-try success is derivable from the job row; only later successes are logged.
    log = _attempt(job, attempts, JobState.COMPLETED, now, None) if attempts > 1 else None
    values: dict[str, Any] = {"attempts": attempts, "result": stored, "silence_at": None}
    return transition(job, JobState.COMPLETED, now, notices, values, log)
