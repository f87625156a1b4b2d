"""The JobShard's SQLite schema and the row Structs it matches, column for column.

One DDL source; ``tests/unit/shard/test_schema.py`` checks every table against its Struct with
``pragma_table_info`` so the two cannot drift.

Indexes exist so that no command reads the backlog (docs/design/job-shard.md §3):

- ``job_ready`` (partial, SCHEDULED key heads): level heads for dispatch, ``(priority, eligible_at, created_at, id)``;
- ``job_eligible`` (partial, SCHEDULED key heads): the oldest ready job and the next delayed job due;
- ``job_key`` (partial, SCHEDULED with a concurrency_key): each (key, priority) group in dispatch order, to find
  its head and the jobs after it (ADR-0054);
- ``job_state``: in-flight counts, sweeps and their due times, diagnostics;
- ``job_silence`` (partial, QUEUED/RUNNING): reaper and cancel-confirmation deadlines;
- ``job_expiry`` (partial, active with an expiry and no cancel request): expiry;
- ``job_seq``: the projection feed;
- ``job_sleep`` (partial, SLEEPING): the sleepers due to wake, by ``run_after`` (ADR-0145);
- ``key_hold_until``: the live key holds (counted per key by dispatch), the next to end, the ended to drop.

``step`` holds a job's step results (ADR-0144), deleted with the job. ``key_hold`` holds the concurrency_key
slots of attempts the shard stopped waiting for while they may still run (ADR-0185); a row outlives its job.
"""

from __future__ import annotations

import functools
from typing import Final

import msgspec

from tsumugi_core.options import Backoff, Guarantee, NewJob
from tsumugi_core.states import JobState

__all__ = [
    "DDL",
    "TABLE_ROWS",
    "AttemptRow",
    "JobRow",
    "KeyBucketRow",
    "KeyHoldRow",
    "NoticeRow",
    "RunEventRow",
    "SettingRow",
    "StepRow",
    "UniqueKeyRow",
    "new_job_row",
]


class JobRow(msgspec.Struct, frozen=True):
    """One job, the source of truth for its state.

    Built by position in `new_job_row` and from the job feed's value arrays (`SqlShardStore.job_feed`, in field
    order by construction): msgspec matches keyword arguments one name at a time, which for these 30 fields
    costs about twenty times a positional call, on every job stored. Elsewhere, name them.
    """

    id: str
    binding: str
    state: JobState
    priority: int
    attempts: int
    """Finished attempts; the live attempt of an active job is ``attempts + 1``."""
    max_attempts: int
    guarantee: str
    timeout_ms: int
    backoff: str
    """JSON of the Backoff (camelCase, tagged by ``kind``)."""
    concurrency_key: str | None
    unique_key: str | None
    run_after: int
    """No attempt starts before it; a claimed at-most-once job keeps its attempt's hard end here (ADR-0051)."""
    eligible_at: int
    """``max(created_at, run_after)``: when the job became (or becomes) ready; aging counts from here."""
    expires_at: int | None
    created_at: int
    updated_at: int
    dispatched_at: int | None
    heartbeat_at: int | None
    """The live attempt's last sign of life: its start (RUNNING mark or claim), then each heartbeat."""
    silence_at: int | None
    """While dispatched: last sign of life + timeout_ms, or the cancel request instant if earlier."""
    progress: float | None
    cancel_requested_at: int | None
    payload: str
    result: str | None
    error: str | None
    """Text of the last failed attempt (truncated)."""
    reason: str | None
    """Why the shard ended or requeued the job on its own (reaper, expiry, cancel)."""
    traceparent: str | None
    run_id: str | None
    node_id: str | None
    seq: int
    """Position in the projection feed; bumped by every change."""
    key_head: int = 1
    """1 when a SCHEDULED job is in the dispatch indexes: it has no concurrency_key, or it is the first of its
    (concurrency_key, priority) group in dispatch order (ADR-0054); meaningless in other states."""


