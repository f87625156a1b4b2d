"""The run projection: the newest outbox row of each run and node, node rows built by SQLite reaching the
D1 read model in bounded chunks, the seq guard, and errors cut as for jobs."""

from __future__ import annotations

from pathlib import Path

from tsumugi_core.options import MAX_ERROR_CHARS
from tsumugi_dev.d1 import D1Database, apply_d1_migrations
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.run.projection import NODES_PER_TEXT, latest, node_rows, project_runs
from tsumugi_scheduler.run.store import RunStore


def test_only_the_newest_snapshot_of_each_target_is_sent() -> None:
    rows = [
        {"seq": 1, "kind": "node", "target": "a", "snapshot": "a1"},
        {"seq": 2, "kind": "run", "target": "r", "snapshot": "r1"},
        {"seq": 3, "kind": "node", "target": "b", "snapshot": "b1"},
        {"seq": 4, "kind": "node", "target": "a", "snapshot": "a2"},
        {"seq": 5, "kind": "run", "target": "r", "snapshot": "r2"},
    ]
    assert [r["snapshot"] for r in latest(rows)] == ["b1", "a2", "r2"]


def migrated_d1(folder: Path) -> D1Database:
    db = D1Database(folder / "readmodel.sqlite")
    apply_d1_migrations(db, Path(__file__).resolve().parents[3] / "migrations")
    return db


def _run_store(storage: SqlStorage, count: int, error: str | None = None) -> RunStore:
    store = RunStore(storage)
    rows = [{"id": f"each:{i}", "payload": "null", "options": "{}", "seq": 1 + i} for i in range(count)]
    store.insert_nodes(rows, {"binding": "Hello", "state": "FAILED", "container": 0, "parent": "each",
                              "origin": "fanOut", "after": "[]", "error": error, "created_at": 5,
                              "updated_at": 6})  # fmt: skip
    return store


async def _project(storage: SqlStorage, d1: D1Database, seqs: dict[str, int]) -> None:
    await project_runs(d1, node_rows(storage, "fan:r", seqs), None)


async def test_node_rows_reach_the_read_model_in_chunks_and_an_older_snapshot_never_wins(tmp_path: Path) -> None:
    d1 = migrated_d1(tmp_path)
    with SqlStorage() as storage:
        count = NODES_PER_TEXT * 2 + 1
        _run_store(storage, count)
        assert len(node_rows(storage, "fan:r", {f"each:{i}": 10 for i in range(count)})) == 3
        await _project(storage, d1, {f"each:{i}": 10 for i in range(count)})
        storage.exec("UPDATE node SET state = 'COMPLETED' WHERE id = 'each:0'")
        await _project(storage, d1, {"each:0": 9})  # an older outbox row replayed: changes nothing
        rows = (await d1.prepare("SELECT * FROM run_node WHERE run_id = 'fan:r' ORDER BY position").all()).results
        assert len(rows) == count
        assert {k: rows[0][k] for k in ("node_id", "seq", "state", "binding", "parent", "origin", "position")} == {
            "node_id": "each:0", "seq": 10, "state": "FAILED", "binding": "Hello", "parent": "each",
            "origin": "fanOut", "position": 1}  # fmt: skip
        await _project(storage, d1, {"each:0": 11})
        row = await d1.prepare("SELECT state, seq FROM run_node WHERE node_id = 'each:0'").first()
        assert dict(row or {}) == {"state": "COMPLETED", "seq": 11}
    d1.close()


async def test_a_long_node_error_is_cut_for_the_read_model(tmp_path: Path) -> None:
    d1 = migrated_d1(tmp_path)
    with SqlStorage() as storage:
        _run_store(storage, 1, error="x" * (MAX_ERROR_CHARS * 3))
        await _project(storage, d1, {"each:0": 1})
        row = await d1.prepare("SELECT error FROM run_node WHERE node_id = 'each:0'").first()
        assert row is not None and row["error"] == "x" * MAX_ERROR_CHARS
    d1.close()
