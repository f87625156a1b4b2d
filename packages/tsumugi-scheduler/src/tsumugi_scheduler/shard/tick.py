"""One tick of a shard: expiry, reaper, cancel confirmation, dispatch, sweep; bounded per call.

Delayed jobs need no promotion write: ``eligible_at`` is indexed, so a delayed job is ready the moment
``eligible_at <= now`` and the dispatch read finds it through the same level heads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from tsumugi_core.options import Guarantee
from tsumugi_core.policy import ShardSettings
from tsumugi_core.reaper import CancelConfirmed, Fail, InFlightJob, Requeue, Stall, reap_decision
from tsumugi_core.states import JobState
from tsumugi_core.throttle import Blocked, Candidate, DispatchPlan, TokenBucket, plan_dispatch
from tsumugi_scheduler.shard.changes import NoticeWriter, key_hold, transition
from tsumugi_scheduler.shard.port import JobChange, ShardStore
from tsumugi_scheduler.shard.records import DispatchMessage
from tsumugi_scheduler.shard.schema import AttemptRow, JobRow

__all__ = ["BLOCKED_SAMPLE_PER_TICK", "MAX_DISPATCH_PER_TICK", "MAX_MAINTENANCE_PER_TICK", "TickRunner"]

MAX_DISPATCH_PER_TICK: Final = 500
MAX_MAINTENANCE_PER_TICK: Final = 200
BLOCKED_SAMPLE_PER_TICK: Final = 200
"""Ready jobs past the dispatch read counted (not read) per tick, so ``Blocked`` counts some of what waits
behind the batch (diagnostics, ADR-0179)."""

_INFLIGHT: Final = (JobState.QUEUED, JobState.RUNNING)
_bucket_decoder = msgspec.json.Decoder(TokenBucket)
_decode = msgspec.json.decode


def expiry_change(job: JobRow, now: int, notices: NoticeWriter) -> JobChange:
    """Expiry (A5): a job not yet started ends at once, a dispatched one is asked to stop."""
    reason = f"expired at {job.expires_at}"
    never_started = job.state == JobState.QUEUED and job.guarantee == Guarantee.AT_MOST_ONCE
    if job.state == JobState.SCHEDULED or never_started:
        return transition(job, JobState.CANCELLED, now, notices, {"reason": reason, "silence_at": None})
    silence = now if job.silence_at is None else min(job.silence_at, now)
    return JobChange(
        job_id=job.id,
        expect_state=job.state,
        values={"cancel_requested_at": now, "silence_at": silence, "reason": reason},
    )


def reap_change(job: JobRow, now: int, grace_ms: int, notices: NoticeWriter) -> JobChange | None:
    """The reaper's change for a dispatched job past its deadline, or None."""
    view = InFlightJob(
        id=job.id,
        state=job.state,
        guarantee=Guarantee(job.guarantee),
        attempts=job.attempts,
        max_attempts=job.max_attempts,
        timeout_ms=job.timeout_ms,
        dispatched_at=job.dispatched_at or job.updated_at,
        heartbeat_at=job.heartbeat_at,
        cancel_requested_at=job.cancel_requested_at,
    )
    decision = reap_decision(view, now, grace_ms)
    if decision is None:
        return None
    attempts = job.attempts + 1  # the silent attempt is over: a late report from it is fenced off
    values: dict[str, Any] = {"attempts": attempts, "reason": decision.reason, "silence_at": None}
    state = {
        Requeue: JobState.SCHEDULED,
        Fail: JobState.FAILED,
        Stall: JobState.STALLED,
        CancelConfirmed: JobState.CANCELLED,
    }[type(decision)]
    log_state = JobState.FAILED if state == JobState.SCHEDULED else state
    log = AttemptRow(
        job_id=job.id,
        attempt=attempts,
        state=log_state,
        started_at=job.dispatched_at,
        finished_at=now,
        error=decision.reason,
    )
    if state == JobState.SCHEDULED:
        values.update(run_after=now, eligible_at=now, dispatched_at=None)
    if state in (JobState.FAILED, JobState.STALLED):
        values["error"] = decision.reason
    change = transition(job, state, now, notices, values, log)
    # Given up, not answered: the attempt may still run, and its key's slot stays taken until it cannot.
    hold = key_hold(job, now, abandoned=False)
    return change if hold is None else msgspec.structs.replace(change, key_hold=hold)


