"""``recorder/sql.js`` run on the local runtime's JS-side Durable Object storage, case for case.

Each function does what its JavaScript namesake does, in the same order (the counters and the rows depend on
it), and answers the same keys, so its result compares with the record's ``durable_object_sql`` section.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jsemu.core import JsCallable, JsException, js_error
from jsemu.promise import JsPromise

from tests.shapes.js_describe import describe
from tests.shapes.js_side import (
    UNDEFINED,
    JsBigIntValue,
    array_buffer,
    call,
    date,
    get,
    js_value,
    jsnull,
    outcome,
    outcome_async,
    safe,
    settle,
    uint8,
)

TYPES_DDL = "CREATE TABLE types (i INTEGER, r REAL, s TEXT, b BLOB, n)"
TYPES_ROW = "INSERT INTO types VALUES (1, 2.5, 'text 日本 🎉', x'00ff10', NULL)"


def _counted(exec_: Any, sql: str, *bindings: Any) -> dict[str, Any]:
    cursor = exec_(sql, *bindings)
    rows = call(cursor, "toArray")
    return {
        "sql": sql,
        "rows": describe(rows),
        "columnNames": describe(get(cursor, "columnNames")),
        "rowsRead": get(cursor, "rowsRead"),
        "rowsWritten": get(cursor, "rowsWritten"),
    }


def _iterate(value: Any) -> list[Any]:
    """``for (const x of value)``: the JS side's iteration (Symbol.iterator stands as ``__iter__``)."""
    return list(iter(value))


