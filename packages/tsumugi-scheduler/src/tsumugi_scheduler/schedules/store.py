"""The Scheduler Durable Object's SQLite: one row per schedule, the next due found through a partial index.

``schedule_due`` indexes ``next_run_at`` of the rows that are not paused, so the due rows of a tick and the
next alarm instant cost O(log n) in the number of schedules (ADR-0079). The spec is stored as JSON (a
`ScheduleSpec`); the bookkeeping columns are the original's (docs/reference/original.md §5.3) plus ``source``
and ``paused``.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from tsumugi_core.schedule_plan import StoredSchedule
from tsumugi_core.schedule_spec import ScheduleSource, ScheduleSpec
from tsumugi_scheduler.json_batches import json_arrays, read_per_row, uniform_columns
from tsumugi_scheduler.shard.json_rows import decoded_rows
from tsumugi_scheduler.shard.port import SqlLike

__all__ = ["SCHEDULE_DDL", "DueRow", "FireRecord", "ScheduleRow", "ScheduleStore"]

SCHEDULE_DDL: Final = (
    """CREATE TABLE IF NOT EXISTS schedule (
        name TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        spec TEXT NOT NULL,
        next_run_at INTEGER NOT NULL,
        paused INTEGER NOT NULL DEFAULT 0,
        last_run_at INTEGER,
        last_fired_at INTEGER,
        last_job_id TEXT,
        last_run_id TEXT,
        last_skipped_at INTEGER,
        skipped_count INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    ) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS schedule_due ON schedule (next_run_at, name) WHERE paused = 0",
    "CREATE TABLE IF NOT EXISTS schedule_setting (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
)
_COLUMNS: Final = (
    "name, source, spec, next_run_at, paused, last_run_at, last_fired_at, last_job_id, last_run_id, "
    "last_skipped_at, skipped_count, last_error, created_at, updated_at"
)
_FIRED_FIELDS: Final = ("name", "occurrence", "next_at", "job_id", "run_id", "error")
_RECORD_FIRED: Final = (
    "UPDATE schedule SET last_run_at = {occurrence}, last_fired_at = ?2, "
    "last_job_id = coalesce({job_id}, last_job_id), last_run_id = coalesce({run_id}, last_run_id), "
    "last_error = {error}, "
    "next_run_at = CASE WHEN next_run_at = {occurrence} THEN {next_at} ELSE next_run_at END, updated_at = ?2 "
    "FROM (SELECT {read} FROM json_each(?1)) AS r WHERE schedule.name = r.name"
)
"""Fired rows, each ``[name, occurrence, next_run_at, job_id, run_id, error]``: `_fired_statements` binds a
value every row holds alike once and reads the rest from each row (ADR-0167)."""
_fired_texts: dict[tuple[int, ...], str] = {}


def _fired_text(shared: tuple[int, ...]) -> str:
    text = _fired_texts.get(shared)
    if text is None:
        read = [i for i in range(len(_FIRED_FIELDS)) if i not in shared]
        columns = (
            ["value AS name"]
            if len(read) == 1
            else [f"value ->> {k} AS {_FIRED_FIELDS[i]}" for k, i in enumerate(read)]
        )
        names = {_FIRED_FIELDS[i]: f"?{n}" for n, i in enumerate(shared, 3)}
        text = _RECORD_FIRED.format(
            read=", ".join(columns), **{f: names.get(f, f"r.{f}") for f in _FIRED_FIELDS[1:]}
        )
        _fired_texts[shared] = text
    return text


def _fired_statements(fired: list[tuple[Any, ...]], now: int) -> list[tuple[str, tuple[Any, ...]]]:
    columns = list(zip(*fired, strict=True))
    shared = uniform_columns(columns, range(1, len(_FIRED_FIELDS)))
    text = _fired_text(shared)
    constants = tuple(columns[i][0] for i in shared)
    read = [i for i in range(len(_FIRED_FIELDS)) if i not in shared]
    return [(text, (rows, now, *constants)) for rows in json_arrays(read_per_row(fired, read))]


