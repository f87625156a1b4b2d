"""``SqlShardStore``: the storage port over the Durable Object SQL API (``exec`` + ``transaction_sync``).

SQL stays CRUD; every decision is made by the engine with tsumugi_core. Each statement is bounded by an
index or a LIMIT, so no command reads the backlog.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

import msgspec

from tsumugi_core.options import RateLimit
from tsumugi_core.states import JobState
from tsumugi_core.throttle import TokenBucket
from tsumugi_scheduler.json_batches import json_array_counts, json_arrays
from tsumugi_scheduler.shard.json_rows import decoded_rows
from tsumugi_scheduler.shard.key_heads import head_for_insert, promote_after_dispatch, settle
from tsumugi_scheduler.shard.key_room import KeyRoom
from tsumugi_scheduler.shard.level_walk import ready_rows
from tsumugi_scheduler.shard.new_rows import insert_statements
from tsumugi_scheduler.shard.port import (
    CompletedJob,
    DueJobs,
    FeedKind,
    JobChange,
    Overview,
    ReadyWindow,
    SqlLike,
)
from tsumugi_scheduler.shard.queries import (
    ACTIVE_EXPIRY,
    COMPLETE_MANY,
    COMPLETE_QUERY,
    DISPATCH_QUERY,
    DISPATCHED_NAMES,
    HELD_KEYS,
    INFLIGHT,
    INSERT_JOB,
    JOB_FEED,
    JOB_FEED_UP_TO,
    OVERVIEW_QUERY,
    READY_COUNT,
    START_QUERY,
    STATE_INDEX,
    SWEEPABLE,
)
from tsumugi_scheduler.shard.records import EnqueueResult
from tsumugi_scheduler.shard.schema import AttemptRow, JobRow
from tsumugi_scheduler.shard.schema_migration import SCHEMA_VERSION_KEY, create_or_migrate

__all__ = ["PROJECTED_SEQ_KEY", "SqlShardStore"]

T = TypeVar("T")

PROJECTED_SEQ_KEY: Final = "projected_seq"
MAX_ATTEMPTS_PER_SNAPSHOT: Final = 20
_BIND_CHUNK: Final = 90  # workerd refuses statements with more than 100 bound parameters
_OUTBOX_COLUMNS: Final = {"notice": ("target", "body"), "run_event": ("run_id", "body")}
_BULK_BODY_CHARS: Final = 64 * 1024
"""Bodies up to this size go in a shared JSON text (`SqlShardStore.atomically`); a larger one alone."""
_JOB_VALUES: Final[msgspec.json.Decoder[list[tuple[Any, ...]]]] = msgspec.json.Decoder(
    list.__class_getitem__(tuple.__class_getitem__(tuple(f.type for f in msgspec.structs.fields(JobRow))))
)
"""A feed page: per row a tuple typed field by field as `JobRow` (its enums and optionals decoded), which
``JobRow(*values)`` takes by position (ADR-0180)."""
_ARRAYS: Final = msgspec.json.Decoder(list[tuple[Any, ...]])


_HOLD_KEY: Final = "INSERT OR REPLACE INTO key_hold (job_id, attempt, until, key) VALUES (?, ?, ?, ?)"
_COMPLETED: Final = msgspec.json.Decoder(list[tuple[CompletedJob, int]])
"""`COMPLETE_MANY`'s rows: each completed job and the seq its change took."""


def _chunks(items: Sequence[str]) -> list[Sequence[str]]:
    return [items[i : i + _BIND_CHUNK] for i in range(0, len(items), _BIND_CHUNK)]


