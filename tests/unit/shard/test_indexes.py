"""Choosing a dispatch batch reads by index, never the backlog (docs/design/job-shard.md §3).

Two checks: every statement a busy tick and a report run has a plan that names the intended index (a plan
that merely says "USING INDEX job_state (state=?)" can still walk every SCHEDULED row), and the SQLite work of a
tick stays flat when the backlog grows tenfold.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from tests.unit.shard.shard_world import World
from tsumugi_core.options import EnqueueItem
from tsumugi_core.policy import PolicyPatch
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.shard.queries import (
    BY_ELIGIBLE,
    BY_LEVEL,
    COMPLETE_MANY,
    COMPLETE_QUERY,
    DISPATCH_QUERY,
    HELD_KEYS,
    JOB_FEED,
    KEY_GROUP_FIRST,
    KEY_GROUP_NEXT,
    LEVEL_HEADS,
    LEVEL_HEADS_AFTER,
    NEXT_READY_LEVEL,
    OLDEST_READY,
    OLDEST_READY_AFTER,
    OVERVIEW_QUERY,
    PROMOTE_KEY_HEADS,
    SET_KEY_HEAD,
)
from tsumugi_scheduler.shard.records import Failed, Succeeded

QUERIES = [
    (
        f"SELECT MIN(eligible_at) AS v FROM job {BY_ELIGIBLE}",
        (),
        "job_eligible",
    ),
    (
        f"SELECT MAX(priority) AS v FROM job {BY_LEVEL} AND priority < ?",
        (5,),
        "job_ready",
    ),
    (
        f"SELECT id FROM job {BY_LEVEL} AND priority = ? AND eligible_at <= ? ORDER BY eligible_at, created_at, id LIMIT ?",
        (0, 10, 5),
        "job_ready",
    ),
    (OLDEST_READY, (10, 5), "job_eligible (eligible_at<?)"),
    (LEVEL_HEADS, (0, 10, 5), "job_ready (priority=? AND eligible_at<?)"),
    (
        LEVEL_HEADS_AFTER,
        (0, 10, 1, 1, "a", 5),
        "job_ready (priority=? AND (eligible_at,created_at,id)>(?,?,?)",
    ),
    (OLDEST_READY_AFTER, (10, 1, 1, "a", 5), "job_eligible (eligible_at"),
    (KEY_GROUP_FIRST, ("k", 0, 2), "job_key (concurrency_key=? AND priority=?)"),
    (
        KEY_GROUP_NEXT,
        ("k", 0, 10, 1, 1, "a", 5),
        "job_key (concurrency_key=? AND priority=? AND (eligible_at,created_at,id)>(?,?,?)",
    ),
    (SET_KEY_HEAD, ("a", '["a", "b"]'), "sqlite_autoindex_job_1 (id=?)"),
    (PROMOTE_KEY_HEADS, ('[["k", 0]]',), "job_key (concurrency_key=? AND priority=?)"),
    (
        "SELECT * FROM job INDEXED BY job_silence WHERE state IN ('QUEUED', 'RUNNING') AND silence_at <= ?"
        " ORDER BY silence_at LIMIT 5",
        (1,),
        "job_silence",
    ),
    (
        "SELECT id FROM job INDEXED BY job_expiry WHERE expires_at IS NOT NULL AND cancel_requested_at IS NULL AND state IN"
        " ('SCHEDULED', 'QUEUED', 'RUNNING') AND expires_at <= ? ORDER BY expires_at LIMIT 5",
        (1,),
        "job_expiry",
    ),
    ("SELECT * FROM job WHERE seq > ? ORDER BY seq LIMIT 5", (0,), "job_seq"),
    (DISPATCH_QUERY, (1, 1, '["MAIL#0:a"]'), "sqlite_autoindex_job_1 (id=?)"),
    (COMPLETE_QUERY, (1, None, 1, "MAIL#0:a", 0), "sqlite_autoindex_job_1 (id=?)"),
    (COMPLETE_MANY, (1, 1, '[["MAIL#0:a", 0, null]]'), "sqlite_autoindex_job_1 (id=?)"),
    (JOB_FEED, (0, 5), "job_seq"),
]
HOLD_QUERIES = [
    (HELD_KEYS, (1,), "key_hold_until (until>?)"),
    ("SELECT MIN(until) AS v FROM key_hold", (), "key_hold_until"),
]


def _plan(sql: SqlStorage, query: str, params: tuple[Any, ...]) -> list[str]:
    return [str(row["detail"]) for row in sql.exec(f"EXPLAIN QUERY PLAN {query}", *params)]


@pytest.mark.parametrize(("query", "params", "index"), QUERIES)
def test_each_hot_query_uses_its_index(world: World, query: str, params: tuple[Any, ...], index: str) -> None:
    plan = " | ".join(_plan(world.sql, query, params))
    assert f"INDEX {index}" in plan, plan
    assert "SCAN job" not in plan, plan


@pytest.mark.parametrize(("query", "params", "index"), HOLD_QUERIES)
def test_key_holds_are_read_through_their_end(
    world: World, query: str, params: tuple[Any, ...], index: str
) -> None:
    # Only live holds are counted, and the next to end is one index seek (ADR-0185).
    plan = " | ".join(_plan(world.sql, query, params))
    assert f"INDEX {index}" in plan, plan
    assert "SCAN key_hold" not in plan, plan


def test_the_next_ready_level_is_a_skip_scan_of_index_seeks(world: World) -> None:
    plan = _plan(world.sql, NEXT_READY_LEVEL, (5, 10, 100))
    job_lines = [line for line in plan if " job " in f"{line} "]
    # The first and next lower level (priority<?), and "does the level hold a ready job" (twice).
    assert len(job_lines) == 4, plan
    assert all(line.startswith("SEARCH job USING INDEX job_ready (priority") for line in job_lines), plan


def test_the_overview_is_one_statement_of_indexed_lookups(world: World) -> None:
    plan = _plan(world.sql, OVERVIEW_QUERY, (1, 0, 0, 0))
    job_lines = [line for line in plan if " job " in f"{line} "]
    assert len(job_lines) == 10, plan  # every sub-select over job searches an index
    assert sum("job_sleep" in line for line in plan) == 1, plan  # the next sleeper to wake (ADR-0145)
    assert sum("key_hold_until" in line for line in plan) == 1, plan  # the next key hold to end (ADR-0185)
    # The feed checks (due now, and held) are seq ranges on job_seq, never a walk of the table.
    assert sum("job_seq (seq>? AND seq<?)" in line for line in plan) == 2, plan
    assert all(line.startswith("SEARCH job USING") for line in job_lines), plan
    # Over SCHEDULED rows the planner would otherwise pick job_state and walk the whole backlog.
    assert sum("job_eligible" in line for line in plan) == 2, plan


class _Recorder:
    """The DO SQL shape over a SqlStorage, remembering each distinct statement with its first bindings."""

    def __init__(self, target: SqlStorage) -> None:
        self.target = target
        self.seen: dict[str, tuple[Any, ...]] = {}

    def exec(self, query: str, *params: Any) -> Any:
        self.seen.setdefault(query, params)
        return self.target.exec(query, *params)

    def transaction_sync(self, fn: Callable[[], Any]) -> Any:
        return self.target.transaction_sync(fn)


def test_no_statement_of_a_busy_tick_or_report_scans_the_job_table(make_world: Callable[..., World]) -> None:
    world = make_world()
    recorder = _Recorder(world.sql)
    world.engine._store._sql = recorder  # type: ignore[attr-defined]  # observe the statements the engine runs
    world.engine.configure(PolicyPatch(concurrency=3, per_key_concurrency=1))
    world.engine.enqueue_many(
        [
            EnqueueItem(binding="MAIL", payload=i, priority=i % 3, concurrency_key="k" if i % 2 else None)
            for i in range(12)
        ]
    )
    first, second, *_ = world.dispatch()
    world.engine.report(first.job_id, first.attempt, Succeeded(result=1))
    world.engine.report(second.job_id, second.attempt, Failed(error="e"))
    world.clock.advance(10**8)
    world.dispatch()
    for query, params in recorder.seen.items():
        if " job " not in f"{query} " or not query.lstrip().upper().startswith(
            ("SELECT", "UPDATE", "DELETE")
        ):
            continue
        plan = " | ".join(_plan(world.sql, query, params))
        assert "SCAN job" not in plan, (query, plan)
        if "state = 'SCHEDULED'" in query and "EXISTS" not in query:
            assert "job_state" not in plan, (query, plan)


def _tick_steps(make_world: Callable[..., World], backlog: int) -> int:
    world = make_world()
    world.engine.configure(PolicyPatch(concurrency=20))
    world.engine.enqueue_many(
        [EnqueueItem(binding="MAIL", payload=i, priority=i % 4) for i in range(backlog)]
    )
    connection: sqlite3.Connection = world.sql._conn  # type: ignore[attr-defined]  # count SQLite VM steps
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    connection.set_progress_handler(count, 100)
    assert len(world.dispatch()) == 20
    connection.set_progress_handler(None, 100)
    return steps[0]


def test_the_sqlite_work_of_a_tick_does_not_grow_with_the_backlog(make_world: Callable[..., World]) -> None:
    # 1,000 ready jobs fill the dispatch window on every level, so only the backlog size differs.
    small, large = _tick_steps(make_world, 1_000), _tick_steps(make_world, 10_000)
    assert large < small * 1.5, (small, large)