class AttemptRow(msgspec.Struct, frozen=True, kw_only=True):
    """A finished attempt worth recording: every failure and every non-first success."""

    job_id: str
    attempt: int
    state: JobState
    started_at: int | None
    finished_at: int
    error: str | None


class StepRow(msgspec.Struct, frozen=True, kw_only=True):
    """One step of a job (ADR-0144): ``done`` with its result, or ``started`` (an at-most-once step whose
    outcome is not known yet)."""

    job_id: str
    name: str
    state: str
    """``done`` or ``started``."""
    result: str | None
    """The step's result as JSON text (``null`` included) once done."""
    attempt: int
    """The attempt (invocation number) that started or finished it."""
    started_at: int
    finished_at: int | None


class UniqueKeyRow(msgspec.Struct, frozen=True, kw_only=True):
    """A unique_key reservation."""

    key: str
    job_id: str
    expires_at: int


class SettingRow(msgspec.Struct, frozen=True, kw_only=True):
    """One stored setting (JSON text)."""

    key: str
    value: str


class KeyBucketRow(msgspec.Struct, frozen=True, kw_only=True):
    """A per-key token bucket (absent = full)."""

    key: str
    tokens: float
    refilled_at: int


class KeyHoldRow(msgspec.Struct, frozen=True, kw_only=True):
    """A concurrency_key slot still held by an attempt that left QUEUED/RUNNING but may still run (ADR-0185)."""

    job_id: str
    attempt: int
    """The attempt that may still run (each attempt holds its own slot)."""
    key: str
    until: int
    """When nothing of the attempt can run any more (`tsumugi_core.liveness.running_until`)."""


class NoticeRow(msgspec.Struct, frozen=True, kw_only=True):
    """An outbox row: a FailureNotice or SettledNotice to enqueue on ``target`` binding."""

    seq: int
    target: str
    body: str


class RunEventRow(msgspec.Struct, frozen=True, kw_only=True):
    """An outbox row: a job's terminal state for its run."""

    seq: int
    run_id: str
    body: str


_GUARANTEE_TEXT: Final = {g: g.value for g in Guarantee}


@functools.lru_cache(maxsize=64)
def _backoff_json(backoff: Backoff) -> str:
    return msgspec.json.encode(backoff).decode()  # a shard's jobs share a few backoffs: encode each once


def new_job_row(job: NewJob, job_id: str, seq: int) -> JobRow:
    """The row of a job just admitted: SCHEDULED, no attempt yet, ready from ``max(created_at, run_after)``."""
    created_at = job.created_at
    # Positional, in JobRow's field order (one call per stored job; tests/unit/shard/test_new_job_row.py
    # holds it equal to the same row built by name).
    return JobRow(
        job_id,  # id
        job.binding,  # binding
        JobState.SCHEDULED,  # state
        job.priority,  # priority
        0,  # attempts
        job.max_attempts,  # max_attempts
        _GUARANTEE_TEXT[job.guarantee],  # guarantee
        job.timeout_ms,  # timeout_ms
        _backoff_json(job.backoff),  # backoff
        job.concurrency_key,  # concurrency_key
        job.unique_key,  # unique_key
        job.run_after,  # run_after
        max(created_at, job.run_after),  # eligible_at
        job.expires_at,  # expires_at
        created_at,  # created_at
        created_at,  # updated_at
        None,  # dispatched_at
        None,  # heartbeat_at
        None,  # silence_at
        None,  # progress
        None,  # cancel_requested_at
        job.payload_json,  # payload
        None,  # result
        None,  # error
        None,  # reason
        job.traceparent,  # traceparent
        job.run_id,  # run_id
        job.node_id,  # node_id
        seq,  # seq
    )


TABLE_ROWS: Final[dict[str, type[msgspec.Struct]]] = {
    "job": JobRow,
    "attempt": AttemptRow,
    "unique_key": UniqueKeyRow,
    "setting": SettingRow,
    "key_bucket": KeyBucketRow,
    "key_hold": KeyHoldRow,
    "notice": NoticeRow,
    "run_event": RunEventRow,
    "step": StepRow,
}

