# pyright: reportArgumentType=false, reportGeneralTypeIssues=false, reportAttributeAccessIssue=false, reportCallIssue=false
# (The SDK's annotations are narrower than its behaviour: str methods, awaitable wrapper results.)
"""The local runtime's delivery paths do their writes as one unit and skip writes that change nothing."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, cast

import pytest
from workers import DurableObject

from tests.support.clock import START_MS
from tsumugi_dev.alarms import AlarmScheduler
from tsumugi_dev.clock import RealClock, VirtualClock
from tsumugi_dev.d1 import D1Database, D1Error
from tsumugi_dev.durable_objects import DurableObjectId, NamespaceHost
from tsumugi_dev.queues import QueueStore
from tsumugi_dev.state_db import open_state_db


@pytest.fixture
def state(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    conn = open_state_db(tmp_path / "runtime.sqlite")
    yield conn
    conn.close()


def test_a_batch_that_fails_part_way_stores_no_message(state: sqlite3.Connection) -> None:
    store = QueueStore(state, VirtualClock(START_MS))
    store.add("jobs", [(b"first", 0)])
    with pytest.raises(sqlite3.IntegrityError):
        # The second body violates NOT NULL after the first row was inserted: the whole batch must go.
        store.add("jobs", [(b"a", 0), (cast(bytes, None), 0)])
    assert [m.body for m in store.pending("jobs")] == [b"first"]


def test_each_message_of_a_batch_gets_its_own_id(state: sqlite3.Connection) -> None:
    # One read of entropy serves the whole batch: each message still has 128 bits of its own, as 32 hex digits.
    store = QueueStore(state, VirtualClock(START_MS))
    ids = store.add("jobs", [(bytes([i]), 0) for i in range(100)])
    assert len(ids) == 100
    assert len(set(ids)) == 100
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)
    assert store.add("jobs", []) == []


def test_lease_and_settle_apply_to_every_message_of_the_batch(state: sqlite3.Connection) -> None:
    store = QueueStore(state, VirtualClock(START_MS))
    store.add("jobs", [(bytes([i]), 0) for i in range(5)])
    leased = store.lease("jobs", 3)
    assert [m.attempts for m in leased] == [1, 1, 1]
    assert store.ready_count("jobs", 10) == 2
    store.settle([m.seq for m in leased[:2]], [(leased[2].seq, 0)], [], None)
    assert sorted(m.body for m in store.pending("jobs")) == [b"\x02", b"\x03", b"\x04"]


def test_a_batch_is_stored_leased_and_settled_with_one_statement_each(state: sqlite3.Connection) -> None:
    # A statement per message was a step (and a GIL release) per message on the event loop's thread.
    store = QueueStore(state, VirtualClock(START_MS))
    statements: list[str] = []
    state.set_trace_callback(statements.append)
    store.add("jobs", [(bytes([i]), 0) for i in range(150)])
    assert [s.split()[0] for s in statements] == ["BEGIN", "INSERT", "INSERT", "COMMIT"]  # 100 + 50
    statements.clear()
    leased = store.lease("jobs", 100)
    assert [s.split()[0] for s in statements] == ["BEGIN", "SELECT", "UPDATE", "COMMIT"]
    dead = leased[99]
    statements.clear()
    store.settle([m.seq for m in leased[:98]], [(leased[98].seq, 1)], [dead], "dlq")
    assert [s.split()[0] for s in statements] == ["BEGIN", "DELETE", "UPDATE", "INSERT", "COMMIT"]
    state.set_trace_callback(None)
    assert len(store.pending("jobs")) == 51  # the retried one and the 50 never leased
    assert store.ready_count("jobs", 200) == 50  # the retried one waits its delay
    assert [m.body for m in store.pending("dlq")] == [dead.body]
    assert {m.attempts for m in store.lease("jobs", 200)} == {1}  # leased once more: attempts counted once


class Fired:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def __call__(self, namespace: str, object_id: str) -> None:
        self.calls.append((namespace, object_id))


async def test_an_unchanged_alarm_costs_no_index_write_and_fires_once(state: sqlite3.Connection) -> None:
    conn, clock, fired = state, VirtualClock(START_MS), Fired()
    alarms = AlarmScheduler(conn, clock, fired)
    alarms.committed("ns", "obj", "Hello#0", START_MS + 10)
    writes = conn.total_changes
    for _ in range(5):  # an object reports its alarm after every transaction
        alarms.committed("ns", "obj", "Hello#0", START_MS + 10)
    assert conn.total_changes == writes
    await clock.advance(10)
    assert fired.calls == [("ns", "obj")]


async def test_a_moved_or_cleared_alarm_is_rewritten(state: sqlite3.Connection) -> None:
    conn, clock, fired = state, VirtualClock(START_MS), Fired()
    alarms = AlarmScheduler(conn, clock, fired)
    alarms.committed("ns", "obj", "Hello#0", START_MS + 10)
    alarms.committed("ns", "obj", "Hello#0", START_MS + 5)
    assert conn.execute("SELECT alarm_at FROM do_alarm_index").fetchall() == [(START_MS + 5,)]
    await clock.advance(5)
    assert fired.calls == [("ns", "obj")]
    alarms.committed("ns", "obj", "Hello#0", None)
    assert conn.execute("SELECT count(*) FROM do_alarm_index").fetchone() == (0,)
    await clock.advance(100)
    assert fired.calls == [("ns", "obj")]


def test_an_index_row_from_a_previous_run_is_cleared_without_an_alarm(state: sqlite3.Connection) -> None:
    conn, clock = state, VirtualClock(START_MS)
    AlarmScheduler(conn, clock, Fired()).committed("ns", "obj", None, START_MS + 10)
    restarted = AlarmScheduler(conn, clock, Fired())
    assert restarted.indexed() == [("ns", "obj", None)]
    restarted.committed("ns", "obj", None, None)
    assert restarted.indexed() == []


async def test_d1_batch_results_report_the_size_after_the_batch(tmp_path: Path) -> None:
    with D1Database(tmp_path / "d1.sqlite") as db:
        await db.exec("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, flag INTEGER)")
        insert = db.prepare("INSERT INTO item (name, flag) VALUES (?, ?)")
        results = await db.batch([insert.bind(f"n{i}" * 200, True) for i in range(50)])
        single = await db.prepare("SELECT count(*) AS n FROM item").all()
        flags = await db.prepare("SELECT DISTINCT flag FROM item").raw()
    sizes = {r.meta.size_after for r in results}
    assert sizes == {single.meta.size_after}
    assert single.meta.size_after > 0
    assert flags == [[1]]  # booleans bind as integers


def test_d1_bind_still_refuses_what_d1_refuses_and_names_the_index(tmp_path: Path) -> None:
    bad: Any = {"a": 1}
    with D1Database(tmp_path / "d1.sqlite") as db, pytest.raises(D1Error, match="index 2"):
        db.prepare("SELECT ?, ?, ?").bind("ok", 1, bad)


class Reentrant(DurableObject):
    """An object whose first alarm() sets a due alarm and then awaits, as a handler awaiting I/O does."""

    log: ClassVar[list[str]] = []
    done: ClassVar[asyncio.Event]

    async def alarm(self, info: Any) -> None:
        number = sum(1 for entry in self.log if entry.startswith("start"))
        self.log.append(f"start {number}")
        if number == 0:
            # Due at once, while this handler still runs: a past time is kept as now (workerd refuses 0).
            await self.ctx.storage.setAlarm(1)
        for _ in range(20):
            await asyncio.sleep(0)  # the real clock's timer for the new alarm fires in here
        self.log.append(f"end {number}")
        if number == 1:
            self.done.set()


async def test_an_alarm_due_while_alarm_runs_fires_after_it_returns(
    tmp_path: Path, state: sqlite3.Connection
) -> None:
    clock = RealClock()
    namespace: NamespaceHost | None = None

    async def fire(namespace_key: str, object_id: str) -> None:
        assert namespace is not None
        await namespace.host(DurableObjectId(object_id)).run_alarm()

    alarms = AlarmScheduler(state, clock, fire)
    namespace = NamespaceHost(
        script="t", class_name="Reentrant", data_dir=tmp_path, clock=clock, alarms=alarms
    )
    namespace.bind(Reentrant, None)
    Reentrant.log, Reentrant.done = [], asyncio.Event()
    host = namespace.host(namespace.id_from_name("one"))
    host.storage().setAlarm(1)
    try:
        await asyncio.wait_for(Reentrant.done.wait(), timeout=10)  # a guard only: it finishes in microseconds
        assert Reentrant.log == ["start 0", "end 0", "start 1", "end 1"]
        assert host.storage().stored_alarm() is None
    finally:
        await clock.aclose()
        namespace.evict_all()