_RECORD_SKIPPED: Final = (
    "UPDATE schedule SET skipped_count = skipped_count + 1, last_skipped_at = ?, "
    "next_run_at = CASE WHEN next_run_at = r.occurrence THEN r.next_at ELSE next_run_at END, updated_at = ? "
    "FROM (SELECT value ->> 0 AS name, value ->> 1 AS occurrence, value ->> 2 AS next_at "
    "FROM json_each(?)) AS r WHERE schedule.name = r.name"
)
"""Skipped rows, one ``[name, occurrence, next_run_at]`` array each."""
_JSON_VALUE: Final = {"spec": "json(spec)", "paused": "json(iif(paused, 'true', 'false'))"}
_encoder = msgspec.json.Encoder()


class ScheduleRow(msgspec.Struct, frozen=True, kw_only=True):
    """A stored schedule with its bookkeeping."""

    name: str
    source: ScheduleSource
    spec: ScheduleSpec
    next_run_at: int
    paused: bool
    last_run_at: int | None
    last_fired_at: int | None
    last_job_id: str | None
    last_run_id: str | None
    last_skipped_at: int | None
    skipped_count: int
    last_error: str | None
    created_at: int
    updated_at: int

    def stored(self) -> StoredSchedule:
        """The view the pure decisions read."""
        return StoredSchedule(
            name=self.name, source=self.source, spec=self.spec, next_run_at=self.next_run_at
        )


class DueRow(msgspec.Struct, frozen=True, array_like=True):
    """What firing a due schedule reads of its row (`ScheduleStore.due`)."""

    name: str
    source: ScheduleSource
    spec: ScheduleSpec
    next_run_at: int
    last_job_id: str | None
    last_run_id: str | None

    def stored(self) -> StoredSchedule:
        """The view the pure decisions read."""
        return StoredSchedule(
            name=self.name, source=self.source, spec=self.spec, next_run_at=self.next_run_at
        )


_DUE: Final = (
    "SELECT '[' || json_quote(name) || ',' || json_quote(source) || ',' || spec || ',' || next_run_at || ',' || "
    "json_quote(last_job_id) || ',' || json_quote(last_run_id) || ']' AS r "
    "FROM schedule WHERE paused = 0 AND next_run_at <= ? ORDER BY next_run_at, name LIMIT ?"
)
"""A due row as the text of one JSON array of its `DueRow` fields, pieced together from the stored texts: the
spec is stored as JSON already, so no JSON is parsed or built in SQL, and a tick's rows are decoded by one
msgspec call."""
_DUE_ROWS: Final = msgspec.json.Decoder(list[DueRow])


class FireRecord(msgspec.Struct, frozen=True, kw_only=True):
    """What one firing (or skip) leaves on its row."""

    name: str
    occurrence: int
    next_run_at: int
    job_id: str | None = None
    run_id: str | None = None
    error: str | None = None
    skipped: bool = False


_ROW_JSON: Final = (
    "json_object("
    + ", ".join(
        f"'{name}', {_JSON_VALUE.get(name, name)}" for name in (n.strip() for n in _COLUMNS.split(","))
    )
    + ") AS r"
)
"""A schedule row as the text of one JSON object of its `ScheduleRow` fields (the spec nested as stored): a
tick's due rows are decoded by one msgspec call, not built field by field (ADR-0167)."""
_ROWS: Final = msgspec.json.Decoder(list[ScheduleRow])


def _rows(cursor: Any) -> list[ScheduleRow]:
    return decoded_rows(cursor, "r", _ROWS)


