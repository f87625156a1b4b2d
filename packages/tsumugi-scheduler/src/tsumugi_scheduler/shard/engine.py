"""``JobShardEngine``: the commands of one JobShard, each one transaction over the DO SQL API.

Decisions come from tsumugi_core; this layer reads rows by index, applies the decisions as compare-and-set
writes and appends the outbox rows in the same transaction (docs/design/job-shard.md).

Fencing: the live attempt of an active job is ``attempts + 1``; claims, heartbeats and reports naming any
other attempt are refused without a write.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import msgspec

from tsumugi_core.clock import Clock, IdSource, RandomSource
from tsumugi_core.id_digest import id_digest
from tsumugi_core.ids import InvalidJobIdError, format_job_id, parse_job_id
from tsumugi_core.liveness import attempt_hard_end
from tsumugi_core.options import (
    MAX_SAFE_INTEGER,
    CheckedJob,
    EnqueueItem,
    EnqueueValidationError,
    NewJob,
    admit_checked,
    check_admissible,
    later_instant,
    normalize_enqueue,
)
from tsumugi_core.policy import ShardSettings, validate_settings
from tsumugi_core.states import JobState
from tsumugi_core.throttle import full_key_buckets_before, key_bucket_sweep_at
from tsumugi_core.wake import next_wake_at, sweep_wake_at
from tsumugi_scheduler.shard.changes import NoticeWriter, completion, transition
from tsumugi_scheduler.shard.operations import CODE_SETTINGS_KEY, ShardOperations
from tsumugi_scheduler.shard.outcomes import encode_result, outcome_change
from tsumugi_scheduler.shard.port import JobChange, SqlLike
from tsumugi_scheduler.shard.records import (
    EnqueueResult,
    Failed,
    HeartbeatAnswer,
    NoticeConfig,
    Outcome,
    ReportAnswer,
    Succeeded,
    Suspended,
    TickResult,
)
from tsumugi_scheduler.shard.schema import JobRow, new_job_row
from tsumugi_scheduler.shard.sql_store import SqlShardStore
from tsumugi_scheduler.shard.step_commands import StepCommands
from tsumugi_scheduler.shard.step_store import StepStore
from tsumugi_scheduler.shard.tick import MAX_MAINTENANCE_PER_TICK, TickRunner

__all__ = ["ID_KEY", "NOTICE_DIGEST_BYTES", "PROJECTION_HOLD_MS", "JobShardEngine"]

_INFLIGHT = (JobState.QUEUED, JobState.RUNNING)

ID_KEY: Final = "id_key"
"""The setting holding the shard's secret part of its notice job ids (ADR-0177); never sent anywhere."""
NOTICE_DIGEST_BYTES: Final = 6
"""Bytes of the digest ending a notice job's local id (12 hex characters)."""
PROJECTION_HOLD_MS: Final = 250
"""How long the job changes a tick made (mostly SCHEDULED -> QUEUED) wait before they alone wake the shard.

The projection runs at the start of a tick, so a tick's own changes go out with the next one: a job that
finishes before then is projected once, COMPLETED, instead of QUEUED and then COMPLETED. Any other change
(a report, an enqueue) still wakes the shard at once, and with it the held changes are projected too.
"""


