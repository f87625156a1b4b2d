"""``JobShardEngine``: the commands of one JobShard, each one transaction over the DO SQL API.

Decisions come from tsumugi_core; this layer reads rows by index, applies the decisions as compare-and-set
writes and appends the outbox rows in the same transaction (docs/design/job-shard.md).

Fencing: the live attempt of an active job is ``attempts + 1``; claims, heartbeats and reports naming any
other attempt are refused without a write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from tsumugi_core.clock import Clock, IdSource, RandomSource
from tsumugi_core.ids import format_job_id, parse_job_id
from tsumugi_core.options import EnqueueItem, EnqueueValidationError, Guarantee, NewJob, normalize_enqueue
from tsumugi_core.policy import PolicyPatch, ShardSettings, combine_patches, merge_settings, validate_settings
from tsumugi_core.states import RETRYABLE_STATES, JobState
from tsumugi_core.wake import next_wake_at, sweep_wake_at
from tsumugi_scheduler.shard.changes import NoticeWriter, completion, transition
from tsumugi_scheduler.shard.feeds import notice_records, run_event_records, snapshots
from tsumugi_scheduler.shard.outcomes import encode_result, outcome_change
from tsumugi_scheduler.shard.port import JobChange, SqlLike
from tsumugi_scheduler.shard.records import (
    AttemptRecord,
    BulkAnswer,
    BulkFailure,
    CancelAnswer,
    EnqueueResult,
    HeartbeatAnswer,
    JobRecord,
    JobSnapshot,
    MutationAnswer,
    NoticeConfig,
    NoticeRecord,
    Outcome,
    ReportAnswer,
    RunEventRecord,
    ShardDiagnostics,
    Succeeded,
    TickResult,
)  # fmt: skip
from tsumugi_scheduler.shard.schema import JobRow, new_job_row
from tsumugi_scheduler.shard.sql_store import PROJECTED_SEQ_KEY, SqlShardStore
from tsumugi_scheduler.shard.tick import MAX_MAINTENANCE_PER_TICK, TickRunner

__all__ = ["JobShardEngine"]

_CODE_KEY, _PINS_KEY = "code_settings", "pins"
_INFLIGHT = (JobState.QUEUED, JobState.RUNNING)
_settings_decoder = msgspec.json.Decoder(ShardSettings)
_patch_decoder = msgspec.json.Decoder(PolicyPatch)


class JobShardEngine:
    """The commands of one shard ``<binding>#<shard>``; all synchronous, each one transaction."""

    def __init__(self, sql: SqlLike, *, binding: str, shard: int, clock: Clock, ids: IdSource,
                 rand: RandomSource, notices: NoticeConfig | None = None) -> None:  # fmt: skip
        """Open the shard: create the schema if needed and load the stored settings."""
        self.binding, self.shard = binding, shard
        self._clock, self._ids, self._rand = clock, ids, rand
        self._store = SqlShardStore(sql)
        self._notices = NoticeWriter(notices or NoticeConfig(), binding)
        self._ticker = TickRunner(self._store, binding, self._notices)
        self._stored = self._store.settings()
        self._settings = self._effective()
        self._dispatch_pending = True  # unknown after a restart: look once

    # settings -------------------------------------------------------------------------------------------

    def _effective(self) -> ShardSettings:
        code = _settings_decoder.decode(self._stored[_CODE_KEY]) if _CODE_KEY in self._stored else None
        pins = _patch_decoder.decode(self._stored[_PINS_KEY]) if _PINS_KEY in self._stored else None
        return merge_settings(code, pins)

    def _save(self, key: str, value: str | None) -> None:
        if self._stored.get(key) == value:
            return  # identical settings cost no write
        self._store.save_setting(key, value)
        if value is None:
            self._stored.pop(key, None)
        else:
            self._stored[key] = value
        if key in (_CODE_KEY, _PINS_KEY):
            self._settings = self._effective()
            self._dispatch_pending = True

    @property
    def settings(self) -> ShardSettings:
        """The effective settings (code's, with runtime pins over them)."""
        return self._settings

    def configure(self, patch: PolicyPatch) -> ShardSettings:
        """Pin ``patch``'s fields over the code's settings (earlier pins of other fields stay).

        Raises:
            PolicyValidationError: a field breaks its rule.
        """
        validate_settings(patch)
        old = _patch_decoder.decode(self._stored[_PINS_KEY]) if _PINS_KEY in self._stored else PolicyPatch()
        pins = msgspec.json.encode(combine_patches(old, patch)).decode()
        self._store.atomically(lambda: self._save(_PINS_KEY, pins))
        return self._settings

    def reset_policy(self) -> ShardSettings:
        """Drop every runtime pin: back to the code's settings."""
        self._store.atomically(lambda: self._save(_PINS_KEY, None))
        return self._settings

    # enqueue --------------------------------------------------------------------------------------------

    def _normalize(self, item: EnqueueItem, now: int) -> NewJob:
        if item.binding != self.binding:
            raise EnqueueValidationError(
                "binding", f"must be {self.binding} on this shard, got {item.binding!r}"
            )
        job = normalize_enqueue(item, now)
        if job.id is not None and parse_job_id(job.id).shard != self.shard:
            raise EnqueueValidationError("id", f"must belong to shard {self.shard}: {job.id}")
        return job

    def enqueue_many(
        self, items: Sequence[EnqueueItem], settings: ShardSettings | None = None
    ) -> list[EnqueueResult]:
        """Store new jobs; explicit ids and live unique_keys return the existing id (``created=False``).

        Raises:
            EnqueueValidationError: any item is invalid; nothing is stored.
            PolicyValidationError: ``settings`` are invalid.
        """
        now = self._clock.now_ms()
        jobs = [self._normalize(item, now) for item in items]
        if settings is not None:
            validate_settings(settings)
        code = None if settings is None else msgspec.json.encode(settings).decode()

        def run() -> list[EnqueueResult]:
            if code is not None:
                self._save(_CODE_KEY, code)
            results: list[EnqueueResult] = []
            for job in jobs:
                job_id = job.id or format_job_id(self.binding, self.shard, self._ids.new_local_id())
                until = now + job.unique_for_ms if job.unique_key is not None else None
                row = new_job_row(job, job_id, self._store.next_seq())
                results.append(self._store.admit(row, until, now, pinned=job.id is not None))
            return results

        results = self._store.atomically(run)
        self._dispatch_pending = True
        return results

    # attempt-fenced commands ----------------------------------------------------------------------------

    def _live(self, job_id: str, attempt: int) -> JobRow | None:
        job = self._store.job(job_id)
        if job is None or job.state not in _INFLIGHT or attempt != job.attempts + 1:
            return None
        return job

    def claim(self, job_id: str, attempt: int) -> bool:
        """At-most-once start: QUEUED -> RUNNING once, for the live attempt only."""

        def run() -> bool:
            job = self._live(job_id, attempt)
            if job is None or job.state != JobState.QUEUED or job.cancel_requested_at is not None:
                return False
            now = self._clock.now_ms()
            values = {"silence_at": now + job.timeout_ms}  # a claim is a sign of life
            return self._store.write(transition(job, JobState.RUNNING, now, self._notices, values))

        return self._store.atomically(run)

    def report(self, job_id: str, attempt: int, outcome: Outcome) -> ReportAnswer:
        """Record the outcome of the live attempt; late, duplicate or foreign reports are ignored."""

        def run() -> ReportAnswer:
            if isinstance(outcome, Succeeded) and isinstance(attempt, int):  # pyright: ignore[reportUnnecessaryIsInstance]
                stored = encode_result(outcome.result)
                if stored is not None or outcome.result is None:  # nothing lost, so no run must fail it
                    return self._complete(job_id, attempt, stored)
            job = self._live(job_id, attempt)
            if job is None:
                return self._refused_report(job_id)
            change = outcome_change(job, outcome, self._clock.now_ms(), self._rand.random(), self._notices)
            self._store.write(change)
            return ReportAnswer(accepted=True, state=JobState(change.values["state"]))

        answer = self._store.atomically(run)
        self._dispatch_pending = self._dispatch_pending or answer.accepted
        return answer

    def _complete(self, job_id: str, attempt: int, stored: str | None) -> ReportAnswer:
        # The hot path: one compare-and-set statement; the row is read only when the report is refused.
        now = self._clock.now_ms()
        done = self._store.complete(job_id, attempt, now, stored)
        if done is None:
            return self._refused_report(job_id)
        self._store.record(completion(done, now, self._notices))
        return ReportAnswer(accepted=True, state=JobState.COMPLETED)

    def _refused_report(self, job_id: str) -> ReportAnswer:
        current = self._store.job(job_id)
        return ReportAnswer(accepted=False, state=None if current is None else current.state)

    def heartbeat(self, job_id: str, attempt: int, progress: float | None = None) -> HeartbeatAnswer:
        """Extend the live attempt's silence deadline and record progress (clamped to [0, 1])."""

        def run() -> HeartbeatAnswer:
            job = self._live(job_id, attempt)
            if job is None:
                return HeartbeatAnswer(accepted=False, cancel_requested=False)
            now = self._clock.now_ms()
            silence = now + job.timeout_ms
            if job.cancel_requested_at is not None:
                silence = min(silence, job.cancel_requested_at)  # a heartbeat never postpones a cancel
            values: dict[str, Any] = {"heartbeat_at": now, "silence_at": silence}
            if isinstance(progress, int | float) and progress == progress:  # NaN means "no progress"
                values["progress"] = min(1.0, max(0.0, float(progress)))
            self._store.write(JobChange(job_id=job.id, expect_state=job.state, values=values))
            return HeartbeatAnswer(accepted=True, cancel_requested=job.cancel_requested_at is not None)

        return self._store.atomically(run)

    # operator commands ----------------------------------------------------------------------------------

    def _cancel(self, job_id: str, now: int) -> CancelAnswer:
        job = self._store.job(job_id)
        if job is None:
            return CancelAnswer(ok=False, reason="gone")
        never_started = job.state == JobState.QUEUED and job.guarantee == Guarantee.AT_MOST_ONCE
        if job.state == JobState.SCHEDULED or never_started:
            self._store.write(transition(job, JobState.CANCELLED, now, self._notices,
                                         {"reason": "cancelled", "silence_at": None}))  # fmt: skip
            return CancelAnswer(ok=True)
        if job.state not in _INFLIGHT:
            return CancelAnswer(ok=False, reason="invalid-state")
        if job.cancel_requested_at is None:
            silence = now if job.silence_at is None else min(job.silence_at, now)
            values = {"cancel_requested_at": now, "silence_at": silence}
            self._store.write(JobChange(job_id=job.id, expect_state=job.state, values=values))
        return CancelAnswer(ok=True, requested=True)

    def cancel(self, job_id: str) -> CancelAnswer:
        """Cancel now (SCHEDULED, or at-most-once not started), or ask a dispatched job to stop (A6)."""
        answer = self._store.atomically(lambda: self._cancel(job_id, self._clock.now_ms()))
        self._dispatch_pending = self._dispatch_pending or answer.ok
        return answer

    def _retry(self, job_id: str, now: int) -> MutationAnswer:
        job = self._store.job(job_id)
        retention = self._settings.retention.failed_retention_ms
        if job is None or (job.state in RETRYABLE_STATES and job.updated_at + retention <= now):
            return MutationAnswer(ok=False, reason="gone")
        if job.state not in RETRYABLE_STATES:
            return MutationAnswer(ok=False, reason="invalid-state")
        values = {"run_after": now, "eligible_at": now, "dispatched_at": None, "silence_at": None,
                  "cancel_requested_at": None, "reason": None}  # fmt: skip
        self._store.write(transition(job, JobState.SCHEDULED, now, self._notices, values))
        return MutationAnswer(ok=True)

    def retry(self, job_id: str) -> MutationAnswer:
        """FAILED/STALLED -> SCHEDULED now (``gone`` once past failed retention or swept)."""
        answer = self._store.atomically(lambda: self._retry(job_id, self._clock.now_ms()))
        self._dispatch_pending = self._dispatch_pending or answer.ok
        return answer

    def reschedule(self, job_id: str, run_after: int, priority: int | None = None) -> MutationAnswer:
        """Move a SCHEDULED job's run_after (and priority); id and unique reservation stay.

        Raises:
            EnqueueValidationError: ``run_after`` or ``priority`` is not an integer.
        """
        for field, value in (("run_after", run_after), ("priority", priority)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise EnqueueValidationError(field, f"must be an integer, got {value!r}")

        def run() -> MutationAnswer:
            job = self._store.job(job_id)
            if job is None:
                return MutationAnswer(ok=False, reason="gone")
            if job.state != JobState.SCHEDULED or job.cancel_requested_at is not None:
                return MutationAnswer(ok=False, reason="invalid-state")
            values: dict[str, Any] = {"run_after": run_after, "eligible_at": max(job.created_at, run_after),
                                      "updated_at": self._clock.now_ms()}  # fmt: skip
            if priority is not None:
                values["priority"] = priority
            self._store.write(JobChange(job_id=job.id, expect_state=job.state, values=values))
            return MutationAnswer(ok=True)

        answer = self._store.atomically(run)
        self._dispatch_pending = self._dispatch_pending or answer.ok
        return answer

    def mutate_many(self, action: Literal["retry", "cancel"], job_ids: Sequence[str]) -> BulkAnswer:
        """Retry or cancel many jobs in one transaction; refusals never fail the call."""

        def run() -> BulkAnswer:
            now = self._clock.now_ms()
            ok: list[str] = []
            failed: list[BulkFailure] = []
            for job_id in job_ids:
                answer = self._cancel(job_id, now) if action == "cancel" else self._retry(job_id, now)
                if answer.ok:
                    ok.append(job_id)
                else:
                    failed.append(BulkFailure(id=job_id, reason=answer.reason or "invalid-state"))
            return BulkAnswer(ok=ok, failed=failed)

        answer = self._store.atomically(run)
        self._dispatch_pending = self._dispatch_pending or bool(answer.ok)
        return answer

    # tick -----------------------------------------------------------------------------------------------

    def tick(self) -> TickResult:
        """Expire, reap, confirm cancels, dispatch, sweep; send ``dispatches`` after it returns."""
        now = self._clock.now_ms()

        def run() -> TickResult:
            settings = self._settings
            requeued = self._ticker.maintain(now, settings)
            dispatches = self._ticker.dispatch(now, settings, requeued, self._stored)
            self._save_blocked()
            retention = settings.retention
            cursor = int(self._stored.get(PROJECTED_SEQ_KEY, "0"))
            self._store.housekeep(now, retention.sweep_after_ms, retention.failed_retention_ms, cursor,
                                  MAX_MAINTENANCE_PER_TICK)  # fmt: skip
            self._dispatch_pending = bool(requeued) or self._ticker.saturated
            return TickResult(dispatches=dispatches, wake_at=self._wake_at(now))

        return self._store.atomically(run)

    def _save_blocked(self) -> None:
        blocked = msgspec.json.encode(self._ticker.last_blocked).decode()
        if self._stored.get("last_blocked") != blocked:
            self._store.save_setting("last_blocked", blocked)
            self._stored["last_blocked"] = blocked

    def _wake_at(self, now: int) -> int | None:
        view = self._store.overview(now, int(self._stored.get(PROJECTED_SEQ_KEY, "0")))
        policy, retention = self._settings.policy, self._settings.retention
        ready_now = view.oldest_ready_at is not None and view.oldest_ready_at <= now
        return next_wake_at(
            now if view.outbox_pending or (ready_now and self._dispatch_pending) else None,
            view.next_delayed_at,
            self._ticker.token_ready_at if ready_now else None,
            None if view.next_silence_at is None else view.next_silence_at + policy.reaper_grace_ms,
            view.next_expiry_at,
            sweep_wake_at(
                view.oldest_settled_at,
                retention.sweep_after_ms,
                view.oldest_failed_at,
                retention.failed_retention_ms,
                now,
            ),
            None if view.next_unique_expiry_at is None else max(view.next_unique_expiry_at, now + 1000),
        )

    def next_wake_at(self) -> int | None:
        """The single earliest instant the shard must tick; None when nothing is due."""
        now = self._clock.now_ms()
        return self._wake_at(now)

    # reads and feeds ------------------------------------------------------------------------------------

    def get(self, job_id: str) -> JobRecord | None:
        """One job, or None when it is not (or no longer) in the shard."""
        return self._store.job(job_id)

    def attempts_of(self, job_id: str) -> list[AttemptRecord]:
        """Recorded attempts of one job, newest first (first-try successes record none)."""
        return self._store.attempts([job_id])

    def changes(self, limit: int = 200) -> list[JobSnapshot]:
        """The projection feed: the latest snapshot of every job changed since the last ack, by seq."""
        return snapshots(self._store, int(self._stored.get(PROJECTED_SEQ_KEY, "0")), limit)

    def ack_changes(self, up_to_seq: int) -> None:
        """Mark the projection done up to ``up_to_seq`` (finished jobs may then be swept)."""
        value = str(max(up_to_seq, int(self._stored.get(PROJECTED_SEQ_KEY, "0"))))
        self._store.atomically(lambda: self._save(PROJECTED_SEQ_KEY, value))

    def notices(self, limit: int = 200) -> list[NoticeRecord]:
        """Pending notice outbox rows, oldest first."""
        return notice_records(self._store.outbox("notice", 0, limit))

    def ack_notices(self, up_to_seq: int) -> None:
        """Drop notice rows up to ``up_to_seq`` once their jobs were enqueued."""
        self._store.atomically(lambda: self._store.ack("notice", up_to_seq))

    def run_events(self, limit: int = 200) -> list[RunEventRecord]:
        """Pending job -> run events, oldest first."""
        return run_event_records(self._store.outbox("run_event", 0, limit))

    def ack_run_events(self, up_to_seq: int) -> None:
        """Drop run events up to ``up_to_seq`` once delivered."""
        self._store.atomically(lambda: self._store.ack("run_event", up_to_seq))

    def diagnostics(self) -> ShardDiagnostics:
        """Counts by state, outbox backlog and what held dispatch back last."""
        counts = self._store.counts()
        return ShardDiagnostics(
            counts={s.value: counts.get(s.value, 0) for s in JobState},
            changes_pending=counts["feed:job"], notices_pending=counts["feed:notice"],
            run_events_pending=counts["feed:run_event"], blocked=self._ticker.last_blocked,
        )  # fmt: skip
