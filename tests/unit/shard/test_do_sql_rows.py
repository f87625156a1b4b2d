"""The DO SQL shim the engine runs on keeps Cloudflare's row shape on its fast paths.

Rows are ``JsDict``; an integral REAL comes back as ``int`` (as a JS number does through Pyodide), a
non-integral one as ``float``; ``toArray``, ``one`` and iteration agree and consume the cursor.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyodide.ffi import JsException

from tsumugi_dev.do_sql import MAX_BOUND_PARAMETERS, SqlError, SqlStorage
from tsumugi_dev.jsdict import JsDict


@pytest.fixture
def sql() -> Iterator[SqlStorage]:
    with SqlStorage() as storage:
        storage.exec("CREATE TABLE t (k TEXT, r REAL, b BLOB)")
        storage.exec(
            "INSERT INTO t VALUES ('plain', NULL, NULL), ('whole', 2.0, NULL), ('half', 0.5, x'00ff')"
        )
        yield storage


def test_to_array_gives_js_dicts_with_js_number_semantics(sql: SqlStorage) -> None:
    rows = sql.exec("SELECT k, r, b FROM t ORDER BY rowid").toArray()
    assert all(type(row) is JsDict for row in rows)
    assert rows == [
        {"k": "plain", "r": None, "b": None},
        {"k": "whole", "r": 2, "b": None},
        {"k": "half", "r": 0.5, "b": b"\x00\xff"},
    ]
    assert type(rows[1]["r"]) is int
    assert rows[2].k == "half"


def test_iteration_one_and_to_array_consume_the_same_rows(sql: SqlStorage) -> None:
    cursor = sql.exec("SELECT k FROM t ORDER BY rowid")
    assert next(iter(cursor)) == {"k": "plain"}
    assert cursor.toArray() == [{"k": "whole"}, {"k": "half"}]
    assert cursor.toArray() == []
    assert sql.exec("SELECT r FROM t WHERE k = ?", "whole").one() == {"r": 2}
    with pytest.raises(SqlError, match="exactly one result"):
        sql.exec("SELECT k FROM t").one()


def test_bindings_are_checked_and_writes_counted(sql: SqlStorage) -> None:
    before = sql.write_statements
    sql.exec("UPDATE t SET k = ? WHERE k = ?", True, "plain")  # a JS boolean binds as the text 'true'
    assert sql.exec("SELECT k FROM t WHERE rowid = 1").one() == {"k": "true"}
    assert sql.write_statements == before + 1
    with pytest.raises(SqlError, match="unsupported SQL binding type: dict"):
        sql.exec("SELECT ?", {"a": 1})
    with pytest.raises(SqlError):
        sql.exec("SELECT 1; SELECT ?", 1)  # bindings only with a single statement


def test_a_statement_takes_at_most_100_bound_parameters_as_in_workerd(sql: SqlStorage) -> None:
    marks = ", ".join("?" * MAX_BOUND_PARAMETERS)
    assert sql.exec(f"SELECT COUNT(*) AS n FROM t WHERE k IN ({marks})", *["plain"] * 100).one()["n"] == 1
    with pytest.raises(SqlError, match="too many SQL variables: 101 bound parameters, at most 100"):
        sql.exec(f"SELECT k FROM t WHERE k IN ({marks}, ?)", *["plain"] * 101)
    with pytest.raises(SqlError, match=r"variable number must be between \?1 and \?100"):
        sql.exec("SELECT ?101 AS v", *range(100))  # a placeholder past 100 fails when prepared


@pytest.mark.parametrize("value", [2**53, -(2**53), 2**63 - 1, 2**64])
def test_an_integer_beyond_2_53_is_refused_as_workerd_refuses_a_bigint(sql: SqlStorage, value: int) -> None:
    with pytest.raises(JsException, match="TypeError: Cannot convert a BigInt value to a number"):
        sql.exec("INSERT INTO t (k, r) VALUES ('big', ?)", value)
    assert sql.exec("SELECT COUNT(*) AS n FROM t WHERE k = 'big'").one()["n"] == 0
    assert sql.exec("SELECT ? AS v", 2**53 - 1).one()["v"] == 2**53 - 1
