"""The event box: the one object that owns an event's ``(name, key)`` (ADR-0146).

A box is an object of the JobShard namespace named `tsumugi_core.events.box_name` (``event:<digest>``): it never
holds jobs, only the waiters of its ``(name, key)``, the events kept for jobs that start waiting later, and the
deliveries not yet confirmed by a shard. Sending an event touches its box and one shard per shard holding a
waiter (one ``deliver_events`` call each); waiting touches the box and the job's own shard. Nothing scans.

`EventBox` is synchronous over the object's SQL (each method one transaction); `EventBoxHost` adds the
deliveries over RPC and the alarm that retries them and drops what expired.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Final

import msgspec

from tsumugi_core.clock import Clock, IdSource
from tsumugi_core.events import EVENT_BOX_PREFIX, EVENT_KEEP_MS, KEPT_PER_BOX, EventRecord
from tsumugi_scheduler import _runtime
from tsumugi_scheduler.shard.port import SqlLike

__all__ = ["DELIVERY_RETRY_MS", "EventBox", "EventBoxHost", "SendAnswer", "is_box_name"]

DELIVERY_RETRY_MS: Final = 5_000
_DDL: Final = (
    """CREATE TABLE IF NOT EXISTS event_kept (name TEXT NOT NULL, key TEXT NOT NULL, id TEXT NOT NULL,
        body TEXT NOT NULL, sent_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
        PRIMARY KEY (name, key, id)) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS event_kept_expiry ON event_kept(expires_at)",
    """CREATE TABLE IF NOT EXISTS event_waiter (name TEXT NOT NULL, key TEXT NOT NULL, job_id TEXT NOT NULL,
        step TEXT NOT NULL, shard TEXT NOT NULL, until INTEGER NOT NULL,
        PRIMARY KEY (name, key, job_id, step)) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS event_waiter_until ON event_waiter(until)",
    """CREATE TABLE IF NOT EXISTS event_delivery (shard TEXT NOT NULL, job_id TEXT NOT NULL, step TEXT NOT NULL,
        body TEXT NOT NULL, PRIMARY KEY (shard, job_id, step)) WITHOUT ROWID""",
)
_encode = msgspec.json.encode


def is_box_name(name: str | None) -> bool:
    """Whether an object of the JobShard namespace named ``name`` is an event box."""
    return name is not None and name.startswith(EVENT_BOX_PREFIX)


class SendAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """What a send did: the event's id, how many waiting jobs it goes to, and until when it is kept."""

    id: str
    delivered: int
    kept_until: int
    duplicate: bool = False


class _EventId(msgspec.Struct):
    id: str


_EVENT_ID: Final = msgspec.json.Decoder(_EventId)


