"""The Durable Object SQL API (``ctx.storage.sql``) on stdlib ``sqlite3``.

Cloudflare's ``SqlStorage`` is synchronous: ``exec(query, *bindings)`` returns a cursor whose rows are plain JS
objects (``JsDict`` in Python), with ``one()``, ``toArray()``, ``raw()``, iteration, ``columnNames``,
``rowsRead`` and ``rowsWritten``; ``databaseSize`` gives the file size; ``transactionSync(fn)`` runs ``fn``
atomically and rolls back when it raises. ``BEGIN``/``COMMIT``/``SAVEPOINT`` are refused inside ``exec``.

As strict as workerd where stdlib sqlite3 is laxer: the connection carries workerd's limits and authorizer
(``tsumugi_dev.sqlite_limits``: 100 bound parameters, 100,000-byte SQL, 2 MB strings, 5 compound SELECT terms,
only listed functions and pragmas, no ATTACH, temporary tables or ``_cf_`` names), errors read as workerd's
``<message>: <SQLITE_CODE>``, and an integer SQLite cannot store is a ``SqlError``, not ``OverflowError``.

Bindings are what workerd's ``exec`` accepts, ``bytes | string | double`` (src/workerd/api/sql.h
``BindingValue``), so every number binds as a REAL (``sqlite3_bind_double``): an ``int`` binds as a float, one
beyond 2^53 - 1 (a JS ``BigInt`` after Pyodide) is refused with ``TypeError: Cannot convert a BigInt value to
a number``, and a ``bool`` (a JS boolean, coerced to a string) binds as the text ``'true'`` / ``'false'``.
Values cross back as JS numbers, so Pyodide hands an integral REAL back as ``int``, and a BLOB as a
``memoryview``; this emulation does the same, so code that runs here also copes with what Cloudflare returns.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, Self, TypeVar

from jsemu.core import MAX_SAFE_INTEGER, js_error

from tsumugi_dev.jsdict import JsDict
from tsumugi_dev.metering import Usage
from tsumugi_dev.private_files import private_file
from tsumugi_dev.sql_rows import WrittenRows
from tsumugi_dev.sqlite_limits import LIMITS, MAX_SQL_BYTES, TRANSACTION_REFUSED, SqliteGuard

__all__ = ["MAX_BOUND_PARAMETERS", "SqlCursor", "SqlError", "SqlStorage"]

T = TypeVar("T")

MAX_BOUND_PARAMETERS: Final = 100
"""Most bound parameters one statement may take in a Durable Object (workerd refuses the 101st)."""

_WRITE_PREFIX = re.compile(r"^\s*(?:--[^\n]*\n\s*)*(INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER)\b", re.I)
_TX_STATEMENT = re.compile(r"^\s*(BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE)\b", re.I)


class SqlError(Exception):
    """Raised where Cloudflare's SQL API throws (bad SQL, refused statements, ``one()`` on 0 or 2+ rows)."""