def cursor_section(sql: Any) -> dict[str, Any]:
    def exec_(query: str, *bindings: Any) -> Any:
        return call(sql, "exec", query, *bindings)

    exec_(TYPES_DDL)
    exec_(TYPES_ROW)
    exec_("INSERT INTO types VALUES (9007199254740991, -0.5, '', x'', NULL)")
    out: dict[str, Any] = {}

    fresh = exec_("SELECT i, r, s, b, n FROM types ORDER BY rowid")
    out["cursor_before_reading"] = safe(lambda: describe(fresh))
    out["cursor_is_iterable"] = hasattr(type(fresh), "__iter__")
    probe = exec_("SELECT i FROM types")  # iterating reads rows: a cursor of its own
    out["cursor_iterator_is_itself"] = iter(probe) is probe
    out["next_first"] = safe(lambda: describe(call(fresh, "next")))
    out["next_second"] = safe(lambda: describe(call(fresh, "next")))
    out["next_after_end"] = safe(lambda: describe(call(fresh, "next")))
    out["next_again_after_end"] = safe(lambda: describe(call(fresh, "next")))
    out["cursor_after_reading"] = safe(lambda: describe(fresh))

    out["toArray"] = safe(
        lambda: describe(call(exec_("SELECT i, r, s, b, n FROM types ORDER BY rowid"), "toArray"))
    )
    partial = exec_("SELECT i FROM types ORDER BY rowid")
    call(partial, "next")
    out["toArray_after_one_next"] = safe(lambda: describe(call(partial, "toArray")))

    out["for_of_rows"] = safe(
        lambda: describe(js_value(_iterate(exec_("SELECT i, s FROM types ORDER BY rowid"))))
    )

    out["one_of_one_row"] = outcome(lambda: call(exec_("SELECT i, r, s, b, n FROM types WHERE i = 1"), "one"))
    out["one_of_no_row"] = outcome(lambda: call(exec_("SELECT i FROM types WHERE i = 0"), "one"))
    out["one_of_two_rows"] = outcome(lambda: call(exec_("SELECT i FROM types"), "one"))
    out["one_of_insert"] = outcome(lambda: call(exec_("INSERT INTO types (i) VALUES (3)"), "one"))
    exec_("DELETE FROM types WHERE i = 3")

    raw = call(exec_("SELECT i, s, n FROM types ORDER BY rowid"), "raw")
    out["raw_iterator"] = safe(lambda: describe(raw))
    out["raw_is_iterable"] = hasattr(type(raw), "__iter__")
    out["raw_next"] = safe(lambda: describe(call(raw, "next")))
    out["raw_toArray_rest"] = safe(lambda: describe(call(raw, "toArray")))
    out["raw_toArray"] = safe(
        lambda: describe(call(call(exec_("SELECT i, s, n FROM types ORDER BY rowid"), "raw"), "toArray"))
    )
    out["raw_for_of"] = safe(
        lambda: describe(js_value(_iterate(call(exec_("SELECT i FROM types ORDER BY rowid"), "raw"))))
    )

    out["duplicate_column_names"] = safe(lambda: describe(call(exec_("SELECT 1 AS a, 2 AS a"), "toArray")))
    out["duplicate_column_names_raw"] = safe(
        lambda: describe(call(call(exec_("SELECT 1 AS a, 2 AS a"), "raw"), "toArray"))
    )
    out["columnNames_select"] = safe(
        lambda: describe(get(exec_("SELECT i AS first, s FROM types"), "columnNames"))
    )
    out["columnNames_expression"] = safe(
        lambda: describe(get(exec_("SELECT 1 + 1, count(*) FROM types"), "columnNames"))
    )
    out["columnNames_insert"] = safe(
        lambda: describe(get(exec_("INSERT INTO types (i) VALUES (4)"), "columnNames"))
    )
    exec_("DELETE FROM types WHERE i = 4")
    out["columnNames_ddl"] = safe(
        lambda: describe(get(exec_("CREATE TABLE IF NOT EXISTS empty (x)"), "columnNames"))
    )
    out["empty_select_toArray"] = safe(lambda: describe(call(exec_("SELECT x FROM empty"), "toArray")))
    out["empty_select_columnNames"] = safe(lambda: describe(get(exec_("SELECT x FROM empty"), "columnNames")))

    def rows(query: str) -> Any:
        return call(exec_(query), "toArray")

    def one(query: str) -> Any:
        return call(exec_(query), "one")

    out["integer_past_2_53_literal"] = outcome(lambda: rows("SELECT 9007199254740993 AS v"))
    out["integer_2_63_minus_1_literal"] = outcome(lambda: rows("SELECT 9223372036854775807 AS v"))
    out["integer_2_53_minus_1"] = outcome(lambda: one("SELECT 9007199254740991 AS v"))
    out["real_values"] = outcome(lambda: one("SELECT 0.1 AS a, 1e300 * 1e300 AS inf, 1.0 AS whole"))
    out["integer_division"] = outcome(lambda: one("SELECT 7 / 2 AS a, 7 / 2.0 AS b"))
    out["typeof_columns"] = outcome(
        lambda: one(
            "SELECT typeof(i) AS ti, typeof(r) AS tr, typeof(s) AS ts, typeof(b) AS tb, typeof(n) AS tn "
            "FROM types WHERE i = 1"
        )
    )

    def bound(value: Any) -> dict[str, Any]:
        return outcome(lambda: call(exec_("SELECT ? AS v, typeof(?) AS t", value, value), "one"))

    out["bind"] = {
        "null": bound(jsnull),
        "undefined": bound(UNDEFINED),
        "true": bound(True),
        "false": bound(False),
        "integer": bound(42),
        "negative_zero": bound(-0.0),
        "float": bound(0.5),
        "whole_float": bound(3.0),
        "integer_past_2_53": bound(float(2**53 + 2)),
        "nan": bound(float("nan")),
        "infinity": bound(float("inf")),
        "string": bound("text 日本 🎉"),
        "empty_string": bound(""),
        "bigint": bound(JsBigIntValue(5)),
        "bigint_past_2_63": bound(JsBigIntValue(2**64)),
        "uint8array": bound(uint8(0, 255, 16)),
        "arraybuffer": bound(array_buffer(1, 2)),
        "date": bound(date(0)),
        "object": bound(js_value({"a": 1})),
        "array": bound(js_value([1, 2])),
    }
    out["bind_too_few"] = outcome(lambda: call(exec_("SELECT ? AS a, ? AS b", 1), "one"))
    out["bind_too_many"] = outcome(lambda: call(exec_("SELECT ? AS a", 1, 2), "one"))
    out["bind_numbered"] = outcome(lambda: call(exec_("SELECT ?2 AS a, ?1 AS b", "one", "two"), "one"))
    out["bind_named"] = outcome(lambda: call(exec_("SELECT :x AS a", 1), "one"))

    def not_null() -> Any:
        exec_("CREATE TABLE IF NOT EXISTS strict_t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)")
        return exec_("INSERT INTO strict_t (k, v) VALUES ('a', NULL)")

    def unique() -> Any:
        exec_("INSERT INTO strict_t (k, v) VALUES ('u', 1)")
        return exec_("INSERT INTO strict_t (k, v) VALUES ('u', 2)")

    out["errors"] = {
        "syntax": outcome(lambda: exec_("SELEC 1")),
        "no_such_table": outcome(lambda: exec_("SELECT * FROM missing")),
        "no_such_column": outcome(lambda: exec_("SELECT missing FROM types")),
        "not_null": outcome(not_null),
        "unique": outcome(unique),
        "begin_transaction": outcome(lambda: exec_("BEGIN TRANSACTION")),
        "savepoint": outcome(lambda: exec_("SAVEPOINT s")),
        "pragma_not_allowed": outcome(lambda: exec_("PRAGMA journal_mode")),
        "empty_statement": outcome(lambda: exec_("")),
        "sqlite_master_write": outcome(lambda: exec_("DELETE FROM sqlite_master")),
        "underscore_cf_table": outcome(lambda: exec_("CREATE TABLE _cf_mine (x)")),
    }
    out["multiple_statements"] = outcome(
        lambda: rows(
            "CREATE TABLE IF NOT EXISTS multi (x); INSERT INTO multi VALUES (1); SELECT x FROM multi"
        )
    )
    multi = exec_(
        "INSERT INTO multi VALUES (2); INSERT INTO multi VALUES (3); SELECT count(*) AS n FROM multi"
    )
    out["multiple_statements_counts"] = {
        "rows": describe(call(multi, "toArray")),
        "rowsRead": get(multi, "rowsRead"),
        "rowsWritten": get(multi, "rowsWritten"),
        "columnNames": describe(get(multi, "columnNames")),
    }
    out["exec_returns_cursor_for_ddl"] = safe(
        lambda: describe(exec_("CREATE TABLE IF NOT EXISTS ddl_probe (x)"))
    )
    return out


