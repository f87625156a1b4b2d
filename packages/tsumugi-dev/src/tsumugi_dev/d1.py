"""D1: ``prepare(sql).bind(...).all() / first() / run() / raw()``, ``batch`` and ``exec`` on stdlib sqlite3.

Results have the SDK's shape: ``JsDict`` with ``results`` (rows as ``JsDict``), ``success`` and ``meta``
(``changed_db``, ``changes``, ``duration``, ``last_row_id``, ``rows_read``, ``rows_written``, ``served_by``,
``size_after``). Integral REAL values come back as ``int``, as JS numbers do. Every call is outside I/O for the
caller: it yields to the event loop before touching the database, and with ``offload=True`` (the runtime's
choice under the real clock) each call runs on a thread of its own database, as D1 runs beside a Worker on
Cloudflare: the event loop goes on with other work meanwhile, and SQLite releases the GIL while it works.
Under the virtual clock calls stay on the loop's thread, so a test's ``settle()`` sees every call finish.

Every statement an application (or a migration) sends is checked as Cloudflare checks it, with workerd's
limits and authorizer (``tsumugi_dev.sqlite_limits``; D1 documents the same limits as Durable Object SQL), and
errors read ``D1_ERROR: <message>: <SQLITE_CODE>``. The runtime's own statements (the batch transaction, the
size pragmas) and direct use of ``connection`` by tools and tests are not checked.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self, TypeVar

from tsumugi_dev.faults import D1_OUTAGE, D1_OUTAGE_MESSAGE, FaultInjector
from tsumugi_dev.invocation import current_invocation
from tsumugi_dev.jsdict import JsDict
from tsumugi_dev.metering import Usage
from tsumugi_dev.sql_rows import WrittenRows
from tsumugi_dev.sqlite_limits import LIMITS, SqliteGuard, describe
from tsumugi_dev.state_db import open_state_db

__all__ = ["D1Database", "D1Error", "D1PreparedStatement", "apply_d1_migrations"]

_MAX_SAFE_INT = 2**53
MAX_BOUND_PARAMETERS = 100
"""Most bound parameters per query (developers.cloudflare.com/d1/platform/limits/)."""
_T = TypeVar("_T")


class D1Error(Exception):
    """What D1 throws (bad SQL, constraint failures, unsupported bindings); the message starts ``D1_``."""


def _charge(statements: int) -> None:
    """Count one D1 call of ``statements`` queries against the caller's invocation (1,000 at most)."""
    current = current_invocation()
    if current is not None and not current.charge_d1(statements):
        raise D1Error(current.d1_limit_message(statements))