class EventBox:
    """The rows of one box; every method one transaction."""

    def __init__(self, sql: SqlLike, clock: Clock, ids: IdSource) -> None:
        """Create the box's tables if needed."""
        self._sql, self._clock, self._ids = sql, clock, ids
        for statement in _DDL:
            sql.exec(statement)

    def send(self, name: str, key: str, payload: str, event_id: str | None) -> SendAnswer:
        """Keep the event and turn every live waiter into a delivery; a repeated ``event_id`` does nothing."""

        def run() -> SendAnswer:
            now = self._clock.now_ms()
            if event_id is not None:
                # An id makes a resend harmless while the event is kept; past its day it is a new event (the
                # expired row, not yet swept by the alarm, would otherwise answer it as a duplicate and go).
                self._sql.exec(
                    "DELETE FROM event_kept WHERE name = ? AND key = ? AND id = ? AND expires_at <= ?",
                    name,
                    key,
                    event_id,
                    now,
                )
                rows = self._sql.exec(
                    "SELECT expires_at FROM event_kept WHERE name = ? AND key = ? AND id = ?",
                    name,
                    key,
                    event_id,
                ).toArray()
                if rows:
                    return SendAnswer(
                        id=event_id, delivered=0, kept_until=int(rows[0]["expires_at"]), duplicate=True
                    )
            eid = event_id or self._ids.new_local_id()
            record = EventRecord(
                id=eid, name=name, key=key, payload=msgspec.Raw(payload.encode()), sent_at=now
            )
            body = _encode(record).decode()
            self._sql.exec(
                "INSERT INTO event_kept (name, key, id, body, sent_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                name,
                key,
                eid,
                body,
                now,
                now + EVENT_KEEP_MS,
            )
            self._sql.exec(
                "DELETE FROM event_kept WHERE name = ?1 AND key = ?2 AND id IN (SELECT id FROM event_kept"
                " WHERE name = ?1 AND key = ?2 ORDER BY sent_at DESC, id DESC LIMIT -1 OFFSET ?3)",
                name,
                key,
                KEPT_PER_BOX,
            )
            waiters = self._sql.exec(
                "DELETE FROM event_waiter WHERE name = ? AND key = ? RETURNING job_id, step, shard, until",
                name,
                key,
            ).toArray()
            live = [w for w in waiters if int(w["until"]) > now]
            for w in live:
                self._sql.exec(
                    "INSERT OR REPLACE INTO event_delivery (shard, job_id, step, body) VALUES (?, ?, ?, ?)",
                    w["shard"],
                    w["job_id"],
                    w["step"],
                    body,
                )
            return SendAnswer(id=eid, delivered=len(live), kept_until=now + EVENT_KEEP_MS)

        return self._sql.transaction_sync(run)

    def wait(
        self, name: str, key: str, job_id: str, step: str, shard: str, until: int, seen: list[str]
    ) -> str | None:
        """The oldest kept event the job has not had (its JSON), or register the job as a waiter (None)."""

        def run() -> str | None:
            now = self._clock.now_ms()
            kept = self._sql.exec(
                "SELECT id, body FROM event_kept WHERE name = ? AND key = ? AND expires_at > ? ORDER BY sent_at, id",
                name,
                key,
                now,
            ).toArray()
            for row in kept:
                if str(row["id"]) not in seen:
                    return str(row["body"])
            self._sql.exec(
                "INSERT OR REPLACE INTO event_waiter (name, key, job_id, step, shard, until) VALUES (?, ?, ?, ?, ?, ?)",
                name,
                key,
                job_id,
                step,
                shard,
                until,
            )
            return None

        return self._sql.transaction_sync(run)

    def pending(self) -> dict[str, list[dict[str, str]]]:
        """Deliveries not confirmed yet, by shard."""
        by_shard: dict[str, list[dict[str, str]]] = defaultdict(list)
        for row in self._sql.exec("SELECT shard, job_id, step, body FROM event_delivery").toArray():
            by_shard[str(row["shard"])].append(
                {"jobId": str(row["job_id"]), "step": str(row["step"]), "event": str(row["body"])}
            )
        return dict(by_shard)

    def confirm(self, shard: str, deliveries: list[dict[str, str]]) -> None:
        """Drop deliveries a shard has taken."""
        for d in deliveries:
            self._sql.exec(
                "DELETE FROM event_delivery WHERE shard = ? AND job_id = ? AND step = ?",
                shard,
                d["jobId"],
                d["step"],
            )

    def expire(self) -> int | None:
        """Drop expired kept events and waiters; answers when the next one expires."""
        now = self._clock.now_ms()
        self._sql.exec("DELETE FROM event_kept WHERE expires_at <= ?", now)
        self._sql.exec("DELETE FROM event_waiter WHERE until <= ?", now)
        row = self._sql.exec(
            "SELECT MIN(v) AS v FROM (SELECT MIN(expires_at) AS v FROM event_kept"
            " UNION ALL SELECT MIN(until) FROM event_waiter)"
        ).one()
        return None if row["v"] is None else int(row["v"])


class EventBoxHost:
    """A box as a Durable Object: delivers over RPC to the waiting jobs' shards, retries on its alarm."""

    def __init__(self, storage: Any, sql: SqlLike, env: Any, clock: Clock, ids: IdSource) -> None:
        """Serve the box over ``storage`` (its alarm) and ``sql``."""
        self._storage, self._env, self._clock = storage, env, clock
        self.box = EventBox(sql, clock, ids)

    async def send(self, name: str, key: str, payload: str, event_id: str | None) -> dict[str, Any]:
        """Keep and deliver an event; answers `SendAnswer` as a dict."""
        answer = self.box.send(name, key, payload, event_id)
        refused = await self.deliver()
        if answer.delivered and refused:
            # A waiter whose job ended meanwhile (cancelled while it waited) did not get the event.
            gone = sum(1 for event in refused if _EVENT_ID.decode(event).id == answer.id)
            answer = msgspec.structs.replace(answer, delivered=answer.delivered - gone)
        return msgspec.to_builtins(answer)

    async def wait(
        self, name: str, key: str, job_id: str, step: str, shard: str, until: int, seen: list[str]
    ) -> str | None:
        """A kept event for the job, or None once it is registered as a waiter."""
        found = self.box.wait(name, key, job_id, step, shard, until, seen)
        if found is None:
            await self._arm(self.box.expire())
        return found

    async def deliver(self) -> list[str]:
        """Send pending deliveries, one call per shard; whatever fails is retried by the alarm.

        Answers the events (their JSON) of the deliveries a shard refused: their job no longer waits for them.
        """
        failed = False
        refused: list[str] = []
        for shard, deliveries in self.box.pending().items():
            try:
                taken = await self._env.JOB_SHARD.getByName(shard).deliver_events(shard, deliveries)
            except Exception:
                failed = True
                continue
            self.box.confirm(shard, deliveries)
            refused += [d["event"] for d, ok in zip(deliveries, taken, strict=True) if not ok]
        next_at = self.box.expire()
        if failed:
            retry = self._clock.now_ms() + DELIVERY_RETRY_MS
            next_at = retry if next_at is None else min(next_at, retry)
        await self._arm(next_at)
        return refused

    async def _arm(self, at: int | None) -> None:
        if at is None:
            return
        current = await _runtime.current_alarm(self._storage)
        if current is None or current > at:
            await _runtime.set_alarm(self._storage, at)

    async def alarm(self) -> None:
        """Retry deliveries and drop expired rows."""
        await self.deliver()
