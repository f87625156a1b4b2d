"""Projection of the shard's job snapshots into the D1 ``job`` table (docs/reference/original.md §1.8).

One ``batch`` per call, so a projection applies whole or not at all: the snapshots' values go as one bound
JSON text of value arrays, unpacked by SQLite with ``json_each`` (one statement per `BATCH_BYTES`, not one per
snapshot with 26 bound values each: ADR-0127). Each upsert only overwrites
a row whose stored ``seq`` is lower than the snapshot's: stale or replayed snapshots change nothing, and
replaying a range that was already applied is a no-op. ``id``, ``created_at``, ``binding`` and
``guarantee`` never change once a job is projected.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import msgspec

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.ids import InvalidJobIdError
from tsumugi_scheduler.json_batches import BATCH_BYTES, json_arrays
from tsumugi_scheduler.readmodel.d1_port import D1Like, StatementT, result_changes
from tsumugi_scheduler.shard.records import AttemptRecord, JobSnapshot
from tsumugi_scheduler.wire import job_shard

__all__ = [
    "ATTEMPTS_LOG_LIMIT",
    "IMMUTABLE_COLUMNS",
    "PROJECTED_COLUMNS",
    "PROJECTION_BATCH_LIMIT",
    "AttemptLogEntry",
    "project",
    "snapshot_values",
]

PROJECTED_COLUMNS: Final[tuple[str, ...]] = (
    "id",
    "seq",
    "binding",
    "state",
    "priority",
    "attempts",
    "max_attempts",
    "concurrency_key",
    "unique_key",
    "guarantee",
    "created_at",
    "updated_at",
    "dispatched_at",
    "payload",
    "run_id",
    "node_id",
    "attempts_log",
    "result",
    "run_after",
    "progress",
    "traceparent",
    "expires_at",
    "cancel_requested_at",
    "last_error",
    "reason",
    "shard",
)
"""Every column of ``job`` the projection writes; a drift test checks it against the migrated table."""

IMMUTABLE_COLUMNS: Final[frozenset[str]] = frozenset({"id", "created_at", "binding", "guarantee"})
"""Columns an upsert never overwrites once the row exists."""

PROJECTION_BATCH_LIMIT: Final = 200
"""Most snapshots per call: each is one statement of the batch, and D1 caps queries per invocation."""

ATTEMPTS_LOG_LIMIT: Final = 20
"""Most attempt entries kept in ``attempts_log`` (newest first)."""


class AttemptLogEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One finished attempt as stored in ``attempts_log`` and shown in the job detail."""

    attempt: int
    state: str
    started_at: int | None
    finished_at: int
    error: str | None


def _upsert_sql() -> str:
    columns = ", ".join(PROJECTED_COLUMNS)
    values = ", ".join(f"json_extract(value, '$[{i}]')" for i in range(len(PROJECTED_COLUMNS)))
    updates = ", ".join(f"{c} = excluded.{c}" for c in PROJECTED_COLUMNS if c not in IMMUTABLE_COLUMNS)
    # ORDER BY key: the snapshots apply in the order given, as the statements of a batch would. WHERE true
    # keeps SQLite from reading ON CONFLICT as a join constraint of the SELECT.
    return (
        f"INSERT INTO job ({columns}) SELECT {values} FROM json_each(?) WHERE true ORDER BY key "
        f"ON CONFLICT (id) DO UPDATE SET {updates} WHERE excluded.seq > job.seq"
    )


_UPSERT: Final = _upsert_sql()


def _attempts_log(attempts: Sequence[AttemptRecord]) -> str | None:
    # The shard already sends the newest 20, newest first; sorting again keeps the stored log right even
    # for a feed that does not.
    newest = sorted(attempts, key=lambda a: a.attempt, reverse=True)[:ATTEMPTS_LOG_LIMIT]
    if not newest:
        return None
    entries = [
        AttemptLogEntry(
            attempt=a.attempt,
            state=a.state.value,
            started_at=a.started_at,
            finished_at=a.finished_at,
            error=a.error,
        )
        for a in newest
    ]
    return msgspec.json.encode(entries).decode()


def _shard_of(job_id: str) -> int | None:
    try:
        return job_shard(job_id)[1]
    except InvalidJobIdError:
        # Ids are validated where jobs are made; an odd one still projects rather than blocking the feed.
        return None


def snapshot_values(snapshot: JobSnapshot) -> tuple[Any, ...]:
    """The values of one snapshot, in ``PROJECTED_COLUMNS`` order (plain JSON-safe scalars only)."""
    job = snapshot.job
    # Built in column order directly (test_projection checks it against PROJECTED_COLUMNS).
    return (
        job.id,
        job.seq,
        job.binding,
        job.state.value,
        job.priority,
        job.attempts,
        job.max_attempts,
        job.concurrency_key,
        job.unique_key,
        job.guarantee,
        job.created_at,
        job.updated_at,
        job.dispatched_at,
        job.payload,
        job.run_id,
        job.node_id,
        _attempts_log(snapshot.attempts),
        job.result,
        job.run_after,
        job.progress,
        job.traceparent,
        job.expires_at,
        job.cancel_requested_at,
        job.error,
        job.reason,
        _shard_of(job.id),
    )


async def project(d1: D1Like[StatementT], snapshots: Sequence[JobSnapshot]) -> int:
    """Upsert ``snapshots`` into ``job`` in one D1 batch (one transaction).

    Args:
        d1: The read-model database.
        snapshots: Changed jobs from the shard's feed (``engine.changes``), at most
            ``PROJECTION_BATCH_LIMIT``.

    Returns:
        How many rows were inserted or updated; snapshots no newer than the stored row count 0.

    Raises:
        InvalidFieldError: more than ``PROJECTION_BATCH_LIMIT`` snapshots.
    """
    if len(snapshots) > PROJECTION_BATCH_LIMIT:
        raise InvalidFieldError(
            "snapshots",
            f"must hold at most {PROJECTION_BATCH_LIMIT}, got {len(snapshots)}",
            message=f"snapshots: at most {PROJECTION_BATCH_LIMIT} per projection batch, got {len(snapshots)}",
        )
    if not snapshots:
        return 0
    rows = json_arrays((snapshot_values(s) for s in snapshots), BATCH_BYTES)
    statements: list[StatementT] = [d1.prepare(_UPSERT).bind(text) for text in rows]
    results = await d1.batch(statements)
    return sum(result_changes(r) for r in results)
