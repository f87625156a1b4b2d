"""Rows written as workerd's SQLite counts them, on stdlib ``sqlite3`` (ADR-0131).

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

import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

__all__ = ["WrittenRows"]

_EPHEMERAL_OPENERS = frozenset({"OpenEphemeral", "OpenAutoindex", "SorterOpen", "OpenPseudo", "OpenDup"})


class WrittenRows:
    """Rows written per statement on one connection: each statement's program read once, then cached."""

    def __init__(
        self, conn: sqlite3.Connection, trusted: Callable[[], AbstractContextManager[object]]
    ) -> None:
        self._conn = conn
        self._trusted = trusted
        self._programs: dict[str, tuple[tuple[int, ...], int]] = {}

    def count(
        self, statement: str, params: Sequence[Any], direct: int, changes: int, inserted: bool | None = None
    ) -> int:
        """Rows written by ``statement``, which changed ``direct`` rows itself (``cursor.rowcount``, SQLite's
        ``sqlite3_changes``) and ``changes`` in all (``total_changes`` before and after: its triggers' too).

        ``inserted``: for an upsert that changed one row, whether it took the INSERT path (the connection's
        last inserted rowid moved) rather than its DO UPDATE path; None when unknown.
        """
        if changes <= 0:
            return 0
        direct = min(max(direct, 0), changes)
        program = self._programs.get(statement)
        if program is None:
            program = self._programs[statement] = self._program(statement, params)
        paths, bookkeeping = program
        if len(paths) == 1:
            per_row = float(paths[0])
        elif direct == 1 and inserted is not None:  # an upsert's DO UPDATE comes first in its program
            per_row = float(paths[-1] if inserted else paths[0])
        else:
            per_row = sum(paths) / len(paths)
        return round(direct * per_row) + (changes - direct) + (bookkeeping if direct else 0)

    def _program(self, statement: str, params: Sequence[Any]) -> tuple[tuple[int, ...], int]:
        """(rows one changed row costs on each write path, rows written once per statement).

        Paths: an upsert has two (DO UPDATE, then INSERT). Once per statement: the ``sqlite_sequence`` rows an
        AUTOINCREMENT table's insert updates (an ``Insert`` naming no table). Trigger programs, listed after
        the statement's own with their addresses starting again, are left out: their rows count one each.
        """
        try:
            with self._trusted():  # the program does not depend on the values: the statement's own bind
                listing = self._conn.execute("EXPLAIN " + statement, params).fetchall()
        except sqlite3.Error:  # a statement EXPLAIN cannot take (none the SQL APIs run): one row per change
            return (1,), 0
        main: list[Any] = []
        for row in listing:
            if main and row[0] <= main[-1][0]:
                break  # a trigger's program begins
            main.append(row)
        # Jumps run code out of address order: an ephemeral table may be opened after its first use in the listing.
        ephemeral = {row[2] for row in main if row[1] in _EPHEMERAL_OPENERS}
        paths: list[int] = []
        index_inserts = bookkeeping = 0
        for row in main:
            opcode, cursor = row[1], row[2]
            if cursor in ephemeral:
                continue
            if opcode == "IdxInsert":
                index_inserts += 1
            elif opcode == "Insert" and row[5] is None:
                bookkeeping += 1
            elif opcode == "Insert":  # a table row, after the index entries of the same path
                paths.append(1 + index_inserts)
                index_inserts = 0
        if not paths:  # a DELETE (1 row per change), or a WITHOUT ROWID table written as index entries only
            return (max(1, index_inserts),), bookkeeping
        return tuple(paths), bookkeeping
