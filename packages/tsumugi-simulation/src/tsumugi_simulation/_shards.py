"""The shards' truth, read straight from each JobShard's SQLite file (the simulator observes, it does not ask)."""

from __future__ import annotations

from typing import Any

from tsumugi_dev.durable_objects import NamespaceHost

__all__ = ["attempt_log", "key_holds", "run_objects", "shard_rows", "shard_states"]

_JOB_COLUMNS = "id, binding, state, attempts, guarantee, concurrency_key, payload, timeout_ms, expires_at, run_id, node_id"


def _tables(namespace: NamespaceHost, table: str) -> list[Any]:
    """The SQL storage of every object of ``namespace`` that has ``table`` (one addressed but never started has
    none)."""
    found: list[Any] = []
    for host in namespace.objects():
        sql = host.storage().sql
        if sql.runtime_exec("SELECT 1 FROM sqlite_master WHERE name = ?", table).toArray():
            found.append(sql)
    return found


def run_objects(namespace: NamespaceHost) -> list[tuple[str, list[str], dict[str, Any] | None]]:
    """Every Run object made so far: its name, its tables and its run row's ``state`` / ``updated_at`` (None
    without one)."""
    found: list[tuple[str, list[str], dict[str, Any] | None]] = []
    for host in namespace.objects():
        sql = host.storage().sql
        tables = [
            str(r["name"])
            for r in sql.runtime_exec(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != '_cf_alarm'"
            ).toArray()
        ]
        row = None
        if "run" in tables:
            rows = sql.runtime_exec("SELECT state, updated_at FROM run LIMIT 1").toArray()
            row = dict(rows[0]) if rows else None
        found.append((str(host.id.name), sorted(tables), row))
    return found


def shard_rows(namespace: NamespaceHost) -> list[dict[str, Any]]:
    """Every job of every shard: id, binding, state, attempts, guarantee, key, payload, timeout, expiry, run and
    node."""
    rows: list[dict[str, Any]] = []
    for sql in _tables(namespace, "job"):
        rows.extend(dict(r) for r in sql.runtime_exec(f"SELECT {_JOB_COLUMNS} FROM job").toArray())
    return rows


def shard_states(namespace: NamespaceHost) -> list[tuple[str, str]]:
    """``(id, state)`` of every job of every shard: what the simulator watches between its full reads."""
    states: list[tuple[str, str]] = []
    for sql in _tables(namespace, "job"):
        rows = sql.runtime_exec("SELECT id, state FROM job").toArray()
        states.extend((str(r["id"]), str(r["state"])) for r in rows)
    return states


def attempt_log(namespace: NamespaceHost) -> tuple[dict[tuple[str, int], int], dict[tuple[str, int], int]]:
    """When each (job, attempt) was dispatched, and when it finished, from the shards' attempt logs."""
    dispatched: dict[tuple[str, int], int] = {}
    finished: dict[tuple[str, int], int] = {}
    for sql in _tables(namespace, "attempt"):
        for r in sql.runtime_exec("SELECT job_id, attempt, started_at, finished_at FROM attempt").toArray():
            key = (str(r["job_id"]), int(r["attempt"]))
            finished[key] = int(r["finished_at"])
            if r["started_at"] is not None:
                dispatched[key] = int(r["started_at"])
    return dispatched, finished


def key_holds(namespace: NamespaceHost) -> list[tuple[str, int, str, int]]:
    """``(job id, attempt, key, until)`` of every concurrency_key slot a shard keeps for an attempt it gave up while
    it may still run (ADR-0185): rows live until their end, so the simulator collects them as it watches."""
    holds: list[tuple[str, int, str, int]] = []
    for sql in _tables(namespace, "key_hold"):
        for r in sql.runtime_exec("SELECT job_id, attempt, key, until FROM key_hold").toArray():
            holds.append((str(r["job_id"]), int(r["attempt"]), str(r["key"]), int(r["until"])))
    return holds
