"""Bringing a shard's SQLite database to the current schema: ``SCHEMA_VERSION`` in the ``setting`` table.

The DDL is idempotent (``CREATE ... IF NOT EXISTS``), which creates what is missing but never changes what an
older version created. A shard opened by a newer engine therefore runs each step between its stored version
and ``SCHEMA_VERSION`` first, in the same transaction as the DDL. Shards written before versions existed hold
no ``schema_version`` setting and count as version 1.

Version 2 (ADR-0054): ``job.key_head``; ``job_ready`` and ``job_eligible`` hold only key heads.
"""

from __future__ import annotations

from typing import Final

from tsumugi_core.exceptions import NotConfiguredError
from tsumugi_scheduler.shard.port import SqlLike
from tsumugi_scheduler.shard.schema import DDL

__all__ = ["SCHEMA_VERSION", "SCHEMA_VERSION_KEY", "create_or_migrate"]

SCHEMA_VERSION: Final = 2
SCHEMA_VERSION_KEY: Final = "schema_version"

_SETTING_TABLE: Final = next(s for s in DDL if "TABLE IF NOT EXISTS setting" in s)
_JOB_TABLE: Final = next(s for s in DDL if "TABLE IF NOT EXISTS job " in s)
_KEY_INDEX: Final = next(s for s in DDL if "INDEX IF NOT EXISTS job_key " in s)

_TO_2: Final = (
    # The dispatch indexes change their WHERE clause, so they are dropped and created again by the DDL.
    "DROP INDEX IF EXISTS job_ready",
    "DROP INDEX IF EXISTS job_eligible",
    "ALTER TABLE job ADD COLUMN key_head INTEGER NOT NULL DEFAULT 1",
    _KEY_INDEX,
    # Every waiting job with a key that has an earlier job of its (key, priority) group leaves the heads.
    "UPDATE job SET key_head = 0 WHERE state = 'SCHEDULED' AND concurrency_key IS NOT NULL AND EXISTS ("
    "SELECT 1 FROM job AS o INDEXED BY job_key WHERE o.state = 'SCHEDULED' AND o.concurrency_key IS NOT NULL"
    " AND o.concurrency_key = job.concurrency_key AND o.priority = job.priority"
    " AND (o.eligible_at, o.created_at, o.id) < (job.eligible_at, job.created_at, job.id))",
)


def _stored_version(sql: SqlLike) -> int | None:
    rows = sql.exec("SELECT value FROM setting WHERE key = ?", SCHEMA_VERSION_KEY).toArray()
    return int(rows[0]["value"]) if rows else None


def _has_key_head(sql: SqlLike) -> bool:
    # A probe in plain SQL: the Durable Object SQL API is not promised to answer PRAGMAs or sqlite_master.
    try:
        sql.exec("SELECT key_head FROM job LIMIT 0")
    except Exception:  # the SQL error type differs between workerd and the local runtime
        return False
    return True


def create_or_migrate(sql: SqlLike) -> None:
    """Create the schema or migrate an older one, then record ``SCHEMA_VERSION`` (call inside a transaction).

    Raises:
        RuntimeError: the shard was written by a newer engine (a rollback of the code): nothing is changed.
    """
    sql.exec(_SETTING_TABLE)
    version = _stored_version(sql)
    if version is not None and version > SCHEMA_VERSION:
        raise NotConfiguredError(f"schema_version {version} is newer than this engine's {SCHEMA_VERSION}")
    if version is None:
        sql.exec(_JOB_TABLE)  # a new shard gets the current table; an older one keeps its own
        version = SCHEMA_VERSION if _has_key_head(sql) else 1
    if version < 2:
        for statement in _TO_2:
            sql.exec(statement)
    for statement in DDL:
        sql.exec(statement)
    if _stored_version(sql) != SCHEMA_VERSION:
        sql.exec(
            "INSERT INTO setting (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            SCHEMA_VERSION_KEY,
            str(SCHEMA_VERSION),
        )
