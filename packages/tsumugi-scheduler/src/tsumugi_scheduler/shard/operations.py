"""The operator side of ``JobShardEngine``: settings, cancel / retry / reschedule, bulk mutations, reads, feeds.

A mixin rather than a collaborator so ``JobShardEngine`` keeps every command as its own method
(docs/design/job-shard.md §2) without delegating wrappers; the engine module keeps the job lifecycle (enqueue,
the attempt-fenced commands, tick and wake). The attributes below are the shared state the engine's
constructor sets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from tsumugi_core.clock import Clock
from tsumugi_core.options import MAX_SAFE_INTEGER, Guarantee, check_instant, check_priority
from tsumugi_core.policy import PolicyPatch, ShardSettings, apply_patch, effective_settings, validate_settings
from tsumugi_core.states import RETRYABLE_STATES, JobState
from tsumugi_scheduler.shard.changes import NoticeWriter, transition
from tsumugi_scheduler.shard.feeds import notice_records, run_event_records, snapshots
from tsumugi_scheduler.shard.port import JobChange
from tsumugi_scheduler.shard.records import (
    AttemptRecord,
    BulkAnswer,
    BulkFailure,
    CancelAnswer,
    JobRecord,
    JobSnapshot,
    MutationAnswer,
    NoticeRecord,
    RunEventRecord,
    ShardDiagnostics,
)
from tsumugi_scheduler.shard.sql_store import PROJECTED_SEQ_KEY, SqlShardStore
from tsumugi_scheduler.shard.tick import TickRunner

__all__ = ["CODE_SETTINGS_KEY", "LEGACY_PINS_KEY", "PINNED_KEY", "ShardOperations"]

CODE_SETTINGS_KEY, PINNED_KEY = "code_settings", "pinned_settings"
LEGACY_PINS_KEY = "pins"
"""Field-by-field pins (a PolicyPatch) stored before ADR-0058; turned into pinned settings when a shard opens."""
_INFLIGHT = (JobState.QUEUED, JobState.RUNNING)
_settings_decoder = msgspec.json.Decoder(ShardSettings)
_patch_decoder = msgspec.json.Decoder(PolicyPatch)


def _encode_settings(settings: ShardSettings) -> str:
    return msgspec.json.encode(settings).decode()


def _storable(value: int, low: int = -MAX_SAFE_INTEGER) -> int:
    """A feed position or limit clamped into SQLite's (and JavaScript's) safe range: acking or reading past the
    end means "everything", and a bare OverflowError from the driver would abort the command."""
    return max(low, min(MAX_SAFE_INTEGER, value))


class ShardOperations:
    """Settings, operator commands, reads and feeds of one shard (mixed into ``JobShardEngine``)."""

    _clock: Clock
    _store: SqlShardStore
    _notices: NoticeWriter
    _ticker: TickRunner
    _stored: dict[str, str]
    """Stored settings by key, mirrored in memory (JSON texts)."""
    _settings: ShardSettings
    _dispatch_pending: bool
    """Something changed since the last tick that may let a ready job go now."""

    # settings -------------------------------------------------------------------------------------------

    def _effective(self) -> ShardSettings:
        stored = self._stored
        code = _settings_decoder.decode(stored[CODE_SETTINGS_KEY]) if CODE_SETTINGS_KEY in stored else None
        pinned = _settings_decoder.decode(stored[PINNED_KEY]) if PINNED_KEY in stored else None
        return effective_settings(code, pinned)

    def _upgrade_legacy_pins(self) -> None:
        """A shard pinned field by field before ADR-0058 keeps what was in force then, now pinned whole."""
        if LEGACY_PINS_KEY not in self._stored:
            return
        legacy = _patch_decoder.decode(self._stored[LEGACY_PINS_KEY])

        def run() -> None:
            if PINNED_KEY not in self._stored:
                self._save(PINNED_KEY, _encode_settings(apply_patch(self._settings, legacy)))
            self._save(LEGACY_PINS_KEY, None)

        self._store.atomically(run)

    def _save(self, key: str, value: str | None) -> None:
        if self._stored.get(key) == value:
            return  # identical settings cost no write
        self._store.save_setting(key, value)
        if value is None:
            self._stored.pop(key, None)
        else:
            self._stored[key] = value
        if key in (CODE_SETTINGS_KEY, PINNED_KEY):
            self._settings = self._effective()
            self._dispatch_pending = True

    def _save_code(self, code: ShardSettings | None) -> None:
        if code is not None:
            self._save(CODE_SETTINGS_KEY, _encode_settings(code))

    @property
    def settings(self) -> ShardSettings:
        """The effective settings: the pinned ones after a runtime change, else the code's."""
        return self._settings

    @property
    def pinned(self) -> bool:
        """True from a runtime change until reset: the code's settings do not apply (ADR-0058)."""
        return PINNED_KEY in self._stored

    def configure(self, patch: PolicyPatch, code: ShardSettings | None = None) -> ShardSettings:
        """Pin the settings in force now, with ``patch``'s fields changed, until `reset_policy` (ADR-0058).

        Args:
            patch: The fields to change.
            code: The code's settings as the caller knows them (the scheduler's definition); stored first, so
                a shard that was not pinned yet pins what the current deploy says. None keeps the stored ones.

        Raises:
            PolicyValidationError: a field breaks its rule.
        """
        validate_settings(patch)
        if code is not None:
            validate_settings(code)

        def run() -> None:
            self._save_code(code)
            self._save(PINNED_KEY, _encode_settings(apply_patch(self._settings, patch)))

        self._store.atomically(run)
        return self._settings

    def reset_policy(self, code: ShardSettings | None = None) -> ShardSettings:
        """Drop the pin: back to the code's settings (``code`` when given, else the stored ones).

        Raises:
            PolicyValidationError: ``code`` is invalid.
        """
        if code is not None:
            validate_settings(code)

        def run() -> None:
            self._save_code(code)
            self._save(PINNED_KEY, None)

        self._store.atomically(run)
        return self._settings

    # operator commands ----------------------------------------------------------------------------------

    def _cancel(self, job_id: str, now: int) -> CancelAnswer:
        job = self._store.job(job_id)
        if job is None:
            return CancelAnswer(ok=False, reason="gone")
        never_started = job.state == JobState.QUEUED and job.guarantee == Guarantee.AT_MOST_ONCE
        if job.state in (JobState.SCHEDULED, JobState.SLEEPING) or never_started:  # nothing runs (ADR-0145)
            self._store.write(
                transition(
                    job, JobState.CANCELLED, now, self._notices, {"reason": "cancelled", "silence_at": None}
                )
            )
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
        if job.run_id is not None and job.node_id is not None:
            # A node's job belongs to its run: running it again behind the run's back would finish a node the run
            # has already ended; the run's resume runs the node again (ADR-0116).
            return MutationAnswer(
                ok=False,
                reason="invalid-state",
                error=(f"the job of node {job.node_id} of run {job.run_id}: resume the run to run it again"),
            )
        # A STALLED at-most-once job's last attempt may still run until its invocation's hard end, kept in
        # run_after since its claim: no attempt starts before it (ADR-0051).
        start = (
            max(now, job.run_after)
            if job.state == JobState.STALLED and job.guarantee == Guarantee.AT_MOST_ONCE
            else now
        )
        values = {
            "run_after": start,
            "eligible_at": start,
            "dispatched_at": None,
            "silence_at": None,
            "cancel_requested_at": None,
            "reason": None,
        }
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
            EnqueueValidationError: ``run_after`` is not an instant enqueue accepts (an integer in
                0..MAX_SAFE_INTEGER) or ``priority`` is not a priority enqueue accepts.
        """
        check_instant("run_after", run_after)
        if priority is not None:
            check_priority(priority)

        def run() -> MutationAnswer:
            job = self._store.job(job_id)
            if job is None:
                return MutationAnswer(ok=False, reason="gone")
            if job.state != JobState.SCHEDULED or job.cancel_requested_at is not None:
                return MutationAnswer(ok=False, reason="invalid-state")
            now = self._clock.now_ms()
            values: dict[str, Any] = {
                "run_after": run_after,
                # A job not ready yet becomes eligible now at the earliest, whatever past instant it is given: a
                # past run_after must not backdate its aging or put it ahead of its key's waiting jobs (ADR-0178).
                "eligible_at": max(job.created_at, run_after, min(job.eligible_at, now)),
                "updated_at": now,
            }
            if priority is not None:
                values["priority"] = priority
            self._store.write(JobChange(job_id=job.id, expect_state=job.state, values=values))
            return MutationAnswer(ok=True)

        answer = self._store.atomically(run)
        self._dispatch_pending = self._dispatch_pending or answer.ok
        return answer

    def mutate_many(
        self,
        action: Literal["retry", "cancel"],
        job_ids: Sequence[str],
        expect_states: frozenset[str] | None = None,
    ) -> BulkAnswer:
        """Retry or cancel many jobs in one transaction; refusals never fail the call.

        With ``expect_states`` (a bulk filter's), a job the shard holds in another state is ``invalid-state``
        and left alone: the read model that chose it may be behind (a job it still shows SCHEDULED may be
        running here, and a cancel would ask it to stop).
        """

        def run() -> BulkAnswer:
            now = self._clock.now_ms()
            ok: list[str] = []
            failed: list[BulkFailure] = []
            for job_id in job_ids:
                if expect_states is not None:
                    held = self._store.job(job_id)
                    if held is not None and held.state.value not in expect_states:
                        failed.append(BulkFailure(id=job_id, reason="invalid-state"))
                        continue
                answer = self._cancel(job_id, now) if action == "cancel" else self._retry(job_id, now)
                if answer.ok:
                    ok.append(job_id)
                else:
                    failed.append(BulkFailure(id=job_id, reason=answer.reason or "invalid-state"))
            return BulkAnswer(ok=ok, failed=failed)

        answer = self._store.atomically(run)
        self._dispatch_pending = self._dispatch_pending or bool(answer.ok)
        return answer

    # reads and feeds ------------------------------------------------------------------------------------

    def _projected_seq(self) -> int:
        return int(self._stored.get(PROJECTED_SEQ_KEY, "0"))

    def get(self, job_id: str) -> JobRecord | None:
        """One job, or None when it is not (or no longer) in the shard."""
        return self._store.job(job_id)

    def attempts_of(self, job_id: str) -> list[AttemptRecord]:
        """Recorded attempts of one job, newest first (first-try successes record none)."""
        return self._store.attempts([job_id])

    def changes(self, limit: int = 200, up_to_seq: int | None = None) -> list[JobSnapshot]:
        """The projection feed: the latest snapshot of every job changed since the last ack, by seq.

        With ``up_to_seq``, only jobs whose latest change is at or before it (see `feed_head`).
        """
        bound = None if up_to_seq is None else _storable(up_to_seq)
        return snapshots(self._store, self._projected_seq(), _storable(limit, 0), bound)

    def feed_head(self) -> int:
        """The position of the latest change so far: `changes` up to it leaves out every later change."""
        return self._store.last_seq()

    def ack_changes(self, up_to_seq: int) -> None:
        """Mark the projection done up to ``up_to_seq`` (finished jobs may then be swept).

        The cursor never moves back, nor past the last change made: acking a seq not handed out yet would
        hide the changes that later take it.
        """
        value = str(max(min(_storable(up_to_seq), self._store.last_seq()), self._projected_seq()))
        self._store.atomically(lambda: self._save(PROJECTED_SEQ_KEY, value))

    def notices(self, limit: int = 200) -> list[NoticeRecord]:
        """Pending notice outbox rows, oldest first."""
        return notice_records(self._store.outbox("notice", 0, _storable(limit, 0)))

    def ack_notices(self, up_to_seq: int) -> None:
        """Drop notice rows up to ``up_to_seq`` once their jobs were enqueued."""
        self._store.atomically(lambda: self._store.ack("notice", _storable(up_to_seq)))

    def run_events(self, limit: int = 200) -> list[RunEventRecord]:
        """Pending job -> run events, oldest first."""
        return run_event_records(self._store.outbox("run_event", 0, _storable(limit, 0)))

    def ack_run_events(self, up_to_seq: int) -> None:
        """Drop run events up to ``up_to_seq`` once delivered."""
        self._store.atomically(lambda: self._store.ack("run_event", _storable(up_to_seq)))

    def diagnostics(self) -> ShardDiagnostics:
        """Counts by state, outbox backlog and what held dispatch back last."""
        counts = self._store.counts()
        return ShardDiagnostics(
            counts={s.value: counts.get(s.value, 0) for s in JobState},
            changes_pending=counts["feed:job"],
            notices_pending=counts["feed:notice"],
            run_events_pending=counts["feed:run_event"],
            blocked=self._ticker.last_blocked,
        )