class TickRunner:
    """Runs the steps of one tick inside the engine's transaction."""

    def __init__(self, store: ShardStore, binding: str, notices: NoticeWriter) -> None:
        """Bind the runner to one shard's store."""
        self._store = store
        self._binding = binding
        self._notices = notices
        self.last_blocked = Blocked()
        self.token_ready_at: int | None = None
        self.saturated = False
        """True when the last dispatch hit the per-tick bound (more could go right away)."""

    def maintain(self, now: int, settings: ShardSettings) -> set[str]:
        """Expiry, reaper and cancel confirmation; returns ids requeued (not re-dispatched this tick)."""
        grace = settings.policy.reaper_grace_ms
        due = self._store.due(now, grace, MAX_MAINTENANCE_PER_TICK)
        silent = {job.id: job for job in due.silent}
        for job in due.expired:
            change = expiry_change(job, now, self._notices)
            if self._store.write(change) and job.id in silent:
                # The reaper decides on the row as expiry left it: ended, or with a pending cancel request.
                silent[job.id] = msgspec.structs.replace(silent[job.id], **change.values)
        requeued: set[str] = set()
        for job in silent.values():
            change = reap_change(job, now, grace, self._notices) if job.state in _INFLIGHT else None
            if (
                change is not None
                and self._store.write(change)
                and change.values["state"] == JobState.SCHEDULED
            ):
                requeued.add(change.job_id)
        return requeued

    def dispatch(
        self, now: int, settings: ShardSettings, skip: set[str], stored: dict[str, str]
    ) -> list[DispatchMessage]:
        """Choose and dispatch ready jobs (one compare-and-set statement for the batch); persist the buckets used."""
        policy = settings.policy
        want = min(MAX_DISPATCH_PER_TICK, max(1, policy.concurrency))
        # Jobs of keys without room are read but never count toward ``want`` (ADR-0054).
        window = self._store.ready_window(
            now,
            want,
            policy.aging_interval_ms,
            key_buckets=policy.per_key_rate is not None,
            per_key_concurrency=policy.per_key_concurrency,
            per_key_rate=policy.per_key_rate,
            skip=frozenset(skip),
        )
        ready = [
            r
            for r in window.rows
            if r["id"] not in skip and (r["expires_at"] is None or r["expires_at"] > now)
        ]
        candidates = msgspec.convert(ready, list[Candidate])  # one C call; the extra expires_at is ignored
        bucket = _bucket_decoder.decode(stored["bucket"]) if "bucket" in stored else None
        # The jobs waiting behind the read are counted, not read: only the diagnostics need them (ADR-0179).
        read = len(window.rows)
        unread = self._store.ready_count(now, read + BLOCKED_SAMPLE_PER_TICK) - read if read else 0
        plan = plan_dispatch(
            now,
            policy,
            candidates,
            window.in_flight,
            window.in_flight_by_key,
            bucket,
            window.key_buckets,
            max(0, unread),
        )
        chosen = plan.chosen[:MAX_DISPATCH_PER_TICK]
        self.saturated = len(plan.chosen) >= MAX_DISPATCH_PER_TICK
        self._record(plan)
        self._save_bucket(plan, stored, bool(chosen))
        moved = self._store.dispatch(chosen, now, plan.key_buckets)
        grace = policy.reaper_grace_ms
        return [self._message(moved[i], now, grace) for i in chosen if i in moved]

    def _record(self, plan: DispatchPlan) -> None:
        self.last_blocked = plan.blocked
        self.token_ready_at = plan.token_ready_at

    def _save_bucket(self, plan: DispatchPlan, stored: dict[str, str], used: bool) -> None:
        # The per-key buckets go with the dispatch statement (ShardStore.dispatch); this is the binding's.
        if plan.bucket is not None and used:
            text = msgspec.json.encode(plan.bucket).decode()
            stored["bucket"] = text
            self._store.save_setting("bucket", text)

    def _message(self, row: Mapping[str, Any], now: int, grace_ms: int) -> DispatchMessage:
        timeout = int(row["timeout_ms"])
        return DispatchMessage(
            job_id=str(row["id"]),
            binding=self._binding,
            attempt=int(row["attempts"]) + 1,
            max_attempts=int(row["max_attempts"]),
            payload=_decode(row["payload"]),
            timeout_ms=timeout,
            claim_required=row["guarantee"] == Guarantee.AT_MOST_ONCE,
            deadline_at=now + timeout + grace_ms,
            traceparent=row["traceparent"],
        )