class SqlShardStore:
    """The JobShard storage ports (``ShardStore`` and ``FeedStore``) over one Durable Object's SQL database."""

    def __init__(self, sql: SqlLike) -> None:
        """Create the schema if needed and seed the feed counter."""
        self._sql = sql
        self._update_sql: dict[tuple[str, ...], str] = {}
        self._depth = 0
        self._outbox_rows: dict[str, list[tuple[str, str]]] = {"notice": [], "run_event": []}
        """Notice and run-event rows recorded inside `atomically`, inserted together before it commits."""
        self._inserted: dict[str, int] = {"notice": 0, "run_event": 0}
        """How many of `_outbox_rows` are inserted already (a read of their table flushes them early)."""
        sql.transaction_sync(lambda: create_or_migrate(sql))
        top = self._scalar("SELECT MAX(seq) AS v FROM job") or 0
        cursor = self.settings().get(PROJECTED_SEQ_KEY)
        # Swept rows may have held the highest seq; new changes must still sort after the projection cursor.
        self._seq = max(int(top), int(cursor or 0))

    def _scalar(self, query: str, *params: Any) -> Any:
        return self._sql.exec(query, *params).one()["v"]

    def next_seq(self) -> int:
        """The next position in the job feed."""
        self._seq += 1
        return self._seq

    def last_seq(self) -> int:
        """The highest position handed out so far (a rolled-back one included)."""
        return self._seq

    def atomically(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` in one transaction (nested calls nest).

        The notice and run-event rows ``fn`` records are inserted together as the outermost call ends, a few
        statements instead of one per job (a batch of reports of a 1,000-child fan-out is a statement, not
        1,000): in the same transaction, in the order recorded; a call that fails drops the rows it recorded
        with its writes.
        """
        recorded = {kind: len(rows) for kind, rows in self._outbox_rows.items()}
        inserted = dict(self._inserted)
        self._depth += 1

        def body() -> T:
            result = fn()
            if self._depth == 1:
                self._flush_outbox()
            return result

        try:
            result = self._sql.transaction_sync(body)
        except BaseException:
            # Its rows are gone, and so are those it inserted early (rolled back with it): they go again.
            for kind, rows in self._outbox_rows.items():
                del rows[recorded[kind] :]
            self._inserted = inserted
            raise
        finally:
            self._depth -= 1
        if self._depth == 0:
            for rows in self._outbox_rows.values():
                rows.clear()
            self._inserted = dict.fromkeys(self._inserted, 0)
        return result

    def _flush_outbox(self) -> None:
        """Insert the recorded notice and run-event rows not inserted yet (at the outermost commit, and before a
        read of their tables)."""
        for kind, (first, second) in _OUTBOX_COLUMNS.items():
            rows = self._outbox_rows[kind][self._inserted[kind] :]
            if not rows:
                continue
            self._inserted[kind] += len(rows)
            if all(len(body) <= _BULK_BODY_CHARS for _, body in rows):
                for text in json_arrays([list(r) for r in rows]):
                    self._sql.exec(
                        f"INSERT INTO {kind} ({first}, {second}) SELECT json_extract(value, '$[0]'),"
                        " json_extract(value, '$[1]') FROM json_each(?) ORDER BY key",
                        text,
                    )
            else:  # a large body keeps its own statement (its JSON escaping could pass the 4 MiB a value may hold)
                for a, b in rows:
                    self._sql.exec(f"INSERT INTO {kind} ({first}, {second}) VALUES (?, ?)", a, b)

    def settings(self) -> dict[str, str]:
        """All stored settings (the schema version is the schema's own, not a setting)."""
        return {
            row["key"]: row["value"]
            for row in self._sql.exec(
                "SELECT key, value FROM setting WHERE key != ?", SCHEMA_VERSION_KEY
            ).toArray()
        }

    def save_setting(self, key: str, value: str | None) -> None:
        """Store or drop one setting."""
        if value is None:
            self._sql.exec("DELETE FROM setting WHERE key = ?", key)
        else:
            self._sql.exec(
                "INSERT INTO setting (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                key,
                value,
            )

    def admit(self, row: JobRow, unique_until: int | None, now: int, *, pinned: bool = True) -> EnqueueResult:
        """Insert ``row`` unless its id exists or a live reservation holds its unique_key.

        ``pinned=False`` says the id was just generated, so the existence check can be skipped.
        """
        if pinned and self._sql.exec("SELECT id FROM job WHERE id = ?", row.id).toArray():
            return EnqueueResult(id=row.id, created=False)
        if row.unique_key is not None and unique_until is not None:
            # One statement reserves a free key or takes over an expired one; a live holder returns no row.
            won = self._sql.exec(
                "INSERT INTO unique_key (key, job_id, expires_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE"
                " SET job_id = excluded.job_id, expires_at = excluded.expires_at WHERE unique_key.expires_at <= ?"
                " RETURNING job_id",
                row.unique_key,
                row.id,
                unique_until,
                now,
            ).toArray()
            if not won:
                holder = self._sql.exec("SELECT job_id FROM unique_key WHERE key = ?", row.unique_key).one()
                return EnqueueResult(id=str(holder["job_id"]), created=False)
        self._insert(row)
        return EnqueueResult(id=row.id, created=True)

    def insert_new(self, rows: Sequence[JobRow]) -> None:
        """Insert rows that need no check first (ids known free, no unique_key, no concurrency_key): one
        statement per `BATCH_BYTES` of JSON, not one per row (ADR-0153), reading from each row only what
        differs between the rows (ADR-0167)."""
        for statement, params in insert_statements(rows):
            self._sql.exec(statement, *params)

    def existing(self, job_ids: Sequence[str]) -> set[str]:
        """Which of ``job_ids`` are stored: one statement per `BATCH_BYTES` of ids, not one per id."""
        found: set[str] = set()
        for text in json_arrays(job_ids):
            rows = self._sql.exec("SELECT id FROM job WHERE id IN (SELECT value FROM json_each(?))", text)
            found.update(str(r["id"]) for r in rows)
        return found

    def _insert(self, row: JobRow) -> None:
        if row.concurrency_key is not None and row.state == JobState.SCHEDULED:
            row = msgspec.structs.replace(row, key_head=head_for_insert(self._sql, row))
        params = list(msgspec.structs.astuple(row))
        params[STATE_INDEX] = str(row.state)  # a plain str binds on the shim's fast path
        self._sql.exec(INSERT_JOB, *params)

    def job(self, job_id: str) -> JobRow | None:
        """One job by id."""
        rows = self._sql.exec("SELECT * FROM job WHERE id = ?", job_id).toArray()
        return msgspec.convert(rows[0], JobRow) if rows else None

    def write(self, change: JobChange) -> bool:
        """Apply one compare-and-set change with its attempt, notice and run-event rows.

        A keyed job entering, leaving or moving among waiting jobs keeps its group's head right (ADR-0054).
        """
        columns = tuple(change.values)
        query = self._update_sql.get(columns)
        if query is None:
            assignments = ", ".join(f"{c} = ?" for c in columns)
            query = (
                f"UPDATE job SET {assignments}, seq = ? WHERE id = ? AND state = ?"
                " RETURNING concurrency_key AS k, priority AS p"
            )
            self._update_sql[columns] = query
        waiting = (
            change.expect_state == JobState.SCHEDULED or change.values.get("state") == JobState.SCHEDULED
        )
        before = self._priority(change.job_id) if waiting and "priority" in change.values else None
        rows = self._sql.exec(
            query, *change.values.values(), self.next_seq(), change.job_id, str(change.expect_state)
        ).toArray()
        if not rows:
            return False
        key = rows[0]["k"]
        if change.key_hold is not None and key is not None:
            self._sql.exec(_HOLD_KEY, change.job_id, *change.key_hold, str(key))
        if waiting and key is not None:
            if before is not None and before != int(rows[0]["p"]):
                settle(
                    self._sql, str(key), before, change.job_id
                )  # the group it left, before the one it joined
            settle(self._sql, str(key), int(rows[0]["p"]), change.job_id)
        self.record(change)
        return True

    def _priority(self, job_id: str) -> int | None:
        rows = self._sql.exec("SELECT priority FROM job WHERE id = ?", job_id).toArray()
        return int(rows[0]["priority"]) if rows else None

    def complete(
        self,
        job_id: str,
        attempt: int,
        now: int,
        result: str | None,
        bookkeeping: Callable[[CompletedJob], JobChange] | None = None,
    ) -> CompletedJob | None:
        """Compare-and-set: the live ``attempt`` of a QUEUED/RUNNING job ends COMPLETED; None if not live.

        The same row change ``transition`` makes for a success, without reading the row first; the rows
        ``bookkeeping`` builds from the completed job (attempt log, notices, run event) are appended after it.
        """
        rows = self._sql.exec(COMPLETE_QUERY, now, result, self.next_seq(), job_id, attempt - 1).toArray()
        if not rows:
            return None
        done = msgspec.convert(rows[0], CompletedJob)
        if bookkeeping is not None:
            self.record(bookkeeping(done))
        return done

    def complete_many(
        self,
        reports: Sequence[tuple[str, int, str | None]],
        now: int,
        bookkeeping: Callable[[CompletedJob], JobChange],
    ) -> dict[str, CompletedJob]:
        """`complete` for many ``(job_id, attempt, result)`` with distinct ids, in one statement per
        `BATCH_BYTES` of JSON; the jobs it completed by id, in report order of their seqs (ADR-0153)."""
        done: dict[str, CompletedJob] = {}
        rows_json = ([job_id, attempt - 1, result] for job_id, attempt, result in reports)
        for text, count in json_array_counts(rows_json):
            base = self._seq + 1
            self._seq += count  # one seq reserved a report: the one at index k takes base + k
            rows = decoded_rows(self._sql.exec(COMPLETE_MANY, now, base, text), "c", _COMPLETED)
            for job, _ in sorted(rows, key=lambda row: row[1]):
                done[job.id] = job
        for job in done.values():
            self.record(bookkeeping(job))
        return done

    def record(self, change: JobChange) -> None:
        """Append a change's attempt, notice and run-event rows (its values are not applied)."""
        if change.attempt is not None:
            a = change.attempt
            self._sql.exec(
                "INSERT OR REPLACE INTO attempt (job_id, attempt, state, started_at, finished_at, error)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                a.job_id,
                a.attempt,
                a.state,
                a.started_at,
                a.finished_at,
                a.error,
            )
        if self._depth == 0:  # outside `atomically`: at once
            for target, body in change.notices:
                self._sql.exec("INSERT INTO notice (target, body) VALUES (?, ?)", target, body)
            if change.run_event is not None:
                self._sql.exec("INSERT INTO run_event (run_id, body) VALUES (?, ?)", *change.run_event)
            return
        self._outbox_rows["notice"].extend(change.notices)
        if change.run_event is not None:
            self._outbox_rows["run_event"].append(change.run_event)

    def dispatch(
        self, job_ids: Sequence[str], now: int, key_buckets: Mapping[str, TokenBucket] | None = None
    ) -> dict[str, Mapping[str, Any]]:
        """Move SCHEDULED ``job_ids`` to QUEUED at ``now`` in one statement, in order (one feed seq each).

        The per-key ``key_buckets`` that paid for the batch are stored with it (nothing is stored for an
        empty batch). Returns the dispatch columns of the jobs that moved, by id; a job no longer SCHEDULED is
        left out.
        """
        if not job_ids:
            return {}
        if key_buckets:
            self.save_buckets(key_buckets)
        base = self._seq + 1
        self._seq += len(job_ids)
        cursor = self._sql.exec(DISPATCH_QUERY, now, base, msgspec.json.encode(list(job_ids)).decode())
        rows: list[dict[str, Any]] = [
            dict(zip(DISPATCHED_NAMES, values, strict=True)) for values in decoded_rows(cursor, "d", _ARRAYS)
        ]
        promote_after_dispatch(
            self._sql,
            [
                (str(r["concurrency_key"]), int(r["priority"]))
                for r in rows
                if r["concurrency_key"] is not None
            ],
        )
        return {str(row["id"]): row for row in rows}

    def start(self, attempts: Sequence[tuple[str, int]], now: int) -> list[tuple[str, int]]:
        """Mark the live ``attempts`` (job id, attempt) of QUEUED jobs RUNNING at ``now`` in one statement.

        Returns the (job id, attempt) pairs that moved; a job no longer QUEUED with that live attempt is left.
        """
        if not attempts:
            return []
        base = self._seq + 1
        self._seq += len(attempts)
        pairs = msgspec.json.encode([[job_id, attempt] for job_id, attempt in attempts]).decode()
        rows = self._sql.exec(START_QUERY, now, base, pairs).toArray()
        return [(str(row["id"]), int(row["attempt"])) for row in rows]

    def _in_flight(self, now: int) -> tuple[int, dict[str, int]]:
        """Jobs in flight, and the slots each concurrency key has taken: its jobs in flight and its live holds."""
        by_key: dict[str, int] = {}
        in_flight = 0
        for row in self._sql.exec(
            f"SELECT concurrency_key AS k, COUNT(*) AS n FROM job WHERE {INFLIGHT} GROUP BY concurrency_key"
        ).toArray():
            in_flight += int(row["n"])
            if row["k"] is not None:
                by_key[str(row["k"])] = int(row["n"])
        for row in self._sql.exec(HELD_KEYS, now).toArray():
            by_key[str(row["k"])] = by_key.get(str(row["k"]), 0) + int(row["n"])
        return in_flight, by_key

    def ready_count(self, now: int, limit: int) -> int:
        """How many key heads are ready at ``now``, up to ``limit``: an index count, no row read (ADR-0179)."""
        return int(self._sql.exec(READY_COUNT, now, limit).one()["n"])

    def ready_window(
        self,
        now: int,
        want: int,
        aging_interval_ms: int | None,
        *,
        key_buckets: bool = False,
        per_key_concurrency: int = 1,
        per_key_rate: RateLimit | None = None,
        skip: frozenset[str] = frozenset(),
    ) -> ReadyWindow:
        """Ready jobs holding the best ``want`` dispatchable ones (``level_walk.ready_rows``), in-flight counts.

        A job counts as dispatchable unless its key has no room (``per_key_concurrency``, ``per_key_rate``), it
        is in ``skip`` or it has expired; the others come along so the planner can count them as blocked. With
        ``key_buckets`` the stored per-key buckets of the window's concurrency keys come along too.
        """
        in_flight, by_key = self._in_flight(now)
        room = KeyRoom(self._sql, now, by_key, per_key_concurrency, per_key_rate)
        rows = ready_rows(self._sql, now, want, aging_interval_ms, room, skip)
        if not key_buckets:
            return ReadyWindow(rows=rows, in_flight=in_flight, in_flight_by_key=by_key)
        keys = [str(r["concurrency_key"]) for r in rows if r["concurrency_key"] is not None]
        found = room.stored_buckets() if per_key_rate is not None else self.buckets(keys) if keys else {}
        found = {k: found[k] for k in keys if k in found}
        return ReadyWindow(rows=rows, in_flight=in_flight, in_flight_by_key=by_key, key_buckets=found)

    def buckets(self, keys: Sequence[str]) -> dict[str, TokenBucket]:
        """Stored per-key buckets of ``keys``."""
        found: dict[str, TokenBucket] = {}
        for chunk in _chunks(sorted(set(keys))):
            marks = ", ".join("?" * len(chunk))
            for row in self._sql.exec(
                f"SELECT key, tokens, refilled_at FROM key_bucket WHERE key IN ({marks})", *chunk
            ).toArray():
                found[str(row["key"])] = TokenBucket(
                    tokens=float(row["tokens"]), refilled_at=int(row["refilled_at"])
                )
        return found

    def save_buckets(self, key_buckets: Mapping[str, TokenBucket]) -> None:
        """Store per-key buckets, one statement per chunk of keys."""
        keys = sorted(key_buckets)
        for chunk in [keys[i : i + 30] for i in range(0, len(keys), 30)]:
            values = ", ".join("(?, ?, ?)" for _ in chunk)
            params: list[Any] = []
            for key in chunk:
                params.extend((key, key_buckets[key].tokens, key_buckets[key].refilled_at))
            self._sql.exec(
                f"INSERT OR REPLACE INTO key_bucket (key, tokens, refilled_at) VALUES {values}", *params
            )

    def due(self, now: int, grace_ms: int, limit: int) -> DueJobs:
        """Expired active jobs and dispatched jobs past their silence (or cancel) deadline."""
        expired = self._sql.exec(
            f"SELECT * FROM job INDEXED BY job_expiry WHERE {ACTIVE_EXPIRY} AND expires_at <= ? ORDER BY expires_at"
            " LIMIT ?",
            now,
            limit,
        ).toArray()
        silent = self._sql.exec(
            f"SELECT * FROM job INDEXED BY job_silence WHERE {INFLIGHT} AND silence_at <= ? ORDER BY silence_at LIMIT ?",
            now - grace_ms,
            limit,
        ).toArray()
        return DueJobs(
            expired=[msgspec.convert(r, JobRow) for r in expired],
            silent=[msgspec.convert(r, JobRow) for r in silent],
        )

    def housekeep(
        self, now: int, sweep_after_ms: int, failed_retention_ms: int, projected_seq: int, limit: int
    ) -> int:
        """Delete projected finished jobs past retention (attempts first), ended key holds and expired unique keys."""
        params = (now - sweep_after_ms, now - failed_retention_ms, projected_seq)
        deleted = 0
        if self._sql.exec(f"SELECT EXISTS (SELECT 1 FROM job WHERE {SWEEPABLE}) AS v", *params).one()["v"]:
            pick = f"SELECT id FROM job WHERE {SWEEPABLE} LIMIT ?"
            self._sql.exec(f"DELETE FROM attempt WHERE job_id IN ({pick})", *params, limit)
            self._sql.exec(f"DELETE FROM step WHERE job_id IN ({pick})", *params, limit)  # ADR-0144
            deleted = len(
                self._sql.exec(f"DELETE FROM job WHERE id IN ({pick}) RETURNING id", *params, limit).toArray()
            )
        if self._scalar("SELECT EXISTS (SELECT 1 FROM key_hold WHERE until <= ?) AS v", now):
            self._sql.exec(
                "DELETE FROM key_hold WHERE (job_id, attempt) IN"
                " (SELECT job_id, attempt FROM key_hold WHERE until <= ? LIMIT ?)",
                now,
                limit,
            )
        if self._scalar("SELECT EXISTS (SELECT 1 FROM unique_key WHERE expires_at <= ?) AS v", now):
            self._sql.exec(
                "DELETE FROM unique_key WHERE key IN (SELECT key FROM unique_key WHERE expires_at <= ? LIMIT ?)",
                now,
                limit,
            )
        return deleted

    def drop_full_buckets(self, refilled_by: int, limit: int) -> int:
        """Delete up to ``limit`` per-key buckets last refilled at or before ``refilled_by`` (ADR-0057).

        A read first, so a tick with nothing to drop writes nothing.
        """
        if not self._scalar(
            "SELECT EXISTS (SELECT 1 FROM key_bucket WHERE refilled_at <= ?) AS v", refilled_by
        ):
            return 0
        return len(
            self._sql.exec(
                "DELETE FROM key_bucket WHERE key IN"
                " (SELECT key FROM key_bucket WHERE refilled_at <= ? ORDER BY refilled_at LIMIT ?) RETURNING key",
                refilled_by,
                limit,
            ).toArray()
        )

    def overview(
        self, since: int, projected_seq: int | None = None, held: tuple[int, int] = (0, 0)
    ) -> Overview:
        """Earliest instants for the wake computation: one statement of indexed lookups.

        ``since`` is the instant dispatch last looked at the ready jobs: ``next_delayed_at`` is the first job to
        become eligible after it, even when that is already past. ``projected_seq`` is the projection cursor
        the engine already holds; None reads it from settings. Job changes with a seq in ``held`` (exclusive,
        inclusive] are reported as ``held_pending`` rather than ``outbox_pending``.
        """
        self._flush_outbox()
        cursor = int(self.settings().get(PROJECTED_SEQ_KEY, "0")) if projected_seq is None else projected_seq
        row = self._sql.exec(OVERVIEW_QUERY, since, cursor, held[0], held[1]).one()
        return Overview(
            oldest_ready_at=row["oldest_ready_at"],
            next_delayed_at=row["next_delayed_at"],
            next_silence_at=row["next_silence_at"],
            next_expiry_at=row["next_expiry_at"],
            oldest_settled_at=row["oldest_settled_at"],
            oldest_failed_at=row["oldest_failed_at"],
            next_unique_expiry_at=row["next_unique_expiry_at"],
            oldest_key_bucket_at=row["oldest_key_bucket_at"],
            next_sleeper_at=row["next_sleeper_at"],
            next_hold_end_at=row["next_hold_end_at"],
            outbox_pending=bool(row["outbox_pending"]),
            held_pending=bool(row["held_pending"]),
        )

    def outbox(
        self, kind: FeedKind, after_seq: int, limit: int, up_to_seq: int | None = None
    ) -> list[Mapping[str, Any]]:
        """Feed rows after ``after_seq`` (and up to ``up_to_seq`` when given)."""
        table = {"job": "job", "notice": "notice", "run_event": "run_event"}[kind]
        self._flush_outbox()
        if up_to_seq is None:
            query, bounds = f"SELECT * FROM {table} WHERE seq > ? ORDER BY seq LIMIT ?", (after_seq,)
        else:
            query = f"SELECT * FROM {table} WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?"
            bounds = (after_seq, up_to_seq)
        return list(self._sql.exec(query, *bounds, limit).toArray())

    def job_feed(self, after_seq: int, limit: int, up_to_seq: int | None = None) -> list[JobRow]:
        """Jobs changed after ``after_seq`` (up to ``up_to_seq``) in seq order: each row read as one JSON text
        and the page decoded by msgspec at once (ADR-0153)."""
        self._flush_outbox()
        if up_to_seq is None:
            cursor = self._sql.exec(JOB_FEED, after_seq, limit)
        else:
            cursor = self._sql.exec(JOB_FEED_UP_TO, after_seq, up_to_seq, limit)
        return [JobRow(*values) for values in decoded_rows(cursor, "j", _JOB_VALUES)]

    def ack(self, kind: FeedKind, up_to_seq: int) -> None:
        """Consume a feed up to ``up_to_seq``."""
        self._flush_outbox()
        if kind == "job":
            self.save_setting(PROJECTED_SEQ_KEY, str(up_to_seq))
        elif kind == "notice":
            self._sql.exec("DELETE FROM notice WHERE seq <= ?", up_to_seq)
        else:
            self._sql.exec("DELETE FROM run_event WHERE seq <= ?", up_to_seq)

    def attempts(self, job_ids: Sequence[str]) -> list[AttemptRow]:
        """Recorded attempts, newest first per job, at most 20 per job."""
        found: list[AttemptRow] = []
        for chunk in _chunks(list(job_ids)):
            marks = ", ".join("?" * len(chunk))
            rows = self._sql.exec(
                f"SELECT * FROM attempt WHERE job_id IN ({marks}) ORDER BY job_id, attempt DESC", *chunk
            ).toArray()
            per_job: dict[str, int] = {}
            for row in rows:
                seen = per_job.get(str(row["job_id"]), 0)
                if seen < MAX_ATTEMPTS_PER_SNAPSHOT:
                    per_job[str(row["job_id"])] = seen + 1
                    found.append(msgspec.convert(row, AttemptRow))
        return found

    def counts(self) -> dict[str, int]:
        """Jobs by state and pending rows per feed."""
        self._flush_outbox()
        counts = {
            str(r["state"]): int(r["n"])
            for r in self._sql.exec("SELECT state, COUNT(*) AS n FROM job GROUP BY state").toArray()
        }
        cursor = int(self.settings().get(PROJECTED_SEQ_KEY, "0"))
        counts["feed:job"] = int(self._scalar("SELECT COUNT(*) AS v FROM job WHERE seq > ?", cursor))
        counts["feed:notice"] = int(self._scalar("SELECT COUNT(*) AS v FROM notice"))
        counts["feed:run_event"] = int(self._scalar("SELECT COUNT(*) AS v FROM run_event"))
        return counts
