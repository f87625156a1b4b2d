"""The runtime's meter counts each unit Cloudflare bills (ADR-0130): known operations give known counts.

Rows written follow workerd's SQLite patch (one per table row inserted, updated or deleted and one per index
entry inserted; an index entry removed is free), so each expected figure below is worked out from the schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.clock import START_MS
from tsumugi_dev.billing import billed_units, prices, sum_units, usd
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.d1 import D1Database
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_dev.do_storage import ObjectSqlStorage
from tsumugi_dev.metering import Meter, Usage, queue_operations
from tsumugi_dev.queue_meter import QueueMeter
from tsumugi_dev.queues import QueueStore
from tsumugi_dev.runtime import LocalRuntime
from tsumugi_dev.state_db import open_state_db
from tsumugi_dev.worker import service_stub

_OPEN: list[Any] = []


def _opened(resource: Any) -> Any:
    """Keep ``resource`` to close after the test (Python 3.13 warns of a database left open)."""
    _OPEN.append(resource)
    return resource


@pytest.fixture(autouse=True)
def _close_what_was_opened() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


@pytest.fixture
def sql() -> SqlStorage:
    storage = _opened(SqlStorage())
    storage.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b TEXT, c TEXT)")
    storage.exec("CREATE INDEX t_a ON t (a)")
    storage.exec("CREATE INDEX t_b ON t (b)")
    storage.usage = Usage()
    return storage


def _written(storage: SqlStorage) -> int:
    assert storage.usage is not None
    return storage.usage.sql_rows_written


# -- Durable Object SQL -----------------------------------------------------------------------------------------


def test_an_insert_writes_its_row_and_one_entry_per_index(sql: SqlStorage) -> None:
    sql.exec("INSERT INTO t (a, b, c) VALUES (?, ?, ?)", "x", "y", "z")
    assert _written(sql) == 3  # the row, t_a, t_b


def test_an_update_writes_the_row_and_only_the_indexes_of_its_set_columns(sql: SqlStorage) -> None:
    sql.exec("INSERT INTO t (id, a, b, c) VALUES (1, 'x', 'y', 'z')")
    before = _written(sql)
    sql.exec("UPDATE t SET c = ? WHERE id = 1", "w")  # no index holds c
    assert _written(sql) - before == 1
    sql.exec("UPDATE t SET a = ? WHERE id = 1", "v")  # t_a's entry moves: removal free, insertion counted
    assert _written(sql) - before == 1 + 2


def test_a_delete_writes_one_row_per_row_removed(sql: SqlStorage) -> None:
    for i in range(3):
        sql.exec("INSERT INTO t (a, b, c) VALUES (?, 'y', 'z')", f"x{i}")
    before = _written(sql)
    sql.exec("DELETE FROM t WHERE a != ?", "x0")
    assert _written(sql) - before == 2


def test_an_upsert_counts_the_path_it_took(sql: SqlStorage) -> None:
    upsert = "INSERT INTO t (id, a, b, c) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET c = excluded.c"
    sql.exec(upsert, 7, "x", "y", "z")
    assert _written(sql) == 3  # inserted: the row and both index entries
    sql.exec(upsert, 7, "x", "y", "w")
    assert _written(sql) == 3 + 1  # DO UPDATE of c alone: the row only


def test_a_row_written_by_a_trigger_counts(sql: SqlStorage) -> None:
    sql.exec("CREATE TABLE audit (t_id INTEGER, at TEXT)")
    sql.exec("CREATE TRIGGER t_audit AFTER INSERT ON t BEGIN INSERT INTO audit VALUES (NEW.id, 'now'); END")
    sql.exec("INSERT INTO t (a, b, c) VALUES ('x', 'y', 'z')")
    assert _written(sql) == 3 + 1  # the row and its two index entries, and the trigger's audit row


def test_a_partial_index_entry_counts_only_for_rows_its_where_admits() -> None:
    storage = _opened(SqlStorage())
    storage.exec("CREATE TABLE job (id TEXT PRIMARY KEY, state TEXT, at INTEGER, done_at INTEGER)")
    storage.exec("CREATE INDEX job_ready ON job (at) WHERE state = 'SCHEDULED'")
    storage.exec("CREATE INDEX job_done ON job (done_at) WHERE done_at IS NOT NULL AND state = 'COMPLETED'")
    storage.usage = Usage()
    insert = "INSERT INTO job (id, state, at) VALUES (?, ?, 1)"
    storage.exec(insert, "a", "SCHEDULED")
    assert storage.usage.sql_rows_written == 3  # the row, the primary key's index, job_ready
    storage.exec(insert, "b", "RUNNING")
    assert storage.usage.sql_rows_written == 3 + 2  # job_ready's WHERE refuses it
    # SET state = 'QUEUED': neither WHERE can hold whatever done_at is; the rewritten entries are skipped.
    storage.exec("UPDATE job SET state = 'QUEUED', at = ? WHERE id = 'a'", 5)
    assert storage.usage.sql_rows_written == 3 + 2 + 1
    # SET state = 'COMPLETED' with done_at unknown (a parameter): job_done may hold, so it counts.
    storage.exec("UPDATE job SET state = 'COMPLETED', done_at = ? WHERE id = 'a'", 9)
    assert storage.usage.sql_rows_written == 3 + 2 + 1 + 2


def test_a_without_rowid_table_counts_its_primary_key_entry_and_its_indexes() -> None:
    storage = _opened(SqlStorage())
    storage.exec("CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID")
    storage.exec("CREATE INDEX kv_v ON kv (v)")
    storage.usage = Usage()
    storage.exec("INSERT INTO kv (k, v) VALUES ('a', 'b')")
    assert storage.usage.sql_rows_written == 2


def test_rows_read_are_the_rows_returned(sql: SqlStorage) -> None:
    for i in range(4):
        sql.exec("INSERT INTO t (a, b, c) VALUES (?, 'y', 'z')", f"x{i}")
    assert sql.usage is not None
    before = sql.usage.sql_rows_read
    assert len(sql.exec("SELECT id FROM t WHERE a IN ('x1', 'x2', 'x3')").toArray()) == 3
    assert sql.usage.sql_rows_read - before == 3


def test_the_runtimes_own_statements_are_not_metered() -> None:
    storage = _opened(ObjectSqlStorage())
    storage.usage = Usage()
    storage.runtime_exec("CREATE TABLE _cf_x (id INTEGER PRIMARY KEY, v INTEGER)")
    storage.runtime_exec("INSERT INTO _cf_x (v) VALUES (1)")
    assert storage.usage.sql_rows_written == 0


def test_nothing_is_metered_without_an_account() -> None:
    storage = _opened(SqlStorage())
    storage.exec("CREATE TABLE t (id INTEGER PRIMARY KEY)")
    storage.exec("INSERT INTO t DEFAULT VALUES")
    assert storage.usage is None


# -- D1 ---------------------------------------------------------------------------------------------------------


async def test_d1_counts_each_statement_as_a_query_with_its_rows(tmp_path: Path) -> None:
    with D1Database(tmp_path / "d1.sqlite") as db:
        db.connection.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
        db.usage = Usage()
        await db.prepare("INSERT INTO item (name) VALUES (?)").bind("a").run()
        await db.batch([db.prepare("INSERT INTO item (name) VALUES (?)").bind(n) for n in ("b", "c")])
        await db.prepare("SELECT * FROM item").all()
        assert db.usage.d1_queries == 4
        assert db.usage.d1_rows_written == 3 * 2  # each row and its UNIQUE index entry
        assert db.usage.d1_rows_read == 1 + 1 + 1 + 3  # each insert changed one row; the SELECT returned 3


# -- queues -----------------------------------------------------------------------------------------------------


def test_queue_operations_are_counted_per_64_kb() -> None:
    assert queue_operations(0) == 1
    assert queue_operations(63_900) == 1  # with the ~100 bytes of metadata: exactly 64,000
    assert queue_operations(63_901) == 2
    assert queue_operations(127_900) == 2


def test_a_message_costs_a_write_a_read_per_delivery_and_a_delete(tmp_path: Path) -> None:
    meter = Meter()
    store = QueueStore(_opened(open_state_db(tmp_path / "q.sqlite")), VirtualClock(START_MS))
    store.meter = QueueMeter(meter)
    store.add("q", [(b"{}", 0), (b"x" * 70_000, 0)])
    usage = meter.usage("Queue q")
    assert usage.queue_writes == 1 + 2
    first = store.lease("q", 10)
    assert usage.queue_reads == 1 + 2
    small, big = sorted(first, key=lambda m: len(m.body))
    store.settle([big.seq], [(small.seq, 0)], [], None)  # the big one acked, the small one retried
    assert usage.queue_deletes == 2
    again = store.lease("q", 10)
    assert [m.seq for m in again] == [small.seq]
    assert usage.queue_reads == 1 + 2 + 1  # each retry is another read
    store.settle([], [], again, "dlq")  # dropped after its last retry, into the dead-letter queue
    assert usage.queue_deletes == 2 + 1
    assert meter.usage("Queue dlq").queue_writes == 1


# -- Workers, Durable Objects, Analytics Engine, subrequests, through the runtime -------------------------------


async def test_requests_duration_and_subrequests_through_the_runtime(runtime: LocalRuntime) -> None:
    runtime.meter.reset()
    for _ in range(2):
        response = await runtime.fetch("conformance", "http://c/counter/increment")
        assert response.status == 200
    worker = runtime.meter.usage("Worker conformance")
    counter = runtime.meter.usage("Durable Object conformance:Counter")
    assert worker.requests == 2
    assert worker.subrequests == 2  # one Durable Object stub call each
    assert counter.requests == 2  # one RPC method call each
    assert counter.active_s > 0
    # The first increment inserts the counter row (INTEGER PRIMARY KEY: no index), the second updates it.
    assert counter.sql_rows_written == 2


async def test_a_service_binding_call_is_not_a_billed_request(runtime: LocalRuntime) -> None:
    runtime.meter.reset()
    assert await service_stub(runtime.workers["peer"], "Api").add(1, 2) == 3
    peer = runtime.meter.usage("Worker peer")
    assert (peer.requests, peer.service_binding_calls) == (0, 1)


async def test_an_alarm_is_a_request_of_its_object(runtime: LocalRuntime, clock: VirtualClock) -> None:
    await runtime.fetch("conformance", f"http://c/counter/alarm?at={START_MS + 1_000}")
    runtime.meter.reset()
    await clock.advance(2_000)
    counter = runtime.meter.usage("Durable Object conformance:Counter")
    assert (counter.alarms, counter.requests) == (1, 1)


async def test_a_cron_is_a_request_and_its_point_and_d1_row_are_counted(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    runtime.meter.reset()
    await clock.advance(5 * 60_000)  # the conformance Worker's */5 cron fires once
    assert runtime.meter.usage("Worker conformance").requests == 1
    assert runtime.meter.usage("Analytics Engine conformance_metrics").analytics_points == 1
    db = runtime.meter.usage("D1 conformance-db")
    assert (db.d1_queries, db.d1_rows_written) == (1, 1)  # cron_log has no index


async def test_queue_delivery_through_the_runtime(runtime: LocalRuntime, clock: VirtualClock) -> None:
    runtime.meter.reset()
    await runtime.fetch("conformance", "http://c/send?n=2")
    await clock.advance(2_000)  # the batch timeout (1 s) passes: one delivery of both
    queue = runtime.meter.usage("Queue jobs")
    assert (queue.queue_writes, queue.queue_reads, queue.queue_deletes) == (2, 2, 2)
    assert runtime.meter.usage("Worker conformance").requests == 1 + 1  # the fetch and the consumer batch
    # Each delivery row: the row and the AUTOINCREMENT counter in sqlite_sequence (an OP_Insert too).
    assert runtime.meter.usage("D1 conformance-db").d1_rows_written == 2 * 2


# -- prices -----------------------------------------------------------------------------------------------------


def test_every_unit_has_a_price_and_a_public_source() -> None:
    units = prices()["units"]
    for name, unit in units.items():
        assert unit["usd_per_million"] > 0, name
        assert unit["source"].startswith("https://developers.cloudflare.com/"), name


def test_dollars_follow_the_billed_units() -> None:
    meter = Meter()
    meter.usage("Worker w").requests = 1_000_000
    meter.usage("Durable Object w:C").requests = 2_000_000
    meter.usage("Queue q").queue_writes = 1_000_000
    units = sum_units(meter.snapshot())
    assert units["worker_requests"] == 1_000_000
    assert units["do_requests"] == 2_000_000
    assert usd(units) == pytest.approx(0.30 + 2 * 0.15 + 0.40)
    assert billed_units({"requests": 5, "service_binding_calls": 9}, "Worker") == {"worker_requests": 5}
