"""``recorder/d1.js`` run on the local runtime's JS-side D1 binding, case for case (same order, same keys)."""

from __future__ import annotations

from typing import Any

from jsemu.core import JsException

from tests.shapes.js_describe import describe
from tests.shapes.js_side import (
    UNDEFINED,
    JsBigIntValue,
    array_buffer,
    call,
    date,
    js_value,
    jsnull,
    outcome,
    outcome_async,
    safe,
    settle,
    uint8,
)

VARIES = (
    "meta.duration",
    "meta.timings.sql_duration_ms",
    "*.meta.duration",
    "*.meta.timings.sql_duration_ms",
)
EXEC_VARIES = ("duration",)


async def record_d1(db: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}

    def prepare(sql: str) -> Any:
        return call(db, "prepare", sql)

    out["binding"] = describe(db)
    out["exec_ddl"] = await outcome_async(
        lambda: call(
            db,
            "exec",
            "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL, data BLOB, note TEXT)\n"
            "CREATE INDEX items_by_name ON items (name)",
        ),
        EXEC_VARIES,
    )
    out["exec_two_statements_one_line"] = await outcome_async(
        lambda: call(db, "exec", "CREATE TABLE other (x); INSERT INTO other VALUES (1)"), EXEC_VARIES
    )
    out["exec_error"] = await outcome_async(lambda: call(db, "exec", "CREATE TABL broken (x)"), EXEC_VARIES)

    insert = prepare("INSERT INTO items (name, score, data, note) VALUES (?1, ?2, ?3, ?4)")
    out["prepared"] = safe(lambda: describe(insert))
    bound = call(insert, "bind", "alpha", 1.5, uint8(0, 255), jsnull)
    out["bound"] = safe(lambda: describe(bound))
    out["bind_returns_new_statement"] = bound is not insert
    out["run_insert"] = await outcome_async(lambda: call(bound, "run"), VARIES)
    out["run_insert_returning"] = await outcome_async(
        lambda: call(
            call(
                prepare("INSERT INTO items (name, score) VALUES (?, ?) RETURNING id, name"), "bind", "beta", 2
            ),
            "run",
        ),
        VARIES,
    )
    out["all_insert"] = await outcome_async(
        lambda: call(
            call(prepare("INSERT INTO items (name, score) VALUES (?, ?)"), "bind", "gamma", 3), "all"
        ),
        VARIES,
    )

    select = prepare("SELECT id, name, score, data, note FROM items ORDER BY id")
    no_rows = "SELECT id FROM items WHERE id < 0"
    out["all"] = await outcome_async(lambda: call(select, "all"), VARIES)
    out["all_no_rows"] = await outcome_async(lambda: call(prepare(no_rows), "all"), VARIES)
    out["first"] = await outcome_async(lambda: call(select, "first"))
    out["first_no_rows"] = await outcome_async(lambda: call(prepare(no_rows), "first"))
    out["first_column"] = await outcome_async(lambda: call(select, "first", "name"))
    out["first_column_no_rows"] = await outcome_async(lambda: call(prepare(no_rows), "first", "id"))
    out["first_missing_column"] = await outcome_async(lambda: call(select, "first", "missing"))
    out["raw"] = await outcome_async(lambda: call(select, "raw"))
    out["raw_column_names"] = await outcome_async(
        lambda: call(select, "raw", js_value({"columnNames": True}))
    )
    out["raw_column_names_no_rows"] = await outcome_async(
        lambda: call(
            prepare("SELECT id, name FROM items WHERE id < 0"), "raw", js_value({"columnNames": True})
        )
    )
    out["raw_no_rows"] = await outcome_async(lambda: call(prepare(no_rows), "raw"))
    out["run_select"] = await outcome_async(lambda: call(select, "run"), VARIES)
    out["update"] = await outcome_async(
        lambda: call(prepare("UPDATE items SET score = score + 1"), "run"), VARIES
    )
    out["delete_none"] = await outcome_async(
        lambda: call(prepare("DELETE FROM items WHERE id < 0"), "run"), VARIES
    )
    out["duplicate_columns"] = await outcome_async(
        lambda: call(prepare("SELECT 1 AS a, 2 AS a"), "all"), VARIES
    )
    out["duplicate_columns_raw"] = await outcome_async(lambda: call(prepare("SELECT 1 AS a, 2 AS a"), "raw"))

    async def value(v: Any) -> dict[str, Any]:
        return await outcome_async(
            lambda: call(call(prepare("SELECT ? AS v, typeof(?) AS t"), "bind", v, v), "first")
        )

    out["bind"] = {
        "null": await value(jsnull),
        "undefined": await value(UNDEFINED),
        "true": await value(True),
        "false": await value(False),
        "integer": await value(42),
        "float": await value(0.5),
        "whole_float": await value(3.0),
        "integer_past_2_53": await value(float(2**53 + 2)),
        "nan": await value(float("nan")),
        "string": await value("text 日本 🎉"),
        "bigint": await value(JsBigIntValue(5)),
        "uint8array": await value(uint8(1, 2)),
        "arraybuffer": await value(array_buffer(1, 2)),
        "array": await value(js_value([1, 2])),
        "object": await value(js_value({"a": 1})),
        "date": await value(date(0)),
    }
    out["integer_past_2_53_literal"] = await outcome_async(
        lambda: call(prepare("SELECT 9007199254740993 AS v"), "first")
    )
    out["bind_too_few"] = await outcome_async(
        lambda: call(call(prepare("SELECT ? AS a, ? AS b"), "bind", 1), "all"), VARIES
    )
    out["bind_too_many"] = await outcome_async(
        lambda: call(call(prepare("SELECT ? AS a"), "bind", 1, 2), "all"), VARIES
    )
    out["bind_named"] = await outcome_async(
        lambda: call(call(prepare("SELECT :x AS a"), "bind", 1), "all"), VARIES
    )
    out["prepare_syntax_error"] = outcome(lambda: prepare("SELEC 1"))
    out["syntax_error"] = await outcome_async(lambda: call(prepare("SELEC 1"), "all"), VARIES)
    out["no_such_table"] = await outcome_async(lambda: call(prepare("SELECT * FROM missing"), "all"), VARIES)
    out["not_null"] = await outcome_async(
        lambda: call(prepare("INSERT INTO items (name) VALUES (NULL)"), "run"), VARIES
    )
    out["multiple_statements_in_prepare"] = await outcome_async(
        lambda: call(prepare("INSERT INTO other VALUES (2); SELECT x FROM other"), "all"), VARIES
    )

    def batch(*statements: Any) -> Any:
        return call(db, "batch", js_value(list(statements)))

    out["batch"] = await outcome_async(
        lambda: batch(
            call(prepare("INSERT INTO items (name) VALUES (?)"), "bind", "delta"),
            call(prepare("SELECT name FROM items WHERE name = ?"), "bind", "delta"),
            prepare("UPDATE items SET note = 'n' WHERE name = 'delta'"),
        ),
        VARIES,
    )
    out["batch_empty"] = await outcome_async(lambda: batch(), VARIES)
    count = prepare("SELECT count(*) AS n FROM items")
    before = await _settled(call(count, "first", "n"))
    out["batch_with_error"] = await outcome_async(
        lambda: batch(
            call(prepare("INSERT INTO items (name) VALUES (?)"), "bind", "epsilon"),
            prepare("INSERT INTO missing VALUES (1)"),
        ),
        VARIES,
    )
    after = await _settled(call(count, "first", "n"))
    out["batch_with_error_rolled_back"] = before == after and before is not None
    return out


async def _settled(promise: Any) -> Any:
    """What ``promise`` resolves to, or None when it rejects (the comparison then shows the difference)."""
    try:
        return await settle(promise)
    except JsException:
        return None