def _to_js_value(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        return int(value)
    if isinstance(value, bytes):
        return memoryview(value)  # an ArrayBuffer's to_py()
    return value


_WAL_CHECKPOINT_PAGES = 10_000
_WAL_KEEP_BYTES = 8 * 2**20
_PLAIN_BINDINGS = frozenset({str, float, bytes, type(None)})
_CONVERTED_VALUES = frozenset({float, bytes})


def _check_binding(value: Any) -> Any:
    if value is None or isinstance(value, str | float | bytes):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"  # a JS boolean: no numeric type to take it, so ToString
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:  # a BigInt in JS: ToNumber refuses it
            raise js_error("TypeError", "Cannot convert a BigInt value to a number")
        return float(value)
    if isinstance(value, memoryview):
        return value.tobytes()
    raise SqlError(f"unsupported SQL binding type: {type(value).__name__}")


def _check_bindings(bindings: tuple[Any, ...]) -> Sequence[Any]:
    # Strings, floats, bytes and None pass as they are (one set lookup each); an int binds as a double.
    for value in bindings:
        if type(value) not in _PLAIN_BINDINGS:
            break
    else:
        return bindings
    # Most bindings of a statement are ints: convert them in one comprehension, the rest one by one.
    return [
        float(value)
        if type(value) is int and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
        else value
        if type(value) in _PLAIN_BINDINGS
        else _check_binding(value)
        for value in bindings
    ]


@functools.lru_cache(maxsize=2048)
def _analyse(statement: str) -> tuple[bool, bool]:
    """(is a transaction-control statement, is a write) for one statement; cached per SQL text."""
    return bool(_TX_STATEMENT.match(statement)), bool(_WRITE_PREFIX.match(statement))


@functools.lru_cache(maxsize=512)
def _split_cached(script: str) -> tuple[str, ...]:
    return tuple(_split_statements(script))


def _split_statements(script: str) -> list[str]:
    statements: list[str] = []
    start = 0
    for index, char in enumerate(script):
        if char == ";" and sqlite3.complete_statement(script[start : index + 1]):
            statements.append(script[start : index + 1])
            start = index + 1
    if script[start:].strip():
        statements.append(script[start:])
    return [s for s in statements if s.strip().strip(";").strip()]


class SqlCursor:
    """The result of ``SqlStorage.exec``: rows already read, in the order the statement gave them."""

    def __init__(
        self,
        column_names: list[str],
        rows: list[tuple[Any, ...]],
        rows_written: int,
        direct_changes: int = 0,
        inserted_rowid: int | None = None,
    ) -> None:
        self.columnNames = column_names
        self.direct_changes = direct_changes
        """Rows the statement itself changed (SQLite's ``sqlite3_changes``; not SDK API: for metering)."""
        self.inserted_rowid = inserted_rowid
        """The rowid inserted when the connection's last inserted rowid moved, else None (for metering)."""
        self._rows = rows
        self._next = 0
        self.rowsRead = len(rows)
        self.rowsWritten = rows_written

    def _as_dict(self, row: tuple[Any, ...]) -> JsDict:
        if _CONVERTED_VALUES.isdisjoint(map(type, row)):  # the common row: nothing to convert, all in C
            return JsDict(zip(self.columnNames, row, strict=True))
        values = [v if type(v) not in _CONVERTED_VALUES else _to_js_value(v) for v in row]
        return JsDict(zip(self.columnNames, values, strict=True))

    def __iter__(self) -> Iterator[JsDict]:
        while self._next < len(self._rows):
            row = self._rows[self._next]
            self._next += 1
            yield self._as_dict(row)

    def toArray(self) -> list[JsDict]:
        rows = self._rows[self._next :]
        self._next = len(self._rows)
        return [self._as_dict(row) for row in rows]

    def one(self) -> JsDict:
        remaining = len(self._rows) - self._next
        if remaining != 1:
            got = "no results" if remaining == 0 else "multiple results"
            raise SqlError(f"Expected exactly one result from SQL query, but got {got}.")
        return next(iter(self))

    def raw(self) -> Iterator[list[Any]]:
        while self._next < len(self._rows):
            row = self._rows[self._next]
            self._next += 1
            yield [_to_js_value(v) for v in row]


class SqlStorage:
    """``ctx.storage.sql`` over one SQLite database (a file, or ``:memory:``)."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        self._path = str(path)
        if self._path != ":memory:":
            private_file(self._path)  # a Durable Object's data: its user's only
        self._conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        self._conn.execute(
            "PRAGMA journal_mode=WAL" if self._path != ":memory:" else "PRAGMA journal_mode=MEMORY"
        )
        self._conn.execute("PRAGMA synchronous=NORMAL")
        # A checkpoint costs two fsyncs (~10 ms on a VM disk); at SQLite's default of one per 1,000 WAL pages a
        # busy shard spent a third of its time in them. Every 10,000 pages (~40 MiB) keeps the same guarantee
        # under synchronous=NORMAL (a killed process loses nothing; a power loss may roll back recent commits,
        # never corrupt) with a tenth of the fsyncs; the WAL is cut back to 8 MiB after each checkpoint.
        self._conn.execute(f"PRAGMA wal_autocheckpoint={_WAL_CHECKPOINT_PAGES}")
        self._conn.execute(f"PRAGMA journal_size_limit={_WAL_KEEP_BYTES}")
        # From here on every statement is the application's, checked as workerd checks it ("?101" or a 101st "?"
        # fails when the statement is prepared); the runtime's own run inside self._guard.trusted().
        self._guard = SqliteGuard(self._conn, LIMITS, transaction_message=TRANSACTION_REFUSED)
        self._depth = 0
        self.write_statements = 0
        """Write statements executed so far (INSERT/UPDATE/DELETE/REPLACE/DDL); a measuring aid, not SDK API."""
        self.usage: Usage | None = None
        """Where the application's rows read and written are metered (``tsumugi_dev.metering``); None: nowhere."""
        self._written_rows = WrittenRows(self._conn, self._guard.trusted)
        self._last_rowid: int | None = 0

    @property
    def databaseSize(self) -> int:
        with self._guard.trusted():  # text an application cannot send (workerd refuses PRAGMA page_count)
            page_count = self._conn.execute("PRAGMA page_count -- runtime").fetchone()[0]
            page_size = self._conn.execute("PRAGMA page_size -- runtime").fetchone()[0]
        return int(page_count) * int(page_size)

    def exec(self, query: str, *bindings: Any) -> SqlCursor:
        if len(bindings) > MAX_BOUND_PARAMETERS:
            raise SqlError(
                f"too many SQL variables: {len(bindings)} bound parameters, at most {MAX_BOUND_PARAMETERS}"
            )
        if len(query) > MAX_SQL_BYTES // 4 and len(query.encode()) > MAX_SQL_BYTES:
            # workerd prepares the whole text at once, so the limit holds for all its statements together.
            raise SqlError("statement too long: SQLITE_TOOBIG")
        if bindings:  # a statement with bindings is run as one statement, as before
            params = _check_bindings(bindings)
            return self._metered(query, params, self._exec_one(query, params))
        statements = _split_cached(query)
        if not statements:
            raise SqlError("SQL code did not contain a statement.")  # workerd's text
        cursor = SqlCursor([], [], 0)
        for statement in statements:
            cursor = self._metered(statement, (), self._exec_one(statement, ()))
        return cursor

    def _metered(self, statement: str, params: Sequence[Any], cursor: SqlCursor) -> SqlCursor:
        usage = self.usage
        if usage is not None:
            changes = cursor.rowsWritten
            usage.sql_rows_read += max(cursor.rowsRead, changes)
            if changes:
                usage.sql_rows_written += self._written_rows.count(
                    statement, params, cursor.direct_changes, changes, cursor.inserted_rowid
                )
        return cursor

    def _exec_one(self, statement: str, params: Sequence[Any]) -> SqlCursor:
        is_transaction, is_write = _analyse(statement)
        if is_transaction:
            raise SqlError(TRANSACTION_REFUSED)
        before = self._conn.total_changes
        try:
            cur = self._conn.execute(statement, params)
            rows = cur.fetchall()
        # OverflowError: an int beyond a 64-bit INTEGER, at bind; MemoryError: a program over SQLITE_LIMIT_VDBE_OP.
        except (sqlite3.Error, OverflowError, MemoryError) as exc:
            error = SqlError(self._guard.refusal(exc))
            error.add_note(f"statement: {statement.strip()[:200]}")
            raise error from exc
        names = [d[0] for d in cur.description] if cur.description else []
        if is_write:
            self.write_statements += 1
        last_rowid, self._last_rowid = self._last_rowid, cur.lastrowid
        inserted = cur.lastrowid if cur.lastrowid != last_rowid else None
        return SqlCursor(names, rows, self._conn.total_changes - before, cur.rowcount, inserted)

    def transaction_sync(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` atomically: every write it makes is kept, or none is (``transactionSync`` in the SDK)."""
        name = f"tx{self._depth}"
        with self._guard.trusted():
            self._conn.execute(f"SAVEPOINT {name}")
        self._depth += 1
        try:
            result = fn()
        except BaseException:
            self._depth -= 1
            with self._guard.trusted():
                self._conn.execute(f"ROLLBACK TO {name}")
                self._conn.execute(f"RELEASE {name}")
            raise
        self._depth -= 1
        with self._guard.trusted():
            self._conn.execute(f"RELEASE {name}")
        return result

    transactionSync = transaction_sync

    def close(self) -> None:
        """Close the database (``with SqlStorage() as sql:`` closes it on leaving the block)."""
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
