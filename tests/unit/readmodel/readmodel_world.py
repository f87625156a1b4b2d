"""Builders for read-model tests: a migrated local D1, job snapshots, a bulk loader and a reference model."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from tsumugi_core.states import JobState
from tsumugi_dev.d1 import D1Database, apply_d1_migrations
from tsumugi_scheduler.readmodel import PROJECTED_COLUMNS
from tsumugi_scheduler.readmodel.projection import snapshot_values
from tsumugi_scheduler.shard.records import AttemptRecord, JobRecord, JobSnapshot

REPO_ROOT = Path(__file__).resolve().parents[3]
MIGRATIONS_DIR = REPO_ROOT / "migrations"
T0 = 1_700_000_000_000
DAY_MS = 24 * 60 * 60 * 1000

BINDINGS = ("MAIL", "PUSH", "SMS", "WEBHOOK")
STATES = tuple(s.value for s in JobState if s is not JobState.SLEEPING)  # the seven the world was built on


def migrated_d1(folder: Path) -> D1Database:
    """A D1 database in ``folder`` with every migration of the repository applied."""
    db = D1Database(folder / "readmodel.sqlite")
    apply_d1_migrations(db, MIGRATIONS_DIR)
    return db


def job_row(**overrides: Any) -> JobRecord:
    """A shard job row with plausible defaults; ``overrides`` replace fields."""
    fields: dict[str, Any] = {
        "id": "MAIL#0:job1",
        "binding": "MAIL",
        "state": JobState.SCHEDULED,
        "priority": 0,
        "attempts": 0,
        "max_attempts": 3,
        "guarantee": "at-least-once",
        "timeout_ms": 60_000,
        "backoff": '{"kind":"fixed"}',
        "concurrency_key": None,
        "unique_key": None,
        "run_after": T0,
        "eligible_at": T0,
        "expires_at": None,
        "created_at": T0,
        "updated_at": T0,
        "dispatched_at": None,
        "heartbeat_at": None,
        "silence_at": None,
        "progress": None,
        "cancel_requested_at": None,
        "payload": '{"to":"a@example.com"}',
        "result": None,
        "error": None,
        "reason": None,
        "traceparent": None,
        "run_id": None,
        "node_id": None,
        "seq": 1,
    }
    fields.update(overrides)
    return JobRecord(**fields)


def attempt(
    job_id: str, number: int, state: JobState = JobState.FAILED, error: str | None = "boom"
) -> AttemptRecord:
    """A recorded attempt that started at ``T0 + number`` s and took 100 ms."""
    started = T0 + number * 1000
    return AttemptRecord(
        job_id=job_id, attempt=number, state=state, started_at=started, finished_at=started + 100, error=error
    )


def snapshot(log: Sequence[AttemptRecord] = (), **overrides: Any) -> JobSnapshot:
    """A snapshot of ``job_row(**overrides)`` with recorded attempts ``log``."""
    return JobSnapshot(job=job_row(**overrides), attempts=list(log))


def stored_row(db: D1Database, job_id: str) -> dict[str, Any] | None:
    """The ``job`` row of ``job_id`` as a plain dict, read straight from SQLite."""
    cursor = db.connection.execute("SELECT * FROM job WHERE id = ?", (job_id,))
    row = cursor.fetchone()
    if row is None:
        return None
    return dict(zip([d[0] for d in cursor.description], row, strict=True))


def load_snapshots(conn: sqlite3.Connection, snapshots: Iterable[JobSnapshot]) -> None:
    """Insert many snapshots at once (tests only: the projector batches 200 at a time)."""
    columns = ", ".join(PROJECTED_COLUMNS)
    marks = ", ".join("?" for _ in PROJECTED_COLUMNS)
    with conn:
        conn.execute("BEGIN")
        conn.executemany(
            f"INSERT INTO job ({columns}) VALUES ({marks})", (snapshot_values(s) for s in snapshots)
        )


class Job(msgspec.Struct, frozen=True, kw_only=True):
    """A job of the 10,000-job model as the reference filters and sorts it."""

    id: str
    binding: str
    state: str
    priority: int
    attempts: int
    concurrency_key: str | None
    unique_key: str | None
    created_at: int
    updated_at: int


def population(count: int = 10_000) -> list[Job]:
    """A deterministic mix of bindings, states, keys and instants, with ``updated_at`` ties in pairs.

    ``i * 7919 mod 10_000`` is a permutation of ``0..9999`` (7919 is prime to 10,000), so halving it gives
    every ``updated_at`` to exactly two jobs whose ids are far apart: the ``id DESC`` tie-break matters.
    """
    jobs: list[Job] = []
    for i in range(count):
        binding = BINDINGS[i % len(BINDINGS)]
        jobs.append(
            Job(
                id=f"{binding}#{(i // 4) % 2}:j{i:05d}",
                binding=binding,
                state=STATES[i % len(STATES)],
                priority=(i * 7) % 11 - 5,
                attempts=i % 4,
                concurrency_key=f"user-{i % 50}" if i % 3 == 0 else None,
                unique_key=f"u-{i}" if i % 10 == 0 else None,
                created_at=T0 + i * 1000,
                updated_at=T0 + ((i * 7919) % 10_000 // 2) * 1000,
            )
        )
    return jobs


def as_snapshot(job: Job, seq: int) -> JobSnapshot:
    """The shard snapshot that projects ``job``."""
    return snapshot(
        id=job.id,
        binding=job.binding,
        state=JobState(job.state),
        priority=job.priority,
        attempts=job.attempts,
        concurrency_key=job.concurrency_key,
        unique_key=job.unique_key,
        created_at=job.created_at,
        updated_at=job.updated_at,
        run_after=job.created_at,
        seq=seq,
    )


def reference_order(jobs: Iterable[Job], sort: str, order: str) -> list[str]:
    """Ids ordered by ``sort`` (``order``), ties broken by id descending: the contract of ``list_jobs``."""
    by_id = sorted(jobs, key=lambda j: j.id, reverse=True)
    # Python's sort is stable even with reverse=True, so the id DESC order survives among equal keys.
    return [j.id for j in sorted(by_id, key=lambda j: getattr(j, sort), reverse=order == "desc")]