class ScheduleStore:
    """CRUD over the object's ``schedule`` table; every method is one statement or one transaction."""

    def __init__(self, sql: SqlLike) -> None:
        """Open (and create when missing) the tables."""
        self._sql = sql
        for ddl in SCHEDULE_DDL:
            sql.exec(ddl)

    def setting(self, key: str) -> str | None:
        """A stored setting."""
        rows = self._sql.exec("SELECT value FROM schedule_setting WHERE key = ?", key).toArray()
        return str(rows[0]["value"]) if rows else None

    def put_setting(self, key: str, value: str) -> None:
        """Store a setting."""
        self._sql.exec(
            "INSERT INTO schedule_setting (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            key,
            value,
        )

    def get(self, name: str) -> ScheduleRow | None:
        """One schedule."""
        rows = _rows(self._sql.exec(f"SELECT {_ROW_JSON} FROM schedule WHERE name = ?", name))
        return rows[0] if rows else None

    def all(self) -> list[ScheduleRow]:
        """Every schedule, by name."""
        return _rows(self._sql.exec(f"SELECT {_ROW_JSON} FROM schedule ORDER BY name"))

    def page(self, after: str, limit: int) -> list[ScheduleRow]:
        """Up to ``limit`` schedules named after ``after``, by name (the primary key: a seek, not a scan)."""
        query = f"SELECT {_ROW_JSON} FROM schedule WHERE name > ? ORDER BY name LIMIT ?"
        return _rows(self._sql.exec(query, after, limit))

    def count_runtime(self) -> int:
        """How many run-time schedules this shard holds."""
        rows = self._sql.exec("SELECT count(*) AS n FROM schedule WHERE source = ?", "runtime").toArray()
        return int(rows[0]["n"]) if rows else 0

    def due(self, now: int, limit: int) -> list[DueRow]:
        """Up to ``limit`` unpaused rows due at ``now``, oldest first (the ``schedule_due`` index): what firing
        them reads."""
        return decoded_rows(self._sql.exec(_DUE, now, limit), "r", _DUE_ROWS)

    def next_due_at(self) -> int | None:
        """The earliest ``next_run_at`` of an unpaused row."""
        rows = self._sql.exec("SELECT min(next_run_at) AS at FROM schedule WHERE paused = 0").toArray()
        value = rows[0]["at"] if rows else None
        return None if value is None else int(value)

    def insert(
        self,
        *,
        name: str,
        source: ScheduleSource,
        spec: ScheduleSpec,
        next_run_at: int,
        now: int,
        paused: bool = False,
    ) -> None:
        """A new row."""
        self._sql.exec(
            "INSERT INTO schedule (name, source, spec, next_run_at, paused, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            name,
            source.value,
            _encoder.encode(spec).decode(),
            next_run_at,
            int(paused),
            now,
            now,
        )

    def replace_spec(
        self, *, name: str, source: ScheduleSource, spec: ScheduleSpec, next_run_at: int, now: int
    ) -> None:
        """A changed definition; pause state and bookkeeping stay."""
        self._sql.exec(
            "UPDATE schedule SET source = ?, spec = ?, next_run_at = ?, updated_at = ? WHERE name = ?",
            source.value,
            _encoder.encode(spec).decode(),
            next_run_at,
            now,
            name,
        )

    def delete(self, name: str) -> bool:
        """Remove a row; False when there was none."""
        cursor = self._sql.exec("DELETE FROM schedule WHERE name = ? RETURNING name", name)
        return bool(cursor.toArray())

    def set_paused(self, name: str, paused: bool, next_run_at: int, now: int) -> None:
        """Pause or resume (with the next run a resume computes)."""
        self._sql.exec(
            "UPDATE schedule SET paused = ?, next_run_at = ?, updated_at = ? WHERE name = ?",
            int(paused),
            next_run_at,
            now,
            name,
        )

    def record(self, records: list[FireRecord], now: int) -> None:
        """What a tick fired and skipped, in one transaction: one statement for the fired rows and one for the
        skipped ones (per `BATCH_BYTES` of JSON), whatever their number (ADR-0165).

        The next run moves only when the row still waits for the occurrence that fired: a definition changed
        or a resume while the enqueue was in flight keeps its own next run. ``records`` name each row once.
        """
        fired = [
            (r.name, r.occurrence, r.next_run_at, r.job_id, r.run_id, r.error)
            for r in records
            if not r.skipped
        ]
        skipped = [[r.name, r.occurrence, r.next_run_at] for r in records if r.skipped]

        def apply() -> None:
            if fired:
                for statement, params in _fired_statements(fired, now):
                    self._sql.exec(statement, *params)
            for text in json_arrays(skipped):
                self._sql.exec(_RECORD_SKIPPED, now, now, text)

        if fired or skipped:
            self._sql.transaction_sync(apply)

    def record_trigger(
        self, name: str, at: int, job_id: str | None, error: str | None, run_id: str | None = None
    ) -> None:
        """A "run now": last run and job (or flow run), the next run unchanged."""
        self._sql.exec(
            "UPDATE schedule SET last_run_at = ?, last_fired_at = ?, last_job_id = coalesce(?, last_job_id), "
            "last_run_id = coalesce(?, last_run_id), last_error = ?, updated_at = ? WHERE name = ?",
            at,
            at,
            job_id,
            run_id,
            error,
            at,
            name,
        )
