"""The local SQLite refuses what workerd's refuses (ADR-0091), and still runs what the platform runs.

workerd opens every database with ``SqliteDatabase::setupSecurity``: lowered ``sqlite3_limit`` values and an
authorizer (function and pragma allowlists, no ATTACH, no temporary objects, no ``_cf_`` names, no transaction
statements). Where Cloudflare documents a lower limit than workerd's code sets (2,000,000-byte strings and rows
instead of 4 MiB, 32 function arguments instead of 127, for Durable Objects and D1 alike) the lower one holds.
Errors read as workerd's: ``<SQLite message>: <SQLITE_CODE>``.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tsumugi_dev.d1 import D1Database, D1Error, apply_d1_migrations
from tsumugi_dev.do_sql import SqlError, SqlStorage
from tsumugi_dev.do_storage import DurableObjectStorage
from tsumugi_dev.sqlite_limits import TRANSACTION_REFUSED

MIB = 1024 * 1024


@pytest.fixture
def sql() -> Iterator[SqlStorage]:
    with SqlStorage() as storage:
        storage.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT)")
        yield storage


@pytest.fixture
async def d1(tmp_path: Path) -> AsyncIterator[D1Database]:
    with D1Database(tmp_path / "d1.sqlite") as db:
        await db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT)")
        yield db


def _refused(sql: SqlStorage, query: str, *bindings: object) -> str:
    with pytest.raises(SqlError) as caught:
        sql.exec(query, *bindings)
    return str(caught.value)


async def _d1_refused(db: D1Database, query: str, *bindings: object) -> str:
    with pytest.raises(D1Error) as caught:
        await db.prepare(query).bind(*bindings).all()
    return str(caught.value)


# -- Durable Object SQL: limits ------------------------------------------------------------------------------------


def test_sql_text_over_100000_bytes_is_refused_even_split_into_statements(sql: SqlStorage) -> None:
    padded = "SELECT 1 AS one" + " " * (100_000 - len("SELECT 1 AS one"))
    assert sql.exec(padded).one() == {"one": 1}  # exactly 100,000 bytes
    assert _refused(sql, padded + " ") == "statement too long: SQLITE_TOOBIG"
    # Bytes, not characters: 25,004 characters of four-byte emoji.
    assert (
        _refused(sql, "SELECT '" + "\N{GRINNING FACE}" * 25_000 + "'") == "statement too long: SQLITE_TOOBIG"
    )
    # workerd prepares the whole text of exec() at once: two statements of 60,000 bytes are one text too long.
    half = "SELECT 1;" + " " * 59_991
    assert _refused(sql, half + half) == "statement too long: SQLITE_TOOBIG"


def test_a_string_blob_or_row_over_2_000_000_bytes_is_refused(sql: SqlStorage) -> None:
    # workerd's own code allows 4 MiB; Cloudflare documents 2 MB for Durable Object SQL: the lower one holds.
    too_big = "string or blob too big: SQLITE_TOOBIG"
    assert sql.exec("SELECT length(?) AS n", "x" * 2_000_000).one() == {"n": 2_000_000}
    for size in (2_000_001, 4 * MIB + 1):
        assert _refused(sql, "SELECT length(?) AS n", "x" * size) == too_big
    assert _refused(sql, "SELECT zeroblob(?) AS b", 2_000_001) == too_big
    assert _refused(sql, "INSERT INTO t VALUES ('k', ?)", b"\0" * 2_000_001) == too_big
    # A row is one record: two strings of 1,000,000 bytes make a row over the limit.
    assert _refused(sql, "INSERT INTO t VALUES (?, ?)", "k" * 1_000_000, "v" * 1_000_000) == too_big
    assert sql.exec("SELECT count(*) AS n FROM t").one() == {"n": 0}


def test_a_compound_select_takes_at_most_5_terms(sql: SqlStorage) -> None:
    five = " UNION ALL ".join(f"SELECT {n} AS n" for n in range(5))
    assert len(sql.exec(five).toArray()) == 5
    assert _refused(sql, five + " UNION ALL SELECT 5") == "too many terms in compound SELECT: SQLITE_ERROR"


def test_tables_and_results_take_at_most_100_columns(sql: SqlStorage) -> None:
    columns = ", ".join(f"c{n} INTEGER" for n in range(100))
    sql.exec(f"CREATE TABLE wide ({columns})")
    assert (
        _refused(sql, f"CREATE TABLE wider ({columns}, c100 INTEGER)")
        == "too many columns on wider: SQLITE_ERROR"
    )
    results = ", ".join(f"{n} AS c{n}" for n in range(101))
    assert _refused(sql, f"SELECT {results}") == "too many columns in result set: SQLITE_ERROR"


def test_expression_depth_function_arguments_like_patterns_and_program_size_are_capped(
    sql: SqlStorage,
) -> None:
    deep = "SELECT " + " + ".join(["abs(1)"] * 101) + " AS n"
    assert _refused(sql, deep) == "Expression tree is too large (maximum depth 100): SQLITE_ERROR"
    # workerd's code allows 127 arguments; Cloudflare documents 32 for Durable Object SQL: the lower one holds.
    assert sql.exec("SELECT json_array(" + ", ".join(["1"] * 32) + ") AS a").one()["a"].count("1") == 32
    too_many = "SELECT json_array(" + ", ".join(["1"] * 33) + ") AS a"
    assert _refused(sql, too_many) == "too many arguments on function json_array: SQLITE_ERROR"
    assert sql.exec("SELECT ? LIKE ? AS hit", "a" * 50, "a" * 50).one() == {"hit": 1}
    assert (
        _refused(sql, "SELECT ? LIKE ? AS hit", "a", "a" * 51)
        == "LIKE or GLOB pattern too complex: SQLITE_ERROR"
    )
    # Over 25,000 VDBE instructions: SQLite reports it as SQLITE_NOMEM (the driver as MemoryError).
    big_in = "SELECT random() IN (" + ",".join(["1"] * 12_000) + ") AS hit"
    assert _refused(sql, big_in) == "out of memory: SQLITE_NOMEM"


def test_triggers_nest_at_most_10_deep(sql: SqlStorage) -> None:
    sql.exec("CREATE TABLE chain (n INTEGER)")
    sql.exec(
        "CREATE TRIGGER next AFTER INSERT ON chain WHEN new.n < 20 BEGIN INSERT INTO chain VALUES (new.n + 1); END"
    )
    sql.exec("PRAGMA recursive_triggers = ON")
    assert (
        _refused(sql, "INSERT INTO chain VALUES (0)") == "too many levels of trigger recursion: SQLITE_ERROR"
    )
    assert sql.exec("SELECT count(*) AS n FROM chain").one() == {"n": 0}
    sql.exec("INSERT INTO chain VALUES (15)")  # 15 -> 20: five levels
    assert sql.exec("SELECT count(*) AS n FROM chain").one() == {"n": 6}


# -- Durable Object SQL: the authorizer ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "function", ["sqlite_version()", "sqlite_source_id()", "sqlite_compileoption_used('THREADSAFE')"]
)
def test_functions_outside_workerds_allowlist_are_refused(sql: SqlStorage, function: str) -> None:
    name = function.partition("(")[0]
    assert _refused(sql, f"SELECT {function} AS v") == f"not authorized to use function: {name}: SQLITE_ERROR"


def test_attach_temporary_objects_and_cf_names_are_not_authorized(sql: SqlStorage) -> None:
    for query in (
        "ATTACH DATABASE ':memory:' AS other",
        "CREATE TEMP TABLE scratch (a)",
        "CREATE TEMPORARY VIEW v AS SELECT 1",
        "CREATE TABLE _cf_mine (a)",
        "CREATE TABLE _CF_Mine (a)",
        "CREATE INDEX _cf_index ON t (v)",
        "CREATE VIRTUAL TABLE v USING json_each",
    ):
        assert _refused(sql, query) == "not authorized: SQLITE_AUTH", query


def test_the_runtimes_own_cf_table_is_out_of_the_applications_reach(tmp_path: Path) -> None:
    class Listener:
        def now_ms(self) -> int:
            return 0

        def alarm_may_be_set(self, alarm_at: int) -> None: ...
        def alarm_committed(self, alarm_at: int | None) -> None: ...

    storage = DurableObjectStorage(tmp_path / "object.sqlite", Listener())
    try:
        storage.store_alarm(1_000)
        assert storage.stored_alarm() == (1_000, 0)  # the runtime reads it (workerd's trusted statements)
        read = _refused(storage.sql, "SELECT scheduled_at FROM _cf_alarm")
        assert (
            read == "access to _cf_alarm.scheduled_at is prohibited: SQLITE_AUTH"
        )  # SQLite's words for a read
        for query in (
            "DELETE FROM _cf_alarm",
            "DROP TABLE _cf_alarm",
            "INSERT INTO _cf_alarm VALUES (2, 0, 0)",
        ):
            assert _refused(storage.sql, query) == "not authorized: SQLITE_AUTH", query
        # The row itself (stored_alarm() answers from memory once read): none of the refused writes touched it.
        rows = storage.sql.runtime_exec("SELECT id, scheduled_at, retry_count FROM _cf_alarm").toArray()
        assert [dict(r) for r in rows] == [{"id": 1, "scheduled_at": 1_000, "retry_count": 0}]
        assert storage.stored_alarm() == (1_000, 0)
    finally:
        storage.sql.close()


def test_pragmas_outside_the_allowlist_are_refused_even_ones_the_runtime_ran_itself(sql: SqlStorage) -> None:
    # The runtime sets these up before the authorizer; the same text from the application is refused.
    for query in (
        "PRAGMA journal_mode=MEMORY",
        "PRAGMA synchronous=NORMAL",
        "PRAGMA page_count",
        "PRAGMA page_size=512",
        "PRAGMA writable_schema=ON",
        "PRAGMA FOREIGN_KEYS=ON",
        "PRAGMA foreign_keys=maybe",
        "PRAGMA optimize(abc)",
        "PRAGMA index_list",
    ):
        assert _refused(sql, query) == "not authorized: SQLITE_AUTH", query
    assert sql.databaseSize > 0  # the runtime's own size pragmas still run


def test_a_transaction_statement_is_refused_however_it_is_spelt(sql: SqlStorage) -> None:
    for query in ("BEGIN", "/* hidden */ BEGIN TRANSACTION", "/* c */ SAVEPOINT s", "/* c */ COMMIT"):
        assert _refused(sql, query) == TRANSACTION_REFUSED, query
    assert sql.transaction_sync(lambda: sql.exec("INSERT INTO t VALUES ('in', 'tx')").rowsWritten) == 1


def test_defensive_mode_is_on_where_the_driver_can_set_it(sql: SqlStorage) -> None:
    connection: sqlite3.Connection = sql._conn  # pyright: ignore[reportPrivateUsage]
    if sys.version_info >= (3, 12):
        assert connection.getconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE) is True
    else:  # 3.11's sqlite3 has no setconfig: the gap ADR-0091 records
        assert not hasattr(connection, "setconfig")


# -- Durable Object SQL: what the platform allows still runs -------------------------------------------------------


def test_allowed_sql_still_runs(sql: SqlStorage) -> None:
    marks = ", ".join("(?, ?)" for _ in range(50))
    values = [x for n in range(50) for x in (f"k{n}", f"v{n}")]
    assert sql.exec(f"INSERT INTO t (k, v) VALUES {marks}", *values).rowsWritten == 50  # 100 binds
    assert sql.exec("SELECT value FROM json_each(?) ORDER BY value", "[3, 1, 2]").toArray() == [
        {"value": 1},
        {"value": 2},
        {"value": 3},
    ]
    assert sql.exec("SELECT json_extract(?, '$.a.b') AS x", '{"a": {"b": 7}}').one() == {"x": 7}
    assert sql.exec("SELECT ? ->> '$.a' AS x", '{"a": "y"}').one() == {"x": "y"}
    sql.exec("CREATE TABLE patch (k TEXT PRIMARY KEY, v TEXT)")
    sql.exec("INSERT INTO patch VALUES ('k1', 'new')")
    assert sql.exec("UPDATE t SET v = patch.v FROM patch WHERE t.k = patch.k").rowsWritten == 1
    counted = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10) SELECT sum(i) AS s FROM n"
    assert sql.exec(counted).one() == {"s": 55}
    ranked = "SELECT k, row_number() OVER (ORDER BY k DESC) AS r FROM t WHERE k IN ('k1', 'k2') ORDER BY r"
    assert [row["k"] for row in sql.exec(ranked)] == ["k2", "k1"]
    sql.exec("INSERT INTO t VALUES ('k1', 'again') ON CONFLICT (k) DO UPDATE SET v = excluded.v")
    assert sql.exec("SELECT v FROM t WHERE k = 'k1'").one() == {"v": "again"}
    for query in (
        "PRAGMA foreign_keys = ON",
        "PRAGMA table_info(t)",
        "PRAGMA table_list",
        "PRAGMA index_list(t)",
        "PRAGMA quick_check",
        "PRAGMA optimize",
        "PRAGMA data_version",
        "PRAGMA page_size",
    ):
        sql.exec(query)
    assert [r["name"] for r in sql.exec("SELECT name FROM pragma_table_info('t')")] == ["k", "v"]
    assert sql.exec("SELECT count(*) AS n FROM sqlite_master WHERE name = 't'").one() == {"n": 1}
    sql.exec("ALTER TABLE patch ADD COLUMN note TEXT")
    sql.exec("ALTER TABLE patch RENAME COLUMN note TO remark")
    sql.exec("CREATE INDEX t_v ON t (v)")
    sql.exec("DROP TABLE patch")
    assert sql.exec("SELECT typeof(unixepoch('2026-01-01')) AS t, printf('%05d', 42) AS p").one() == {
        "t": "integer",
        "p": "00042",
    }


# -- D1 ------------------------------------------------------------------------------------------------------------


async def test_d1_caps_strings_at_2_000_000_bytes_and_functions_at_32_arguments(d1: D1Database) -> None:
    assert await d1.prepare("SELECT length(?) AS n").bind("x" * 2_000_000).first("n") == 2_000_000
    refused = await _d1_refused(d1, "SELECT length(?) AS n", "x" * 2_000_001)
    assert refused == "D1_ERROR: string or blob too big: SQLITE_TOOBIG"
    assert await d1.prepare("SELECT json_array(" + ", ".join(["1"] * 32) + ") AS a").first("a")
    refused = await _d1_refused(d1, "SELECT json_array(" + ", ".join(["1"] * 33) + ") AS a")
    assert refused == "D1_ERROR: too many arguments on function json_array: SQLITE_ERROR"


async def test_d1_applies_workerds_other_limits_and_authorizer(d1: D1Database) -> None:
    assert await _d1_refused(d1, "SELECT ?101 AS v") == (
        "D1_ERROR: variable number must be between ?1 and ?100: SQLITE_ERROR"
    )
    assert await _d1_refused(d1, "SELECT 1" + " " * 100_000) == "D1_ERROR: statement too long: SQLITE_TOOBIG"
    six = " UNION ALL ".join(f"SELECT {n}" for n in range(6))
    assert await _d1_refused(d1, six) == "D1_ERROR: too many terms in compound SELECT: SQLITE_ERROR"
    for query in (
        "ATTACH DATABASE ':memory:' AS other",
        "BEGIN TRANSACTION",
        "CREATE TEMP TABLE x (a)",
        "CREATE TABLE _cf_x (a)",
        "PRAGMA journal_mode=DELETE",
    ):
        assert await _d1_refused(d1, query) == "D1_ERROR: not authorized: SQLITE_AUTH", query
    name = await _d1_refused(d1, "SELECT sqlite_version()")
    assert name == "D1_ERROR: not authorized to use function: sqlite_version: SQLITE_ERROR"
    with pytest.raises(D1Error, match="not authorized: SQLITE_AUTH"):
        await d1.exec("CREATE TABLE ok (a); ATTACH DATABASE ':memory:' AS other")


async def test_d1_still_runs_batches_exec_and_allowed_sql(d1: D1Database) -> None:
    insert = d1.prepare("INSERT INTO t (k, v) VALUES (?, ?)")
    results = await d1.batch([insert.bind("a", "1"), insert.bind("b", "2")])  # the runtime's own transaction
    assert [r.meta.changes for r in results] == [1, 1]
    assert (
        await d1.prepare("SELECT k FROM t, json_each(?) AS j WHERE j.value = t.v").bind('["2"]').all()
    ).results == [{"k": "b"}]
    assert await d1.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").raw() == [["t"]]
    # exec runs every statement of each line and counts lines, as workerd's D1 API does (d1-api.ts)
    assert (await d1.exec("PRAGMA foreign_keys = OFF; PRAGMA table_info(t)")).count == 1
    assert b"CREATE TABLE t" in d1.dump()
    assert await d1.prepare("SELECT count(*) AS n FROM t").first("n") == 2


async def test_d1_migrations_are_checked_as_d1_checks_them(tmp_path: Path) -> None:
    migrations = tmp_path / "migrations"
    migrations.mkdir()
    (migrations / "0001_ok.sql").write_text("CREATE TABLE job (id TEXT PRIMARY KEY);\n")
    (migrations / "0002_temp.sql").write_text("CREATE TABLE kept (a);\nCREATE TEMP TABLE scratch (a);\n")
    with D1Database(tmp_path / "db.sqlite") as db:
        with pytest.raises(D1Error, match=r"migration 0002_temp.sql failed: not authorized: SQLITE_AUTH"):
            apply_d1_migrations(db, migrations)
        assert [r[0] for r in db.connection.execute("SELECT name FROM d1_migrations")] == ["0001_ok.sql"]
        tables = {r[0] for r in db.connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "kept" not in tables