def _js_value(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_SAFE_INT:
        return int(value)
    if isinstance(value, bytes):
        return list(value)  # D1 answers a BLOB as an array of byte values (JSON), as workerd's D1 API does
    return value


_PLAIN_PARAMS = frozenset({str, int, float, bytes, type(None)})


def _check_params(values: tuple[Any, ...]) -> tuple[Any, ...]:
    # The common case (plain values) costs one set lookup per value; only odd types take the slow path.
    for value in values:
        if type(value) not in _PLAIN_PARAMS:
            return tuple(_check_param(v, i) for i, v in enumerate(values))
    return values


def _check_param(value: Any, index: int) -> Any:
    if isinstance(value, bool):
        return int(value)
    if value is None or isinstance(value, int | float | str | bytes):
        return value
    raise D1Error(f"D1_TYPE_ERROR: Type '{type(value).__name__}' not supported for value at index {index}")


class _Outcome:
    def __init__(
        self, names: list[str], rows: list[tuple[Any, ...]], changes: int, last_row_id: int, ms: float
    ) -> None:
        self.names = names
        self.rows = rows
        self.changes = changes
        self.last_row_id = last_row_id
        self.ms = ms


class D1PreparedStatement:
    """A statement with (optionally) bound values; ``bind`` returns a new statement."""

    def __init__(self, db: D1Database, sql: str, params: tuple[Any, ...] = ()) -> None:
        self._db = db
        self.sql = sql
        self.params = params

    def bind(self, *values: Any) -> D1PreparedStatement:
        """Bind positional values (``?`` / ``?NNN``); at most 100, D1's limit of bound parameters per query."""
        if len(values) > MAX_BOUND_PARAMETERS:
            raise D1Error(
                f"D1_ERROR: too many SQL variables: {len(values)} bound parameters, at most "
                f"{MAX_BOUND_PARAMETERS}: SQLITE_ERROR"
            )
        return D1PreparedStatement(self._db, self.sql, _check_params(values))

    async def all(self) -> JsDict:
        """Every row, with ``meta``."""
        _charge(1)
        return await self._db.call(lambda: self._db.result(self._db.execute(self)))

    async def run(self) -> JsDict:
        """Run the statement; the same shape as ``all()``."""
        return await self.all()

    async def first(self, column: str | None = None) -> Any:
        """The first row (or one of its columns), or None when there are no rows."""
        _charge(1)
        outcome = await self._db.call(lambda: self._db.execute(self))
        if not outcome.rows:
            return None
        row = JsDict(zip(outcome.names, (_js_value(v) for v in outcome.rows[0]), strict=True))
        if column is None:
            return row
        if column not in row:
            raise D1Error(f"D1_COLUMN_NOTFOUND: Column not found ({column})")
        return row[column]

    async def raw(self, options: Any = None, **kwargs: Any) -> list[list[Any]]:
        """Rows as lists; with ``columnNames=True`` the first list holds the column names."""
        _charge(1)
        outcome = await self._db.call(lambda: self._db.execute(self))
        merged: dict[str, Any] = dict(options) if isinstance(options, dict) else {}  # pyright: ignore[reportUnknownArgumentType]
        merged.update(kwargs)
        rows = [[_js_value(v) for v in row] for row in outcome.rows]
        return [list(outcome.names), *rows] if merged.get("columnNames") else rows


class D1Database:
    """One D1 database: a SQLite file shared by every Worker that binds it."""

    def __init__(
        self,
        path: Path | str,
        *,
        name: str = "db",
        offload: bool = False,
        faults: FaultInjector | None = None,
    ) -> None:
        self.name = name
        self._faults = faults
        self._path = str(path)
        self._conn: sqlite3.Connection = open_state_db(path)
        self._conn.execute("PRAGMA foreign_keys=ON")
        # The read model's job table carries a dozen indexes; with SQLite's default 2 MiB page cache every
        # projected upsert re-reads index pages from the OS. 32 MiB at most, filled only as the file grows.
        self._conn.execute("PRAGMA cache_size=-32768")
        self._guard = SqliteGuard(self._conn, LIMITS, enforcing=False)  # enforced per application statement
        self._page_size: int | None = None
        self._thread = ThreadPoolExecutor(1, thread_name_prefix=f"d1-{name}") if offload else None
        self.usage: Usage | None = None
        """Where this database's queries and rows are metered (set by the runtime; ADR-0130)."""
        self._written_rows = WrittenRows(self._conn, self._guard.trusted)
        self._last_rowid: int | None = 0

    async def call(self, work: Callable[[], _T]) -> _T:
        """Run ``work`` against the database as outside I/O: on the database's thread when offloaded.

        A ``d1`` fault armed on this database makes the call fail before ``work`` runs (an outage).
        """
        faults = self._faults
        if faults is not None and faults.strike(D1_OUTAGE, self.name):
            await asyncio.sleep(0)
            raise D1Error(D1_OUTAGE_MESSAGE)
        if self._thread is None:
            await asyncio.sleep(0)
            return work()
        return await asyncio.get_running_loop().run_in_executor(self._thread, work)

    @property
    def connection(self) -> sqlite3.Connection:
        """The underlying connection (for migrations and tests)."""
        return self._conn

    @contextmanager
    def checked(self) -> Generator[None]:
        """Check statements run on ``connection`` in the block as D1 checks an application's."""
        self._guard.enforcing = True
        try:
            yield
        finally:
            self._guard.enforcing = False

    def prepare(self, sql: str) -> D1PreparedStatement:
        """A statement for ``sql``."""
        if not isinstance(sql, str) or not sql.strip():  # pyright: ignore[reportUnnecessaryIsInstance]
            raise D1Error("D1_ERROR: prepare() needs a non-empty SQL string")
        return D1PreparedStatement(self, sql)

    def execute(self, statement: D1PreparedStatement) -> _Outcome:
        """Run one statement now (used by the statement methods)."""
        started = time.perf_counter()
        before = self._conn.total_changes
        guard = self._guard
        guard.enforcing = True
        try:
            cursor = self._conn.execute(statement.sql, statement.params)
            rows = cursor.fetchall()
        except (sqlite3.Error, ValueError, OverflowError, MemoryError) as exc:  # MemoryError: SQLITE_NOMEM
            raise D1Error(f"D1_ERROR: {describe(exc)}") from exc
        finally:
            guard.enforcing = False
        names = [d[0] for d in cursor.description] if cursor.description else []
        changes = self._conn.total_changes - before
        last_rowid, self._last_rowid = self._last_rowid, cursor.lastrowid
        usage = self.usage
        if usage is not None:  # each statement is one query, a batch's included
            usage.d1_queries += 1
            usage.d1_rows_read += max(len(rows), changes)
            if changes:
                usage.d1_rows_written += self._written_rows.count(
                    statement.sql,
                    statement.params,
                    cursor.rowcount,
                    changes,
                    cursor.lastrowid if cursor.lastrowid != last_rowid else None,
                )
        return _Outcome(names, rows, changes, cursor.lastrowid or 0, (time.perf_counter() - started) * 1000)

    def result(self, outcome: _Outcome, size_after: int | None = None) -> JsDict:
        """The SDK's result object for one executed statement (``size_after`` defaults to the size now)."""
        rows = [JsDict(zip(outcome.names, (_js_value(v) for v in row), strict=True)) for row in outcome.rows]
        # Keys in the order workerd's D1 API answers them (tests/shapes records it).
        meta = JsDict(
            served_by="tsumugi-dev",
            duration=outcome.ms,
            changes=outcome.changes,
            last_row_id=outcome.last_row_id,
            changed_db=outcome.changes > 0,
            size_after=self._size() if size_after is None else size_after,
            rows_read=len(outcome.rows),
            rows_written=outcome.changes,
        )
        return JsDict(success=True, meta=meta, results=rows)

    def _size(self) -> int:
        if self._page_size is None:  # fixed once the file exists; the page count is what changes
            self._page_size = int(self._conn.execute("PRAGMA page_size -- runtime").fetchone()[0])
        # Text no application sends: a statement cached here unchecked is never reused for one (D1 refuses it).
        return int(self._conn.execute("PRAGMA page_count -- runtime").fetchone()[0]) * self._page_size

    async def batch(self, statements: Sequence[D1PreparedStatement]) -> list[JsDict]:
        """Run ``statements`` in one transaction: all of them apply, or (when one fails) none does.

        Each statement counts as one query of the invocation's 1,000 (D1's limits apply per statement).
        """
        _charge(len(statements))
        return await self.call(lambda: self._batch(statements))

    def _batch(self, statements: Sequence[D1PreparedStatement]) -> list[JsDict]:
        if not statements:
            raise D1Error("D1_ERROR: No SQL statements detected.")
        outcomes: list[_Outcome] = []
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in statements:
                outcomes.append(self.execute(statement))
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")
        # The batch is one transaction: every result reports the size after it (read once, not per statement).
        size = self._size()
        return [self.result(outcome, size) for outcome in outcomes]

    async def exec(self, query: str) -> JsDict:
        """Run the statements of each line without bindings; answers ``count`` (lines) and ``duration``.

        As workerd's D1 API does (``d1-api.ts`` ``exec``): the text is split into lines, each line is one query
        (which may hold several statements); the first failing line stops it with ``D1_EXEC_ERROR``.
        """
        _charge(len(split_statements(query)))
        return await self.call(lambda: self._exec(query))

    def _exec(self, query: str) -> JsDict:
        started = time.perf_counter()
        lines = query.strip().split("\n")
        for number, line in enumerate(lines, start=1):
            try:
                for statement in split_statements(line):
                    self.execute(D1PreparedStatement(self, statement))
            except D1Error as error:
                reason = str(error).removeprefix("D1_ERROR: ")
                raise D1Error(f"D1_EXEC_ERROR: Error in line {number}: {line}: {reason}") from error
        return JsDict(count=len(lines), duration=(time.perf_counter() - started) * 1000)

    def dump(self) -> bytes:
        """The whole database as SQL text (``withSession``/``dump`` stand-in for tools)."""
        return "\n".join(self._conn.iterdump()).encode()

    def close(self) -> None:
        """Finish the calls under way, then close the file."""
        if self._thread is not None:
            self._thread.shutdown(wait=True)
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def split_statements(script: str) -> list[str]:
    """Split SQL text into complete statements (comments and blank pieces dropped)."""
    statements: list[str] = []
    current = ""
    for piece in script.split(";"):
        current += piece + ";"
        if sqlite3.complete_statement(current):
            if current.strip().strip(";").strip() and not _only_comments(current):
                statements.append(current.strip())
            current = ""
    return statements


def _only_comments(statement: str) -> bool:
    lines = [line.strip() for line in statement.strip().rstrip(";").splitlines()]
    return all(not line or line.startswith("--") for line in lines)


def apply_d1_migrations(db: D1Database, migrations_dir: Path) -> list[str]:
    """Apply the ``*.sql`` files of ``migrations_dir`` not yet in ``d1_migrations``, in name order.

    Each file runs in its own transaction together with its ledger row, as ``wrangler d1 migrations apply``
    records it. Returns the names applied now.
    """
    conn = db.connection
    conn.execute(
        "CREATE TABLE IF NOT EXISTS d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, "
        "applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)"
    )
    done = {str(r[0]) for r in conn.execute("SELECT name FROM d1_migrations").fetchall()}
    applied: list[str] = []
    if not migrations_dir.is_dir():
        return applied
    for path in sorted(migrations_dir.glob("*.sql")):
        if path.name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            with db.checked():  # a migration runs through D1's query API on Cloudflare: the same rules apply
                for statement in split_statements(path.read_text()):
                    conn.execute(statement)
            conn.execute("INSERT INTO d1_migrations (name) VALUES (?)", (path.name,))
        except sqlite3.Error as exc:
            conn.execute("ROLLBACK")
            raise D1Error(f"D1_ERROR: migration {path.name} failed: {describe(exc)}") from exc
        conn.execute("COMMIT")
        applied.append(path.name)
    return applied