def counters_section(sql: Any) -> dict[str, Any]:
    def exec_(query: str, *bindings: Any) -> Any:
        return call(sql, "exec", query, *bindings)

    exec_("CREATE TABLE counts (id INTEGER PRIMARY KEY, k TEXT, v INTEGER)")
    out: dict[str, Any] = {}
    ddl = exec_("CREATE TABLE counts_ddl_probe (x)")
    call(ddl, "toArray")
    out["create_table"] = {"rowsRead": get(ddl, "rowsRead"), "rowsWritten": get(ddl, "rowsWritten")}
    out["insert_one"] = _counted(exec_, "INSERT INTO counts (k, v) VALUES ('a', 1)")
    out["insert_three"] = _counted(exec_, "INSERT INTO counts (k, v) VALUES ('b', 2), ('c', 3), ('d', 4)")
    out["select_all"] = _counted(exec_, "SELECT k, v FROM counts")
    out["select_by_rowid"] = _counted(exec_, "SELECT k FROM counts WHERE id = 2")
    out["select_count"] = _counted(exec_, "SELECT count(*) AS n FROM counts")
    out["select_scan_filter"] = _counted(exec_, "SELECT k FROM counts WHERE v = 3")
    out["update_one"] = _counted(exec_, "UPDATE counts SET v = 10 WHERE id = 1")
    out["update_none"] = _counted(exec_, "UPDATE counts SET v = 10 WHERE id = 99")
    exec_("CREATE INDEX counts_by_k ON counts (k)")
    out["insert_with_one_index"] = _counted(exec_, "INSERT INTO counts (k, v) VALUES ('e', 5)")
    out["select_by_index"] = _counted(exec_, "SELECT v FROM counts WHERE k = 'e'")
    out["update_indexed_column"] = _counted(exec_, "UPDATE counts SET k = 'f' WHERE id = 5")
    out["update_unindexed_column"] = _counted(exec_, "UPDATE counts SET v = 6 WHERE id = 5")
    exec_("CREATE TABLE audit (n INTEGER)")
    exec_("CREATE TRIGGER counts_audit AFTER INSERT ON counts BEGIN INSERT INTO audit VALUES (new.v); END")
    out["insert_with_index_and_trigger"] = _counted(exec_, "INSERT INTO counts (k, v) VALUES ('g', 7)")
    out["delete_one"] = _counted(exec_, "DELETE FROM counts WHERE id = 1")
    out["delete_all"] = _counted(exec_, "DELETE FROM counts")
    exec_("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)")
    upsert = "INSERT INTO kv VALUES ('{}', {}) ON CONFLICT (k) DO UPDATE SET v = excluded.v"
    out["upsert"] = {
        "first": _counted(exec_, upsert.format("x", 1)),
        "second": _counted(exec_, upsert.format("x", 2)),
    }
    out["returning"] = _counted(exec_, "INSERT INTO kv VALUES ('y', 3) RETURNING k, v")
    lazy = exec_("SELECT k FROM kv")
    before = {"rowsRead": get(lazy, "rowsRead"), "rowsWritten": get(lazy, "rowsWritten")}
    call(lazy, "next")
    after_one = {"rowsRead": get(lazy, "rowsRead"), "rowsWritten": get(lazy, "rowsWritten")}
    call(lazy, "toArray")
    after_all = {"rowsRead": get(lazy, "rowsRead"), "rowsWritten": get(lazy, "rowsWritten")}
    out["select_read_lazily"] = {"before": before, "afterOne": after_one, "afterAll": after_all}
    lazy_insert = exec_("INSERT INTO kv VALUES ('z', 4)")
    out["insert_counted_before_reading"] = {
        "rowsRead": get(lazy_insert, "rowsRead"),
        "rowsWritten": get(lazy_insert, "rowsWritten"),
    }
    return out


