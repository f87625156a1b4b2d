"""The ``step`` table of a shard and the sleepers' index: the SQL of durable steps (ADR-0144, ADR-0145).

Every statement is a primary-key or index lookup: a job's steps by ``(job_id, name)``, the sleepers due by
``job_sleep``. Rows go when their job is swept (``SqlShardStore.housekeep``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import msgspec

from tsumugi_scheduler.shard.port import SqlLike
from tsumugi_scheduler.shard.schema import JobRow, StepRow

__all__ = ["StepStore"]


_COLUMNS: Final = ", ".join(StepRow.__struct_fields__)


class StepStore:
    """Reads and writes a shard's ``step`` rows and finds its due sleepers."""

    def __init__(self, sql: SqlLike) -> None:
        """Use the shard's SQL (inside the engine's transactions)."""
        self._sql = sql

    def steps(self, job_id: str) -> list[StepRow]:
        """Every stored step of ``job_id``, in the order they started."""
        rows = self._sql.exec(
            f"SELECT {_COLUMNS} FROM step WHERE job_id = ? ORDER BY started_at, name", job_id
        ).toArray()
        return [msgspec.convert(r, StepRow) for r in rows]

    def step(self, job_id: str, name: str) -> StepRow | None:
        """One step by name."""
        rows = self._sql.exec(
            f"SELECT {_COLUMNS} FROM step WHERE job_id = ? AND name = ?", job_id, name
        ).toArray()
        return msgspec.convert(rows[0], StepRow) if rows else None

    def inherit(self, job_id: str, from_job_id: str) -> int:
        """Give ``job_id`` the steps ``from_job_id`` began or finished (not its waits); how many were copied."""
        self._sql.exec(
            f"INSERT INTO step ({_COLUMNS}) SELECT ?, {_COLUMNS.partition(', ')[2]} FROM step"
            " WHERE job_id = ? AND state IN ('started', 'done') ON CONFLICT (job_id, name) DO NOTHING",
            job_id,
            from_job_id,
        )
        return self.count(job_id)

    def count(self, job_id: str) -> int:
        """How many steps ``job_id`` stores."""
        return int(self._sql.exec("SELECT COUNT(*) AS n FROM step WHERE job_id = ?", job_id).one()["n"])

    def begin(self, job_id: str, name: str, attempt: int, now: int) -> StepRow:
        """Mark ``name`` started by ``attempt`` unless stored already; answers the step as stored."""
        self._sql.exec(
            "INSERT INTO step (job_id, name, state, result, attempt, started_at, finished_at)"
            " VALUES (?, ?, 'started', NULL, ?, ?, NULL) ON CONFLICT (job_id, name) DO NOTHING",
            job_id,
            name,
            attempt,
            now,
        )
        stored = self.step(job_id, name)
        assert stored is not None  # inserted or already there
        return stored

    def save(self, job_id: str, name: str, attempt: int, now: int, result: str) -> StepRow:
        """Store ``name``'s result unless a result is stored already (the first save wins); answers it.

        A ``started`` mark of the same attempt becomes ``done``; one left by an earlier attempt stays as it is
        (that step's outcome is unknown, and the performer was told so before it could run it again).
        """
        self._sql.exec(
            "INSERT INTO step (job_id, name, state, result, attempt, started_at, finished_at)"
            " VALUES (?1, ?2, 'done', ?5, ?3, ?4, ?4) ON CONFLICT (job_id, name) DO UPDATE"
            " SET state = 'done', result = excluded.result, finished_at = excluded.finished_at"
            " WHERE step.state = 'started' AND step.attempt = excluded.attempt",
            job_id,
            name,
            attempt,
            now,
            result,
        )
        stored = self.step(job_id, name)
        assert stored is not None
        return stored

    def wait(
        self, job_id: str, name: str, attempt: int, now: int, waiting: str, delivered: str | None
    ) -> StepRow:
        """Record that ``name`` waits (``waiting``: what for), or is done with ``delivered``; answers it as stored."""
        state = "waiting" if delivered is None else "done"
        finished = None if delivered is None else now
        self._sql.exec(
            "INSERT INTO step (job_id, name, state, result, attempt, started_at, finished_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job_id, name) DO NOTHING",
            job_id,
            name,
            state,
            waiting if delivered is None else delivered,
            attempt,
            now,
            finished,
        )
        stored = self.step(job_id, name)
        assert stored is not None
        return stored

    def deliver(self, job_id: str, name: str, attempt: int, now: int, event: str) -> bool:
        """Store ``event`` as the result of wait step ``name`` unless it is done already (a timeout, an event).

        A wait step the job has not recorded yet (the box heard of the wait first) is stored done at once.
        """
        rows = self._sql.exec(
            "INSERT INTO step (job_id, name, state, result, attempt, started_at, finished_at)"
            " VALUES (?1, ?2, 'done', ?5, ?3, ?4, ?4) ON CONFLICT (job_id, name) DO UPDATE"
            " SET state = 'done', result = excluded.result, finished_at = excluded.finished_at"
            " WHERE step.state = 'waiting'"
            # Sent before the wait's own deadline (the first attempt's; a replay's later one is not the wait's):
            # an event sent after it is no answer, however late the tick that times the wait out.
            " AND json_extract(excluded.result, '$.sent_at') < json_extract(step.result, '$.until')"
            " RETURNING name",
            job_id,
            name,
            attempt,
            now,
            event,
        ).toArray()
        return bool(rows)

    def time_out_waits(self, job_id: str, now: int, result: str) -> None:
        """End the job's waiting steps with ``result`` (its wait's timeout came first), each keeping the
        ``until`` it waited for: the performer's `EventTimeoutError` names it."""
        self._sql.exec(
            "UPDATE step SET state = 'done', result = json_set(?, '$.until', json_extract(result, '$.until')),"
            " finished_at = ? WHERE job_id = ? AND state = 'waiting'",
            result,
            now,
            job_id,
        )

    def clear_started(self, job_id: str, attempt: int) -> None:
        """Drop the ``started`` marks of ``attempt``: it failed knowingly, so none of them ran to an unknown end."""
        self._sql.exec(
            "DELETE FROM step WHERE job_id = ? AND attempt = ? AND state = 'started'", job_id, attempt
        )

    def due_sleepers(self, now: int, limit: int) -> list[JobRow]:
        """Up to ``limit`` SLEEPING jobs whose wake time (``run_after``) has come, earliest first."""
        rows = self._sql.exec(
            "SELECT * FROM job INDEXED BY job_sleep WHERE state = 'SLEEPING' AND run_after <= ?"
            " ORDER BY run_after LIMIT ?",
            now,
            limit,
        ).toArray()
        return [msgspec.convert(r, JobRow) for r in rows]

    def next_wake_at(self) -> int | None:
        """The earliest wake time of a SLEEPING job."""
        value = self._sql.exec(
            "SELECT MIN(run_after) AS v FROM job INDEXED BY job_sleep WHERE state = 'SLEEPING'"
        ).one()["v"]
        return None if value is None else int(value)

    def delete_for(self, job_ids: Sequence[str]) -> None:
        """Drop the steps of jobs being swept."""
        for job_id in job_ids:
            self._sql.exec("DELETE FROM step WHERE job_id = ?", job_id)