DDL: Final[tuple[str, ...]] = (
    """CREATE TABLE IF NOT EXISTS job (
        id TEXT PRIMARY KEY NOT NULL, binding TEXT NOT NULL, state TEXT NOT NULL, priority INTEGER NOT NULL,
        attempts INTEGER NOT NULL, max_attempts INTEGER NOT NULL, guarantee TEXT NOT NULL,
        timeout_ms INTEGER NOT NULL, backoff TEXT NOT NULL, concurrency_key TEXT, unique_key TEXT,
        run_after INTEGER NOT NULL, eligible_at INTEGER NOT NULL, expires_at INTEGER, created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL, dispatched_at INTEGER, heartbeat_at INTEGER, silence_at INTEGER,
        progress REAL, cancel_requested_at INTEGER, payload TEXT NOT NULL, result TEXT, error TEXT, reason TEXT,
        traceparent TEXT, run_id TEXT, node_id TEXT, seq INTEGER NOT NULL, key_head INTEGER NOT NULL DEFAULT 1)""",
    """CREATE INDEX IF NOT EXISTS job_ready ON job(priority, eligible_at, created_at, id)
        WHERE state = 'SCHEDULED' AND key_head = 1""",
    "CREATE INDEX IF NOT EXISTS job_eligible ON job(eligible_at) WHERE state = 'SCHEDULED' AND key_head = 1",
    """CREATE INDEX IF NOT EXISTS job_key ON job(concurrency_key, priority, eligible_at, created_at, id)
        WHERE state = 'SCHEDULED' AND concurrency_key IS NOT NULL""",
    "CREATE INDEX IF NOT EXISTS job_state ON job(state, updated_at)",
    "CREATE INDEX IF NOT EXISTS job_silence ON job(silence_at) WHERE state IN ('QUEUED', 'RUNNING')",
    """CREATE INDEX IF NOT EXISTS job_expiry ON job(expires_at) WHERE expires_at IS NOT NULL
        AND cancel_requested_at IS NULL AND state IN ('SCHEDULED', 'QUEUED', 'RUNNING')""",
    "CREATE INDEX IF NOT EXISTS job_seq ON job(seq)",
    "CREATE INDEX IF NOT EXISTS job_sleep ON job(run_after) WHERE state = 'SLEEPING'",
    """CREATE TABLE IF NOT EXISTS attempt (
        job_id TEXT NOT NULL, attempt INTEGER NOT NULL, state TEXT NOT NULL, started_at INTEGER,
        finished_at INTEGER NOT NULL, error TEXT, PRIMARY KEY (job_id, attempt)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS unique_key (
        key TEXT PRIMARY KEY NOT NULL, job_id TEXT NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS unique_key_expiry ON unique_key(expires_at)",
    "CREATE TABLE IF NOT EXISTS setting (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID",
    """CREATE TABLE IF NOT EXISTS key_bucket (
        key TEXT PRIMARY KEY NOT NULL, tokens REAL NOT NULL, refilled_at INTEGER NOT NULL) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS key_bucket_refilled ON key_bucket(refilled_at)",
    """CREATE TABLE IF NOT EXISTS key_hold (
        job_id TEXT NOT NULL, attempt INTEGER NOT NULL, key TEXT NOT NULL, until INTEGER NOT NULL,
        PRIMARY KEY (job_id, attempt)) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS key_hold_until ON key_hold(until)",
    """CREATE TABLE IF NOT EXISTS notice (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, target TEXT NOT NULL, body TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS run_event (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, body TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS step (
        job_id TEXT NOT NULL, name TEXT NOT NULL, state TEXT NOT NULL, result TEXT, attempt INTEGER NOT NULL,
        started_at INTEGER NOT NULL, finished_at INTEGER, PRIMARY KEY (job_id, name)) WITHOUT ROWID""",
)
"""Idempotent DDL of the current version (``SCHEMA_VERSION``), run in order on every engine construction after
``schema_migration.migrate`` has brought an older shard's tables to it."""
