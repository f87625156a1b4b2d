"""The run projection: each node the outbox names reaches the D1 read model once per batch, as it is then,
with the seq of its newest outbox row; rows are built by SQLite in bounded chunks; the seq guard keeps an
older row from winning; errors are cut as a job's are."""

from __future__ import annotations

from pathlib import Path

import msgspec

from tsumugi_core.options import MAX_ERROR_CHARS
from tsumugi_dev.d1 import D1Database, apply_d1_migrations
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.api.runs import _node  # pyright: ignore[reportPrivateUsage]
from tsumugi_scheduler.run.projection import node_rows, project_runs
from tsumugi_scheduler.run.sql_store import OutboxBatch, SqlRunStore


def migrated_d1(folder: Path) -> D1Database:
    db = D1Database(folder / "readmodel.sqlite")
    apply_d1_migrations(db, Path(__file__).resolve().parents[3] / "migrations")
    return db


def opened(storage: SqlStorage) -> SqlRunStore:
    store = SqlRunStore(storage)
    store.create()
    return store


def run_store(storage: SqlStorage, count: int, error: str | None = None) -> SqlRunStore:
    store = opened(storage)
    rows = [{"id": f"each:{i}", "payload": "null", "options": "{}", "seq": 1 + i} for i in range(count)]
    store.insert_nodes(
        rows,
        {
            "binding": "Hello",
            "state": "FAILED",
            "container": 0,
            "parent": "each",
            "origin": "fanOut",
            "after": "[]",
            "error": error,
            "created_at": 5,
            "updated_at": 6,
        },
    )
    return store


async def project(store: SqlRunStore, d1: D1Database) -> OutboxBatch | None:
    batch = store.outbox_batch(10_000)
    if batch is not None:
        await project_runs(d1, node_rows(store.sql, "fan:r", batch.up_to_seq), None)
        store.ack(batch.up_to_seq)
    return batch


async def read(d1: D1Database, node_id: str) -> dict[str, object]:
    row = (
        await d1.prepare("SELECT * FROM run_node WHERE run_id = 'fan:r' AND node_id = ?")
        .bind(node_id)
        .first()
    )
    return dict(row or {})


def test_a_batch_names_each_node_once_with_its_newest_seq_and_the_run_when_named() -> None:
    with SqlStorage() as storage:
        store = run_store(storage, 3)
        store.outbox_nodes(["each:0", "each:1"])
        store.outbox_run("fan:r")
        store.outbox_nodes(["each:1"])
        assert store.outbox_batch(100) == OutboxBatch(rows=4, first_seq=1, up_to_seq=4, run_seq=3)
        assert store.outbox_batch(2) == OutboxBatch(rows=2, first_seq=1, up_to_seq=2, run_seq=None)
        [text] = node_rows(storage, "fan:r", 4)
        assert text.count('"each:') == 2
        assert '"each:1",4,' in text  # the newest of each:1's rows
        store.ack(4)
        assert store.outbox_batch(100) is None


async def test_node_rows_reach_the_read_model_in_chunks_and_an_older_row_never_wins(tmp_path: Path) -> None:
    d1 = migrated_d1(tmp_path)
    with SqlStorage() as storage:
        count = 301
        store = run_store(storage, count)
        store.outbox_nodes(f"each:{i}" for i in range(count))
        pages = node_rows(storage, "fan:r", count, page_bytes=20_000)
        assert len(pages) > 1
        assert all(
            len(p.encode()) < 20_000 + 1_000 for p in pages
        )  # a page passes the bound by one row at most
        assert sorted(row[1] for p in pages for row in msgspec.json.decode(p)) == sorted(
            f"each:{i}" for i in range(count)
        )
        await project(store, d1)
        rows = (
            await d1.prepare("SELECT * FROM run_node WHERE run_id = 'fan:r' ORDER BY position").all()
        ).results
        assert len(rows) == count
        first = await read(d1, "each:0")
        assert {
            k: first[k] for k in ("seq", "state", "binding", "parent", "origin", "position", "after")
        } == {
            "seq": 1,
            "state": "FAILED",
            "binding": "Hello",
            "parent": "each",
            "origin": "fanOut",
            "position": 1,
            "after": "[]",
        }

        storage.exec("UPDATE node SET state = 'COMPLETED' WHERE id = 'each:0'")
        assert node_rows(storage, "fan:r", 0) == []  # nothing named up to seq 0
        store.outbox_nodes(["each:0"])
        await project(store, d1)
        assert (await read(d1, "each:0"))["state"] == "COMPLETED"
        storage.exec("UPDATE node SET state = 'FAILED' WHERE id = 'each:0'")
        storage.exec(
            "INSERT INTO run_outbox (seq, kind, target) VALUES (2, 'node', 'each:0')"
        )  # a replayed row
        await project(store, d1)
        assert (await read(d1, "each:0"))["state"] == "COMPLETED"
    d1.close()


async def test_a_long_node_error_is_cut_for_the_read_model(tmp_path: Path) -> None:
    d1 = migrated_d1(tmp_path)
    with SqlStorage() as storage:
        store = run_store(storage, 1, error="x" * (MAX_ERROR_CHARS * 3))
        store.outbox_nodes(["each:0"])
        await project(store, d1)
        assert (await read(d1, "each:0"))["error"] == "x" * MAX_ERROR_CHARS
    d1.close()


async def test_the_api_gives_a_nodes_times_once_known_and_leaves_them_out_before(tmp_path: Path) -> None:
    d1 = migrated_d1(tmp_path)
    with SqlStorage() as storage:
        store = run_store(storage, 2)
        store.update_node("each:0", state="SCHEDULED", updated_at=7)
        store.update_node("each:1", state="PENDING", updated_at=7)
        store.outbox_nodes(["each:0", "each:1"])
        await project(store, d1)
        rows = (await d1.prepare("SELECT * FROM run_node ORDER BY position").all()).results
        encoded = [msgspec.json.decode(msgspec.json.encode(_node(row))) for row in rows]
        assert (encoded[0]["scheduled_at"], encoded[0]["finished_at"]) == (7, None)
        assert "scheduled_at" not in encoded[1]  # neither known: the waterfall infers (ADR-0070)
        assert "finished_at" not in encoded[1]
    d1.close()
