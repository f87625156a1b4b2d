"""The Run Durable Object's SQLite schema.

Source: docs/reference/original.md §5.3, plus ``gen`` and ``sent`` for crash-safe starts.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["DDL", "NODE_COLUMNS", "RUN_COLUMNS", "upgrade"]

RUN_COLUMNS: Final = (
    "id",
    "flow",
    "state",
    "input",
    "shape",
    "cancelling",
    "parent_run_id",
    "parent_node_id",
    "depth",
    "parent_notified",
    "deadline_ms",
    "deadline_at",
    "expired",
    "created_at",
    "updated_at",
    "notices",
    "noticed",
    "resumes",
    "nonce",
)
"""``nonce`` is drawn when the run is stored and never leaves the object: its nodes' job ids and child run ids
derive from it, so they are this incarnation's own and no caller can compute them first (ADR-0115)."""
NODE_COLUMNS: Final = (
    "id",
    "binding",
    "state",
    "container",
    "parent",
    "origin",
    "after",
    "payload",
    "options",
    "job_id",
    "subflow",
    "child_run_id",
    "result",
    "error",
    "seq",
    "gen",
    "sent",
    "created_at",
    "updated_at",
    "scheduled_at",
    "finished_at",
    "hold_until",
    "steps_from",
)
"""``gen`` counts the node's resumes (its job id is derived from run, node and gen); ``sent`` is 1 once its
job was enqueued (or reported: it was stored) or its child run started, so a start interrupted by a crash is
sent again, and a job refused at its enqueue (``sent`` 0) passes no steps on (ADR-0184); ``scheduled_at`` /
``finished_at`` are when it was last scheduled and when it ended (the run waterfall's bars, ADR-0094);
``hold_until`` is when a STALLED at-most-once job's last attempt can no longer run (its shard's hold, ADR-0051):
a resume starts the node's new job no earlier (ADR-0116); ``steps_from`` is the job a resumed node's new job
takes its stored steps from (an at-most-once job's steps are never run again, ADR-0176). A child whose payload was refused when it was made
holds a NULL ``payload`` (every other child holds JSON text)."""

DDL: Final = (
    """CREATE TABLE IF NOT EXISTS run (
        id TEXT PRIMARY KEY NOT NULL, flow TEXT NOT NULL, state TEXT NOT NULL, input TEXT NOT NULL,
        shape TEXT NOT NULL, cancelling INTEGER NOT NULL DEFAULT 0, parent_run_id TEXT, parent_node_id TEXT,
        depth INTEGER NOT NULL DEFAULT 0, parent_notified INTEGER NOT NULL DEFAULT 0, deadline_ms INTEGER,
        deadline_at INTEGER, expired INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL, notices TEXT, noticed INTEGER NOT NULL DEFAULT 0,
        resumes INTEGER NOT NULL DEFAULT 0, nonce TEXT)""",
    """CREATE TABLE IF NOT EXISTS node (
        id TEXT PRIMARY KEY NOT NULL, binding TEXT NOT NULL, state TEXT NOT NULL, container INTEGER NOT NULL,
        parent TEXT, origin TEXT NOT NULL, after TEXT NOT NULL, payload TEXT, options TEXT, job_id TEXT,
        subflow TEXT, child_run_id TEXT, result TEXT, error TEXT, seq INTEGER NOT NULL,
        gen INTEGER NOT NULL DEFAULT 0, sent INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL, scheduled_at INTEGER, finished_at INTEGER, hold_until INTEGER,
        steps_from TEXT)""",
    "CREATE INDEX IF NOT EXISTS node_parent ON node(parent)",
    "CREATE INDEX IF NOT EXISTS node_state ON node(state)",
    "CREATE INDEX IF NOT EXISTS node_seq ON node(seq, id)",
    """CREATE TABLE IF NOT EXISTS run_outbox (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, target TEXT NOT NULL)""",
)


def upgrade(sql: Any) -> None:
    """Bring an object made by an older version to `DDL`'s shape (after `DDL` ran).

    Outbox rows once carried each change's snapshot (``run_outbox.snapshot``); the projection now reads the
    rows it names as they are, so the column goes and its rows stay (they still name what to project). Nodes
    gained ``scheduled_at`` / ``finished_at`` (NULL for what happened before), then ``hold_until``, then
    ``steps_from``; the run
    gained ``nonce`` (the engine draws one for a run stored without it, ADR-0115).
    """
    if _has(sql, "run_outbox", "snapshot"):
        sql.exec("ALTER TABLE run_outbox DROP COLUMN snapshot")
    if not _has(sql, "node", "finished_at"):
        sql.exec("ALTER TABLE node ADD COLUMN scheduled_at INTEGER")
        sql.exec("ALTER TABLE node ADD COLUMN finished_at INTEGER")
    if not _has(sql, "node", "hold_until"):
        sql.exec("ALTER TABLE node ADD COLUMN hold_until INTEGER")
    if not _has(sql, "node", "steps_from"):
        sql.exec("ALTER TABLE node ADD COLUMN steps_from TEXT")
    if not _has(sql, "run", "nonce"):
        sql.exec("ALTER TABLE run ADD COLUMN nonce TEXT")


def _has(sql: Any, table: str, column: str) -> bool:
    try:
        sql.exec(f"SELECT {column} FROM {table} LIMIT 0")
    except Exception:  # no such column (each runtime raises its own error type)
        return False
    return True
