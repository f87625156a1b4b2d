"""D1 and Analytics Engine on the local runtime."""

from __future__ import annotations

import asyncio

import pytest
from pyodide.ffi import JsException
from workers.rpc import JsDict

from tsumugi_dev.analytics import AnalyticsEngineDataset, AnalyticsStore
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.d1 import D1Database, D1Error, apply_d1_migrations
from tsumugi_dev.runtime import LocalRuntime


async def test_d1_crud_with_sdk_shaped_results(runtime: LocalRuntime) -> None:
    db = runtime.env("conformance").DB
    inserted = await db.prepare("INSERT INTO item (name, score) VALUES (?, ?)").bind("a", 1.5).run()
    assert inserted.success is True
    assert inserted.meta.changes == 1
    assert inserted.meta.last_row_id == 1
    assert set(inserted.meta) == {
        "changed_db",
        "changes",
        "duration",
        "last_row_id",
        "rows_read",
        "rows_written",
        "served_by",
        "size_after",
    }
    await db.prepare("INSERT INTO item (name, score) VALUES (?, ?)").bind("b", 2.0).run()
    everything = await db.prepare("SELECT id, name, score FROM item ORDER BY id").all()
    assert everything.results == [{"id": 1, "name": "a", "score": 1.5}, {"id": 2, "name": "b", "score": 2}]
    assert isinstance(everything.results[0], JsDict)
    assert type(everything.results[1].score) is int
    assert await db.prepare("SELECT count(*) AS n FROM item").first() == {"n": 2}
    assert await db.prepare("SELECT name FROM item WHERE id = ?").bind(2).first("name") == "b"
    assert await db.prepare("SELECT name FROM item WHERE id = 9").first() is None
    assert await db.prepare("SELECT id, name FROM item ORDER BY id").raw() == [[1, "a"], [2, "b"]]
    assert (await db.prepare("SELECT id FROM item LIMIT 1").raw(columnNames=True)) == [["id"], [1]]
    await db.prepare("UPDATE item SET score = ? WHERE name = ?").bind(None, "a").run()
    deleted = await db.prepare("DELETE FROM item WHERE name = ?").bind("b").run()
    assert deleted.meta.changes == 1
    assert (await db.prepare("SELECT name, score FROM item").all()).results == [{"name": "a", "score": None}]


async def test_d1_batch_rolls_back_as_a_whole(runtime: LocalRuntime) -> None:
    db = runtime.env("conformance").DB
    insert = db.prepare("INSERT INTO item (name) VALUES (?)")
    results = await db.batch([insert.bind("x"), insert.bind("y")])
    assert [r.meta.changes for r in results] == [1, 1]
    with pytest.raises(JsException, match="UNIQUE constraint failed"):
        await db.batch([insert.bind("z"), insert.bind("x")])
    names = await db.prepare("SELECT name FROM item ORDER BY name").raw()
    assert names == [["x"], ["y"]]


async def test_d1_refuses_unsupported_bindings_and_bad_sql(runtime: LocalRuntime) -> None:
    db = runtime.env("conformance").DB
    with pytest.raises(JsException, match="D1_TYPE_ERROR"):
        db.prepare("SELECT ?").bind({"a": 1})
    with pytest.raises(JsException, match="D1_ERROR"):
        await db.prepare("SELEKT 1").all()
    assert (await db.exec("CREATE TABLE t1 (x);\nINSERT INTO t1 VALUES (1);")).count == 2