class JobShardEngine(StepCommands, ShardOperations):
    """The commands of one shard ``<binding>#<shard>``; all synchronous, each one transaction.

    The job lifecycle lives here; settings, operator commands, reads and feeds come from ``ShardOperations``.
    """

    def __init__(
        self,
        sql: SqlLike,
        *,
        binding: str,
        shard: int,
        clock: Clock,
        ids: IdSource,
        rand: RandomSource,
        notices: NoticeConfig | None = None,
    ) -> None:
        """Open the shard: create the schema if needed and load the stored settings."""
        self.binding, self.shard = binding, shard
        self._clock, self._ids, self._rand = clock, ids, rand
        self._store = SqlShardStore(sql)
        self._steps = StepStore(sql)
        self._notices = NoticeWriter(notices or NoticeConfig(), binding)
        self._ticker = TickRunner(self._store, binding, self._notices)
        self._stored = self._store.settings()
        self._settings = self._effective()
        self._dispatch_pending = True  # unknown after a restart: look once
        self._upgrade_legacy_pins()
        self._looked_at = -1
        """When dispatch last read the ready jobs: a job eligible since then has not been seen yet."""
        self._held: tuple[int, int, int] | None = None
        """The last tick's own job changes (seq after, seq up to) and when their hold ends."""

    # enqueue --------------------------------------------------------------------------------------------

    def _check_binding(self, binding: str) -> None:
        if binding != self.binding:
            raise EnqueueValidationError("binding", f"must be {self.binding} on this shard, got {binding!r}")

    def _check_shard(self, job_id: str | None) -> None:
        if job_id is None:
            return
        try:
            parsed = parse_job_id(job_id)
        except InvalidJobIdError as exc:
            raise EnqueueValidationError("id", f"is not a job id: {exc}") from None
        if parsed.binding != self.binding:
            raise EnqueueValidationError("id", f"must belong to binding {self.binding}: {job_id}")
        if parsed.shard != self.shard:
            raise EnqueueValidationError("id", f"must belong to shard {self.shard}: {job_id}")

    def _normalize(self, item: EnqueueItem, now: int) -> NewJob:
        self._check_binding(item.binding)
        job = normalize_enqueue(item, now)
        self._check_shard(job.id)
        return job

    def _admit(self, job: CheckedJob, now: int) -> NewJob:
        self._check_binding(job.binding)
        self._check_shard(job.id)
        check_admissible(job)
        return admit_checked(job, now)

    def enqueue_many(
        self, items: Sequence[EnqueueItem], settings: ShardSettings | None = None
    ) -> list[EnqueueResult]:
        """Store new jobs; explicit ids and live unique_keys return the existing id (``created=False``).

        Raises:
            EnqueueValidationError: any item is invalid; nothing is stored.
            PolicyValidationError: ``settings`` are invalid.
        """
        now = self._clock.now_ms()
        return self._store_new([self._normalize(item, now) for item in items], now, settings)

    def enqueue_checked(
        self,
        checked: Sequence[CheckedJob],
        settings: ShardSettings | None = None,
        steps_from: Mapping[str, str] | None = None,
    ) -> list[EnqueueResult]:
        """`enqueue_many` of jobs the scheduler's service has checked (`check_enqueue`): their options are not
        checked again, only that they belong to this shard (ADR-0172).

        ``steps_from`` maps a new job's id to the job whose steps it takes (a resumed run node's, ADR-0176):
        each job this call creates takes them in the same transaction, so its first attempt finds them and a
        refused enqueue leaves none behind (ADR-0184).

        Raises:
            EnqueueValidationError: a job of another binding or shard; nothing is stored.
            PolicyValidationError: ``settings`` are invalid.
        """
        now = self._clock.now_ms()
        return self._store_new([self._admit(job, now) for job in checked], now, settings, steps_from)

    def _store_new(
        self,
        jobs: list[NewJob],
        now: int,
        settings: ShardSettings | None,
        steps_from: Mapping[str, str] | None = None,
    ) -> list[EnqueueResult]:
        if settings is not None:
            validate_settings(settings)
        code = None if settings is None else msgspec.json.encode(settings).decode()

        def run() -> list[EnqueueResult]:
            if code is not None:
                self._save(CODE_SETTINGS_KEY, code)
            results: list[EnqueueResult] = []
            # Given ids are looked up together (a flow's starts give every id); a repeat is absorbed.
            taken = self._store.existing([job.id for job in jobs if job.id is not None])
            plain: list[JobRow] = []  # rows that need no check: stored together, in order (ADR-0153)
            for job in jobs:
                if job.id in taken:
                    results.append(EnqueueResult(id=job.id, created=False))
                    continue
                job_id = job.id or format_job_id(self.binding, self.shard, self._ids.new_local_id())
                row = new_job_row(job, job_id, self._store.next_seq())
                if job.id is not None:
                    taken.add(job.id)  # a repeat later in the batch is absorbed
                if job.unique_key is None and job.concurrency_key is None:
                    plain.append(row)
                    results.append(EnqueueResult(id=job_id, created=True))
                    continue
                if plain:
                    self._store.insert_new(plain)
                    plain = []
                # Capped like every computed instant: unique_for_ms may be up to MAX_SAFE_INTEGER.
                until = later_instant(now, job.unique_for_ms) if job.unique_key is not None else None
                result = self._store.admit(row, until, now, pinned=False)
                if not result.created and job.id is not None:
                    taken.discard(job.id)
                results.append(result)
            if plain:
                self._store.insert_new(plain)
            if steps_from:
                self._pass_steps_on(results, steps_from)
            return results

        results = self._store.atomically(run)
        self._dispatch_pending = True
        return results

    def _pass_steps_on(self, results: list[EnqueueResult], steps_from: Mapping[str, str]) -> None:
        """Each job just created that has a source in ``steps_from`` takes its steps, in the enqueue's
        transaction (a resumed run node's new job, ADR-0184); a job that existed already takes none."""
        for result in results:
            source = steps_from.get(result.id) if result.created else None
            if source is not None:
                self._take_steps(result.id, source)

    # attempt-fenced commands ----------------------------------------------------------------------------

    def _live(self, job_id: str, attempt: int) -> JobRow | None:
        job = self._store.job(job_id)
        if job is None or job.state not in _INFLIGHT or attempt != job.attempts + 1:
            return None
        return job

    def claim(self, job_id: str, attempt: int) -> bool:
        """At-most-once start: QUEUED -> RUNNING once, for the live attempt only.

        The claim is the attempt's start: silence counts from it, and no later attempt may start before
        the consumer invocation that claimed can no longer run (``run_after``, ADR-0051).
        """

        def run() -> bool:
            job = self._live(job_id, attempt)
            if job is None or job.state != JobState.QUEUED or job.cancel_requested_at is not None:
                return False
            now = self._clock.now_ms()
            values = {
                "heartbeat_at": now,
                "silence_at": now + job.timeout_ms,
                "run_after": attempt_hard_end(now),
            }
            return self._store.write(transition(job, JobState.RUNNING, now, self._notices, values))

        return self._store.atomically(run)

    def start_many(self, attempts: Sequence[tuple[str, int]]) -> list[bool]:
        """Mark started attempts RUNNING in one statement (ADR-0052); one answer per attempt, in order.

        Only the live attempt of a QUEUED job moves: a mark arriving after its report, a duplicate or a
        stale attempt changes nothing. The marks' feed changes are held like a tick's (`PROJECTION_HOLD_MS`)
        so a job that finishes meanwhile is projected once.
        """
        now = self._clock.now_ms()
        before = self._store.last_seq()
        moved = set(self._store.atomically(lambda: self._store.start(attempts, now)))
        if moved:
            self._hold_marks(before, self._store.last_seq(), now)
        return [(job_id, attempt) in moved for job_id, attempt in attempts]

    def _hold_marks(self, before: int, last: int, now: int) -> None:
        # Held only when nothing else is waiting to be projected between the held range and the marks (then
        # the wake is now anyway, and the marks go with it).
        held = self._held
        if held is not None and held[1] == before:
            self._held = (held[0], last, max(held[2], now + PROJECTION_HOLD_MS))
        elif held is None or self._projected_seq() >= before:
            self._held = (before, last, now + PROJECTION_HOLD_MS)

    def report_batch(self, apply: Callable[[], None]) -> None:
        """Run ``apply`` (`report` calls, each its own nested transaction) in one transaction, so the notice and
        run-event rows of the whole batch are written together (`SqlShardStore.atomically`)."""
        self._store.atomically(apply)

    def report_many(self, reports: Sequence[tuple[str, int, Outcome]]) -> list[ReportAnswer | Exception]:
        """`report` each, in order; successes in a row complete together in one statement (ADR-0153).

        Each answer is what `report` would answer (or the exception it would raise). A success of a job already
        in the pending group first sends the group, so every job changes once a statement, in report order.
        """
        answers: list[ReportAnswer | Exception | None] = [None] * len(reports)
        group: list[tuple[int, str, int, str | None, list[Any] | None]] = []
        grouped: set[str] = set()

        def send() -> None:
            try:
                done = self._store.atomically(lambda: self._complete_group(group))
            except Exception:  # the group rolled back: each report alone, as it would have been
                done = None
            for position, job_id, attempt, _, _ in group:
                if done is None:
                    answers[position] = self._report_alone(job_id, attempt, reports[position][2])
                elif job_id in done:
                    answers[position] = ReportAnswer(accepted=True, state=JobState.COMPLETED)
                else:
                    answers[position] = self._refused_report(job_id)
            self._dispatch_pending = self._dispatch_pending or bool(done)
            group.clear()
            grouped.clear()

        for position, (job_id, attempt, outcome) in enumerate(reports):
            plain = _plain_success(attempt, outcome)
            if plain is not None:
                if job_id in grouped:
                    send()
                group.append((position, job_id, attempt, plain[0], plain[1]))
                grouped.add(job_id)
                continue
            if group:
                send()
            answers[position] = self._report_alone(job_id, attempt, outcome)
        if group:
            send()
        return [answer for answer in answers if answer is not None]

    def _complete_group(
        self, group: Sequence[tuple[int, str, int, str | None, list[Any] | None]]
    ) -> dict[str, Any]:
        now = self._clock.now_ms()
        spawns = {job_id: spawned for _, job_id, _, _, spawned in group}
        return self._store.complete_many(
            [(job_id, attempt, stored) for _, job_id, attempt, stored, _ in group],
            now,
            lambda job: completion(job, now, self._notices, spawns[job.id]),
        )

    def _report_alone(self, job_id: str, attempt: int, outcome: Outcome) -> ReportAnswer | Exception:
        try:
            return self.report(job_id, attempt, outcome)
        except Exception as exc:  # that report's own transaction rolled back; the others stand
            return exc

    def report(self, job_id: str, attempt: int, outcome: Outcome) -> ReportAnswer:
        """Record the outcome of the live attempt; late, duplicate or foreign reports are ignored."""

        def run() -> ReportAnswer:
            plain = _plain_success(attempt, outcome)
            if plain is not None:
                return self._complete(job_id, attempt, plain[0], plain[1])
            job = self._live(job_id, attempt)
            if job is None:
                return self._refused_report(job_id)
            now = self._clock.now_ms()
            told = self._suspension(job_id, outcome, now) if isinstance(outcome, Suspended) else outcome
            change = outcome_change(job, told, now, self._rand.random(), self._notices)
            self._store.write(change)
            if isinstance(outcome, Failed | Suspended) and change.values["state"] != JobState.STALLED:
                self._steps.clear_started(job_id, attempt)  # it ended knowingly: no step runs on (ADR-0144)
            return ReportAnswer(accepted=True, state=JobState(change.values["state"]))

        answer = self._store.atomically(run)
        self._dispatch_pending = self._dispatch_pending or answer.accepted
        return answer

    def _complete(
        self, job_id: str, attempt: int, stored: str | None, spawns: list[Any] | None = None
    ) -> ReportAnswer:
        # The hot path: one compare-and-set statement; the row is read only when the report is refused.
        now = self._clock.now_ms()
        done = self._store.complete(
            job_id, attempt, now, stored, lambda job: completion(job, now, self._notices, spawns)
        )
        if done is None:
            return self._refused_report(job_id)
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

    # tick -----------------------------------------------------------------------------------------------

    def tick(self) -> TickResult:
        """Expire, reap, confirm cancels, dispatch, sweep; send ``dispatches`` after it returns."""
        now = self._clock.now_ms()

        def run() -> tuple[TickResult, tuple[int, int, int] | None]:
            first = self._store.last_seq()
            settings = self._settings
            self._wake_sleepers(now)
            requeued = self._ticker.maintain(now, settings)
            dispatches = self._ticker.dispatch(now, settings, requeued, self._stored)
            self._save_blocked()
            retention = settings.retention
            cursor = self._projected_seq()
            self._store.housekeep(
                now, retention.sweep_after_ms, retention.failed_retention_ms, cursor, MAX_MAINTENANCE_PER_TICK
            )
            self._store.drop_full_buckets(
                full_key_buckets_before(settings.policy.per_key_rate, now), MAX_MAINTENANCE_PER_TICK
            )
            self._dispatch_pending = bool(requeued) or self._ticker.saturated
            last = self._store.last_seq()
            held = (first, last, now + PROJECTION_HOLD_MS) if last > first else None
            return TickResult(dispatches=dispatches, wake_at=self._wake_at(now, now, held)), held

        result, held = self._store.atomically(run)
        self._looked_at = now  # only once committed: a rolled-back dispatch saw nothing
        self._held = held
        return result

    def notice_local_id(self, kind: str, seq: int) -> str:
        """The local id of the notice job for outbox row ``seq``: the same on every re-send (the target absorbs
        a repeat), ending in a digest of the shard's id key so no caller can enqueue it first (ADR-0177)."""
        key = self._stored.get(ID_KEY)
        if key is None:
            drawn = key = self._ids.new_local_id()
            self._store.atomically(lambda: self._save(ID_KEY, drawn))
        readable = f"{kind}-{self.binding}-{self.shard}-{seq}"
        return f"{readable}-{id_digest((key, readable), NOTICE_DIGEST_BYTES)}"

    def _save_blocked(self) -> None:
        blocked = msgspec.json.encode(self._ticker.last_blocked).decode()
        if self._stored.get("last_blocked") != blocked:
            self._store.save_setting("last_blocked", blocked)
            self._stored["last_blocked"] = blocked

    def _wake_at(self, now: int, looked_at: int, held: tuple[int, int, int] | None) -> int | None:
        # Delayed jobs count from the last dispatch look, not from now: one that became eligible since then
        # (a command arriving after its run_after, before any tick) still wakes the shard at once.
        after, upto, until = held or (0, 0, 0)
        view = self._store.overview(looked_at, self._projected_seq(), (after, upto))
        policy, retention = self._settings.policy, self._settings.retention
        ready_now = view.oldest_ready_at is not None and view.oldest_ready_at <= now
        return next_wake_at(
            now if view.outbox_pending or (ready_now and self._dispatch_pending) else None,
            until if view.held_pending else None,
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
            key_bucket_sweep_at(view.oldest_key_bucket_at, policy.per_key_rate, now),
            view.next_sleeper_at,
            view.next_hold_end_at,
        )

    def next_wake_at(self) -> int | None:
        """The single earliest instant the shard must tick; None when nothing is due."""
        return self._wake_at(self._clock.now_ms(), self._looked_at, self._held)


def _plain_success(attempt: int, outcome: Outcome) -> tuple[str | None, list[Any] | None] | None:
    """``(stored result, spawns)`` when ``outcome`` takes the one-statement completion, else None.

    Only an attempt number SQLite can bind takes it (any other is not live anyway), and only a result stored
    whole (nothing lost, so no run must fail it).
    """
    bindable = isinstance(attempt, int) and 0 < attempt <= MAX_SAFE_INTEGER  # pyright: ignore[reportUnnecessaryIsInstance]
    if not (isinstance(outcome, Succeeded) and bindable):
        return None
    stored = encode_result(outcome.result)
    if stored is None and outcome.result is not None:
        return None
    return stored, outcome.spawns
