"""A shard written before schema versions (version 1) opens under the current engine (ADR-0054)."""

from __future__ import annotations

import pytest

from tsumugi_core.options import EnqueueItem
from tsumugi_core.testing import FixedClock, FixedRandom, SequentialIds
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.shard.engine import JobShardEngine
from tsumugi_scheduler.shard.schema_migration import SCHEMA_VERSION, SCHEMA_VERSION_KEY

T0 = 1_000_000

# Version 1 as the engine created it before issue 10: no key_head, dispatch indexes over every waiting job.
V1_DDL = (
    """CREATE TABLE job (
        id TEXT PRIMARY KEY NOT NULL, binding TEXT NOT NULL, state TEXT NOT NULL, priority INTEGER NOT NULL,
        attempts INTEGER NOT NULL, max_attempts INTEGER NOT NULL, guarantee TEXT NOT NULL,
        timeout_ms INTEGER NOT NULL, backoff TEXT NOT NULL, concurrency_key TEXT, unique_key TEXT,
        run_after INTEGER NOT NULL, eligible_at INTEGER NOT NULL, expires_at INTEGER, created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL, dispatched_at INTEGER, heartbeat_at INTEGER, silence_at INTEGER,
        progress REAL, cancel_requested_at INTEGER, payload TEXT NOT NULL, result TEXT, error TEXT, reason TEXT,
        traceparent TEXT, run_id TEXT, node_id TEXT, seq INTEGER NOT NULL)""",
    "CREATE INDEX job_ready ON job(priority, eligible_at, created_at, id) WHERE state = 'SCHEDULED'",
    "CREATE INDEX job_eligible ON job(eligible_at) WHERE state = 'SCHEDULED'",
    "CREATE TABLE setting (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID",
)
_INSERT = (
    "INSERT INTO job (id, binding, state, priority, attempts, max_attempts, guarantee, timeout_ms, backoff,"
    " concurrency_key, run_after, eligible_at, created_at, updated_at, payload, seq)"
    " VALUES (?, 'MAIL', ?, ?, 0, 3, 'at-least-once', 60000, '{\"kind\":\"fixed\",\"delayMs\":1000}', ?, ?, ?, ?, ?,"
    " '1', ?)"
)


def _v1_shard() -> SqlStorage:
    sql = SqlStorage()
    for statement in V1_DDL:
        sql.exec(statement)
    jobs = [  # id, state, priority, key, eligible_at
        ("MAIL#0:k3", "SCHEDULED", 0, "K", T0 + 3),
        ("MAIL#0:k1", "SCHEDULED", 0, "K", T0 + 1),
        ("MAIL#0:k2", "SCHEDULED", 0, "K", T0 + 2),
        ("MAIL#0:k9", "SCHEDULED", 9, "K", T0 + 9),
        ("MAIL#0:kq", "QUEUED", 0, "K", T0),
        ("MAIL#0:l1", "SCHEDULED", 0, "L", T0 + 5),
        ("MAIL#0:free", "SCHEDULED", 0, None, T0 + 4),
    ]
    for seq, (job_id, state, priority, key, eligible) in enumerate(jobs, 1):
        sql.exec(_INSERT, job_id, state, priority, key, eligible, eligible, eligible, eligible, seq)
    return sql


def _open(sql: SqlStorage, clock: FixedClock) -> JobShardEngine:
    return JobShardEngine(
        sql, binding="MAIL", shard=0, clock=clock, ids=SequentialIds(), rand=FixedRandom(0.5)
    )


def test_a_version_1_shard_gets_key_heads_and_the_new_indexes() -> None:
    with _v1_shard() as sql:
        _open(sql, FixedClock(T0 + 10))
        heads = {
            r["id"]: r["key_head"] for r in sql.exec("SELECT id, key_head FROM job WHERE state = 'SCHEDULED'")
        }
        assert heads == {
            "MAIL#0:k1": 1,
            "MAIL#0:k2": 0,
            "MAIL#0:k3": 0,
            "MAIL#0:k9": 1,
            "MAIL#0:l1": 1,
            "MAIL#0:free": 1,
        }
        indexes = {
            r["name"]: r["sql"] for r in sql.exec("SELECT name, sql FROM sqlite_master WHERE type = 'index'")
        }
        assert "key_head = 1" in indexes["job_ready"]
        assert "key_head = 1" in indexes["job_eligible"]
        assert "job_key" in indexes
        [version] = sql.exec("SELECT value FROM setting WHERE key = ?", SCHEMA_VERSION_KEY)
        assert version["value"] == str(SCHEMA_VERSION)


def test_a_migrated_shard_dispatches_past_its_busy_key_and_opens_again_unchanged() -> None:
    with _v1_shard() as sql:
        clock = FixedClock(T0 + 10)
        engine = _open(sql, clock)
        # K is full (kq in flight): its three waiting jobs are passed, L and the free job go.
        assert {m.job_id for m in engine.tick().dispatches} == {"MAIL#0:l1", "MAIL#0:free"}
        again = _open(sql, clock)  # a second migration would fail on ALTER TABLE (the column exists)
        again.enqueue_many([EnqueueItem(binding="MAIL", payload=1, concurrency_key="L")])
        assert again.get("MAIL#0:l1") is not None


def test_a_shard_from_a_newer_engine_is_refused_untouched() -> None:
    with SqlStorage() as sql:
        _open(sql, FixedClock(T0))
        sql.exec("UPDATE setting SET value = ? WHERE key = ?", str(SCHEMA_VERSION + 1), SCHEMA_VERSION_KEY)
        with pytest.raises(RuntimeError, match="newer than this engine"):
            _open(sql, FixedClock(T0))