async def test_d1_migrations_use_the_wrangler_ledger(runtime: LocalRuntime, tmp_path) -> None:
    ledger = runtime.d1("conformance-db").connection.execute("SELECT name FROM d1_migrations").fetchall()
    assert ledger == [("0001_init.sql",)]
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "0001_a.sql").write_text("CREATE TABLE a (x);")
    (folder / "0002_b.sql").write_text("CREATE TABLE b (x); -- trailing comment")
    with D1Database(":memory:") as db:
        assert apply_d1_migrations(db, folder) == ["0001_a.sql", "0002_b.sql"]
        assert apply_d1_migrations(db, folder) == []
        (folder / "0003_bad.sql").write_text("CREATE TABLE c (x); CREATE TABLE a (y);")
        with pytest.raises(D1Error, match=r"0003_bad\.sql"):
            apply_d1_migrations(db, folder)
        tables = {r[0] for r in db.connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "c" not in tables  # the failed file left nothing behind


async def test_analytics_write_and_read(runtime: LocalRuntime, clock: VirtualClock) -> None:
    metrics = runtime.env("conformance").METRICS
    metrics.writeDataPoint({"blobs": ["MAIL", "COMPLETED"], "doubles": [120.0, 1], "indexes": ["MAIL"]})
    await clock.advance(60_000)
    metrics.writeDataPoint({"blobs": ["MAIL", "FAILED"], "doubles": [80.0, 1], "indexes": ["MAIL"]})
    metrics.writeDataPoint({"blobs": ["SMS", "COMPLETED"], "doubles": [10.0, 1], "indexes": ["SMS"]})
    rows = runtime.analytics.query(
        "SELECT blob1 AS binding, sum(_sample_interval) AS n, avg(double1) AS avg_ms, "
        "sum(IIF(blob2 = 'FAILED', 1, 0)) AS failed FROM conformance_metrics "
        f"WHERE timestamp_ms >= {clock.now_ms() - 3_600_000} GROUP BY blob1 ORDER BY blob1"
    )
    assert rows == [
        {"binding": "MAIL", "n": 2, "avg_ms": 100.0, "failed": 1},
        {"binding": "SMS", "n": 1, "avg_ms": 10.0, "failed": 0},
    ]
    stamps = runtime.analytics.query(
        "SELECT timestamp, timestamp_ms FROM conformance_metrics ORDER BY timestamp_ms"
    )
    assert stamps[0]["timestamp_ms"] == clock.now_ms() - 60_000
    assert stamps[0]["timestamp"] == "2026-01-01 00:00:00"


def test_analytics_rejects_points_cloudflare_rejects(clock: VirtualClock) -> None:
    with AnalyticsStore(":memory:", clock) as store:
        dataset = AnalyticsEngineDataset(store, "ds")
        # workerd's texts (tests/shapes/workerd-shapes.json, analytics_engine.cases)
        with pytest.raises(ValueError, match=r"^writeDataPoint\(\): Maximum of 20 blobs supported\.$"):
            dataset.writeDataPoint({"blobs": ["x"] * 21})
        with pytest.raises(ValueError, match=r"^writeDataPoint\(\): Maximum of 1 indexes supported\.$"):
            dataset.writeDataPoint({"indexes": ["a", "b"]})
        with pytest.raises(TypeError, match=r"doubles\[0\] must be a number"):
            dataset.writeDataPoint({"doubles": ["1"]})
        with pytest.raises(TypeError, match="unknown field"):
            dataset.writeDataPoint({"blob": ["x"]})
        with pytest.raises(ValueError, match="only SELECT"):
            store.query("DELETE FROM data_point")


async def test_analytics_points_of_one_loop_step_are_stored_together_and_survive_close(
    clock: VirtualClock, tmp_path
) -> None:
    path = tmp_path / "analytics.sqlite"
    store = AnalyticsStore(path, clock)
    dataset = AnalyticsEngineDataset(store, "ds")
    statements: list[str] = []
    store._conn.set_trace_callback(statements.append)  # pyright: ignore[reportPrivateUsage]
    for n in range(50):
        dataset.writeDataPoint({"blobs": [f"b{n}"], "doubles": [float(n)]})
    assert not any(s.startswith("INSERT") for s in statements)  # buffered until the step ends
    await asyncio.sleep(0)  # the step ends: one transaction holds all 50
    assert [s for s in statements if s in ("BEGIN IMMEDIATE", "COMMIT")] == ["BEGIN IMMEDIATE", "COMMIT"]
    dataset.writeDataPoint({"blobs": ["last"]})
    assert store.query("SELECT count(*) AS n FROM ds") == [{"n": 51}]  # a read sees every write so far
    dataset.writeDataPoint({"blobs": ["after close"]})
    store.close()  # what is still buffered is stored before the file closes
    with AnalyticsStore(path, clock) as reopened:
        assert reopened.query("SELECT count(*) AS n, max(blob1) AS top FROM ds") == [{"n": 52, "top": "last"}]
        assert reopened.query("SELECT double1, blob2 FROM ds WHERE blob1 = 'b7'") == [
            {"double1": 7.0, "blob2": None}
        ]
