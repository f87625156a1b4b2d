"""Rows written as workerd's SQLite counts them, on stdlib ``sqlite3`` (ADR-0130).

workerd builds SQLite with a patch (patches/sqlite/0001-row-counts-plain.patch in cloudflare/workerd) that adds
two statement counters, ``LIBSQL_STMTSTATUS_ROWS_READ`` and ``LIBSQL_STMTSTATUS_ROWS_WRITTEN``; the Durable
Object SQL API and D1 report and bill them as ``rowsRead`` / ``rowsWritten``. The patch adds one row written
for each ``OP_Insert`` and each ``OP_IdxInsert`` on a real (not ephemeral) b-tree, each counted ``OP_Delete``
and each row a ``DELETE`` without ``WHERE`` clears; an index entry removed (``OP_IdxDelete``) is not counted.
So an INSERT into a table with two indexes writes three rows, an UPDATE writes one row plus one for each
index that holds a changed column, a DELETE writes one.

Stdlib ``sqlite3`` has no such counter. What it has: ``total_changes`` (rows inserted, updated and deleted,
those made by triggers included), ``rowcount`` (those the statement itself changed), ``lastrowid`` and
``EXPLAIN`` (the statement's program). `WrittenRows` reads each statement's program once and splits it into
write paths, each ending at an ``Insert`` of a table row and holding the ``IdxInsert`` instructions before it
(ephemeral tables left out). A plain INSERT or UPDATE has one path; an upsert two (its DO UPDATE path first,
then its INSERT path), and for a one-row upsert the moved ``lastrowid`` tells which ran (several rows: the
mean of both). Each row the statement changed costs its path's rows; a DELETE costs one; an AUTOINCREMENT
table's ``sqlite_sequence`` row costs one per statement; each row a trigger changed costs one (its program
is not split out, so a trigger's own index entries are not seen). Known over-count: a partial index whose ``WHERE`` the row fails is skipped at run time but counted
here, so the figure is an upper bound for tables with partial indexes.

Rows read are not modelled this way: they are what the statement returned, or the rows it changed when more
(a lower bound of what SQLite scans; rows read cost a thousandth of rows written).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple

__all__ = ["WrittenRows"]

_EPHEMERAL_OPENERS = frozenset({"OpenEphemeral", "OpenAutoindex", "SorterOpen", "OpenPseudo", "OpenDup"})


_SET_CLAUSE = re.compile(r"\bSET\b(.*?)(?:\bFROM\b|\bWHERE\b|\bRETURNING\b|$)", re.I | re.S)
_LITERAL = re.compile(r"\s*('(?:[^']|'')*'|NULL|-?\d+(?:\.\d+)?)\s*", re.I)
_INDEX_WHERE = re.compile(r"\bWHERE\b(.*)$", re.I | re.S)
_MOST_UNKNOWN = 4
"""Most unknown columns a partial index's WHERE may read for its outcome to be worked out (2**4 trials)."""


class _Path(NamedTuple):
    """One write path: the table it writes and what one changed row costs on it."""

    table: str
    fixed: int
    """The table row and the index entries written whatever the row holds."""
    partial: tuple[str, ...]
    """WHERE clauses of partial indexes whose entry depends on the row (an INSERT path's, worked out per row)."""


class _Program(NamedTuple):
    paths: tuple[_Path, ...]
    bookkeeping: int
    """Rows written once per statement: ``sqlite_sequence`` of an AUTOINCREMENT table."""