def transaction_section(storage: Any) -> dict[str, Any]:
    sql = get(storage, "sql")

    def exec_(query: str) -> Any:
        return call(sql, "exec", query)

    def transaction(body: Any) -> Any:
        return call(storage, "transactionSync", js_function(body))

    exec_("CREATE TABLE tx (v INTEGER)")

    def count() -> Any:
        return get(call(exec_("SELECT count(*) AS n FROM tx"), "one"), "n")

    out: dict[str, Any] = {}

    def insert_one() -> Any:
        exec_("INSERT INTO tx VALUES (1)")
        return js_value({"inserted": 1, "list": [1, "x"]})

    out["returns_object"] = outcome(lambda: transaction(insert_one))
    out["returns_number"] = outcome(lambda: transaction(lambda: 42))
    out["returns_undefined"] = outcome(lambda: transaction(lambda: UNDEFINED))
    out["returns_cursor"] = outcome(lambda: transaction(lambda: exec_("SELECT v FROM tx")))
    out["returns_promise"] = outcome(lambda: transaction(lambda: JsPromise.resolved(1)))
    out["rows_after_commit"] = count()

    def fails() -> Any:
        exec_("INSERT INTO tx VALUES (2)")
        raise js_error("RangeError", "rolled back on purpose")

    out["throws"] = outcome(lambda: transaction(fails))
    out["rows_after_throw"] = count()

    def throws_string() -> Any:
        raise JsException("a string")

    out["throws_non_error"] = outcome(lambda: transaction(throws_string))

    def sql_error() -> Any:
        exec_("INSERT INTO tx VALUES (3)")
        return exec_("INSERT INTO missing VALUES (1)")

    out["sql_error_inside"] = outcome(lambda: transaction(sql_error))
    out["rows_after_sql_error"] = count()

    inner: list[Any] = [UNDEFINED]

    def nested() -> Any:
        exec_("INSERT INTO tx VALUES (4)")

        def inner_fails() -> Any:
            exec_("INSERT INTO tx VALUES (5)")
            raise js_error("Error", "inner fails")

        try:
            transaction(inner_fails)
        except JsException as error:
            inner[0] = error.js_error
        return count()

    out["nested"] = outcome(lambda: transaction(nested))
    out["nested_inner_error"] = safe(lambda: describe(inner[0]))
    out["rows_after_nested"] = count()
    out["not_a_function"] = outcome(lambda: call(storage, "transactionSync", 42))
    out["arguments_given_to_callback"] = outcome(
        lambda: call(storage, "transactionSync", JsCallable(lambda *args: len(args), name=""))
    )
    return out


def js_function(body: Any) -> JsCallable:
    """A JS function whose body is ``body`` (called with no arguments)."""
    return JsCallable(lambda *_: body(), name="")


def record_sql(state: Any) -> dict[str, Any]:
    """The record's ``durable_object_sql`` section, made on ``state`` (a Durable Object's raw ``ctx``)."""
    storage = get(state, "storage")
    return {
        "storage": describe(storage),
        "sql": describe(get(storage, "sql")),
        "cursors": cursor_section(get(storage, "sql")),
        "counters": counters_section(get(storage, "sql")),
        "transactionSync": transaction_section(storage),
        "databaseSize": describe(get(get(storage, "sql"), "databaseSize")),
    }


FAR = 4102444800000
"""recorder/alarms.js: 2100-01-01T00:00:00Z, so getAlarm() answers the same number every run."""

LATEST = 9223372036854.773
"""recorder/alarms.js: the greatest number below workerd's bound on a Date argument."""

OUT_OF_REACH: dict[str, Any] = {
    "after_latest": 9223372036854.775,
    "next_millisecond_after_latest": 9223372036855,
    "end_of_date_range": date(8.64e15),
    "beyond_date_range": 1e16,
    "earliest_in_reach": -9223372036854.773,
    "before_earliest": -9223372036854.775,
    "start_of_date_range": date(-8.64e15),
    "infinity": float("inf"),
    "negative_infinity": float("-inf"),
    "invalid_date": date(float("nan")),
    "zero": 0,
    "negative_zero": -0.0,
    "under_one_millisecond": 0.999,
    "negative": -1,
    "date_before_1970": date(-1000),
    "bigint": JsBigIntValue(FAR),
    "null": jsnull,
    "boolean": True,
    "numeric_string": "4102444800000",
    "value_of_object": js_value({"valueOf": JsCallable(lambda *_: FAR, name="valueOf")}),
}
"""recorder/alarms.js ``OUT_OF_REACH``, in its order: values ``setAlarm`` refuses past its type check, and
values that look like a time but are not a number or a Date."""


async def record_alarm_calls(storage: Any, now_ms: Callable[[], int]) -> dict[str, Any]:
    """The record's ``alarms`` section (``recordAlarmCalls``), made on a raw ``ctx.storage``; ``now_ms`` is the
    runtime's clock (the recorder's ``Date.now()``)."""
    out: dict[str, Any] = {}

    async def step(name: str, *args: Any) -> dict[str, Any]:
        return await outcome_async(lambda: call(storage, name, *args))

    out["getAlarm_never_set"] = await step("getAlarm")
    out["setAlarm_number"] = await step("setAlarm", FAR)
    out["getAlarm_after_set_number"] = await step("getAlarm")
    out["setAlarm_date"] = await step("setAlarm", date(FAR + 1000))
    out["getAlarm_after_set_date"] = await step("getAlarm")
    out["setAlarm_fraction"] = await step("setAlarm", FAR + 0.75)
    out["getAlarm_after_set_fraction"] = await step("getAlarm")
    out["deleteAlarm"] = await step("deleteAlarm")
    out["getAlarm_after_delete"] = await step("getAlarm")
    out["deleteAlarm_when_none"] = await step("deleteAlarm")
    out["setAlarm_string"] = await step("setAlarm", "soon")
    out["setAlarm_nan"] = await step("setAlarm", float("nan"))
    out["setAlarm_no_argument"] = await step("setAlarm")
    for name, value in OUT_OF_REACH.items():
        out[f"setAlarm_{name}"] = await step("setAlarm", value)
    out["getAlarm_after_refusals"] = await step("getAlarm")
    out["getAlarm_is_a_promise"] = isinstance(call(storage, "getAlarm"), JsPromise)
    out["setAlarm_latest"] = await step("setAlarm", LATEST)
    out["getAlarm_after_set_latest"] = await step("getAlarm")
    before = now_ms()
    out["setAlarm_past"] = await step("setAlarm", 1)
    past = await settle(call(storage, "getAlarm"))
    out["getAlarm_after_set_past_is_now"] = before <= past <= now_ms()
    await settle(call(storage, "deleteAlarm"))
    return out