class WrittenRows:
    """Rows written per statement on one connection: each statement's program read once, then cached."""

    def __init__(
        self, conn: sqlite3.Connection, trusted: Callable[[], AbstractContextManager[object]]
    ) -> None:
        self._conn = conn
        self._trusted = trusted
        self._programs: dict[str, _Program] = {}

    def count(
        self,
        statement: str,
        params: Sequence[Any],
        direct: int,
        changes: int,
        inserted_rowid: int | None = None,
    ) -> int:
        """Rows written by ``statement``, which changed ``direct`` rows itself (``cursor.rowcount``, SQLite's
        ``sqlite3_changes``) and ``changes`` in all (``total_changes`` before and after: its triggers' too).

        ``inserted_rowid``: the rowid the statement inserted when the connection's last inserted rowid moved
        (None: it inserted no rowid row). For a one-row upsert it tells which path ran; for a one-row insert
        it is the row whose partial indexes are looked at.
        """
        if changes <= 0:
            return 0
        direct = min(max(direct, 0), changes)
        program = self._programs.get(statement)
        if program is None:
            program = self._programs[statement] = self._program(statement, params)
        paths = program.paths
        if len(paths) == 1 or direct == 1:
            path = paths[-1] if len(paths) == 1 or inserted_rowid is not None else paths[0]
            rows = direct * path.fixed
            if path.partial:
                rows += self._partial_entries(path, direct, inserted_rowid)
        else:  # several rows through an upsert: the mean of its paths, partial indexes counted
            rows = round(direct * sum(p.fixed + len(p.partial) for p in paths) / len(paths))
        return rows + (changes - direct) + (program.bookkeeping if direct else 0)

    def _partial_entries(self, path: _Path, direct: int, rowid: int | None) -> int:
        if direct != 1 or rowid is None:
            return direct * len(path.partial)  # rows not known: every entry counted (an upper bound)
        checks = ", ".join(f"({where}) IS TRUE" for where in path.partial)
        try:
            with self._trusted():
                row = self._conn.execute(
                    f'SELECT {checks} FROM "{path.table}" WHERE rowid = ?', (rowid,)
                ).fetchone()
        except sqlite3.Error:
            return len(path.partial)
        return len(path.partial) if row is None else sum(1 for held in row if held)

    def _program(self, statement: str, params: Sequence[Any]) -> _Program:
        """The statement's write paths (an upsert has two: DO UPDATE, then INSERT) and its bookkeeping rows.

        Trigger programs, listed after the statement's own with their addresses starting again, are left out:
        their rows count one each. An UPDATE path's partial indexes are settled here from the SET clause's
        literal values (`_may_hold`); an INSERT path's wait for the row.
        """
        try:
            with self._trusted():  # the program does not depend on the values: the statement's own bind
                listing = self._conn.execute("EXPLAIN " + statement, params).fetchall()
                partial_by_root = self._partial_indexes()
        except sqlite3.Error:  # a statement EXPLAIN cannot take (none the SQL APIs run): one row per change
            return _Program((_Path("", 1, ()),), 0)
        main: list[Any] = []
        for row in listing:
            if main and row[0] <= main[-1][0]:
                break  # a trigger's program begins
            main.append(row)
        # Jumps run code out of address order: an ephemeral table may be opened after its first use in the listing.
        ephemeral = {row[2] for row in main if row[1] in _EPHEMERAL_OPENERS}
        root_of = {row[2]: row[3] for row in main if row[1] == "OpenWrite"}
        raw: list[tuple[str, int, list[str]]] = []
        fixed, partial, bookkeeping = 0, list[str](), 0
        for row in main:
            opcode, cursor = row[1], row[2]
            if cursor in ephemeral:
                continue
            if opcode == "IdxInsert":
                where = partial_by_root.get(root_of.get(cursor, -1))
                if where is None:
                    fixed += 1
                else:
                    partial.append(where)
            elif opcode == "Insert" and row[5] is None:
                bookkeeping += 1
            elif opcode == "Insert":  # a table row, after the index entries of the same path
                raw.append((str(row[5]), 1 + fixed, partial))
                fixed, partial = 0, []
        if not raw:  # a DELETE (1 row per change), or a WITHOUT ROWID table written as index entries only
            return _Program((_Path("", max(1, fixed + len(partial)), ()),), bookkeeping)
        is_update = statement.lstrip().upper().startswith("UPDATE")
        literals = _set_literals(statement)
        paths: list[_Path] = []
        for number, (table, known, wheres) in enumerate(raw):
            update_path = is_update or (len(raw) > 1 and number == 0)
            if update_path:  # settled now: entries whose WHERE the new values cannot meet are skipped
                known += sum(1 for where in wheres if self._may_hold(table, where, literals))
                wheres = []
            paths.append(_Path(table, known, tuple(wheres)))
        return _Program(tuple(paths), bookkeeping)

    def _partial_indexes(self) -> dict[int, str]:
        found: dict[int, str] = {}
        for root, sql in self._conn.execute(
            "SELECT rootpage, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
        ):
            match = _INDEX_WHERE.search(sql)
            if match is not None:
                found[int(root)] = match.group(1).strip()
        return found

    def _may_hold(self, table: str, where: str, literals: dict[str, str]) -> bool:
        """False when ``where`` is false for every row the SET clause's literal values can make.

        Columns the clause does not set are unknown: each is tried as NULL and as a non-NULL value, and the
        entry is skipped only when no trial makes ``where`` true or unknown.
        """
        try:
            with self._trusted():
                columns = [row[1] for row in self._conn.execute(f'PRAGMA table_info("{table}")')]
        except sqlite3.Error:
            return True
        words = {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", where)}
        read = [c for c in columns if c.lower() in words]
        unknown = [c for c in read if c.lower() not in literals]
        if len(unknown) > _MOST_UNKNOWN:
            return True
        for trial in range(2 ** len(unknown)):
            values: list[str] = []
            for column in read:
                if column.lower() in literals:
                    value = literals[column.lower()]
                else:
                    value = "NULL" if trial >> unknown.index(column) & 1 else "x'00'"
                values.append(f'{value} AS "{column}"')
            select = f"SELECT ({where}) IS NOT FALSE FROM (SELECT {', '.join(values) or '1'})"
            try:
                with self._trusted():
                    if self._conn.execute(select).fetchone()[0]:
                        return True
            except sqlite3.Error:
                return True
        return False


def _set_literals(statement: str) -> dict[str, str]:
    """``column -> literal`` of the SET clause's plain assignments (``state = 'QUEUED'``, ``x = NULL``, ``n = 1``)."""
    match = _SET_CLAUSE.search(statement)
    if match is None:
        return {}
    found: dict[str, str] = {}
    for assignment in _top_level_split(match.group(1)):
        name, sep, value = assignment.partition("=")
        if sep and _LITERAL.fullmatch(value):
            found[name.strip().strip('"').lower()] = value.strip()
    return found


def _top_level_split(text: str) -> list[str]:
    parts: list[str] = []
    depth, quoted, start = 0, False, 0
    for index, char in enumerate(text):
        if char == "'":
            quoted = not quoted
        elif not quoted and char == "(":
            depth += 1
        elif not quoted and char == ")":
            depth -= 1
        elif not quoted and depth == 0 and char == ",":
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts
