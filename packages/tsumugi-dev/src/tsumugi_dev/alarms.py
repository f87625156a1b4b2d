"""Durable Object alarms: when they fire, how failures are retried, and the index that survives restarts.

Cloudflare retries an ``alarm()`` that raises with exponential backoff starting at 2 seconds, up to 6 retries.
The authoritative alarm lives in each object's SQLite file; the index here only lists objects that may have
one, so a restart knows which files to look at. A row is written before the object's file can hold an alarm.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Coroutine
from typing import Any

from tsumugi_dev.clock import RuntimeClock, Timer

__all__ = ["ALARM_FIRST_RETRY_MS", "ALARM_MAX_RETRIES", "AlarmScheduler", "alarm_retry_at"]

ALARM_FIRST_RETRY_MS = 2_000
"""Delay before the first retry of a failed ``alarm()``."""
ALARM_MAX_RETRIES = 6
"""Retries after the first failed ``alarm()`` before the alarm is dropped."""


def alarm_retry_at(now_ms: int, retry_count: int) -> int | None:
    """When to retry an ``alarm()`` that failed on invocation ``retry_count`` (0 = first), or None to give up.

    >>> alarm_retry_at(0, 0), alarm_retry_at(0, 1), alarm_retry_at(0, 5), alarm_retry_at(0, 6)
    (2000, 4000, 64000, None)
    """
    if retry_count >= ALARM_MAX_RETRIES:
        return None
    return now_ms + ALARM_FIRST_RETRY_MS * 2**retry_count


FireAlarm = Callable[[str, str], Coroutine[Any, Any, None]]


class AlarmScheduler:
    """Arms one timer per object alarm and keeps the restart index in the runtime's state database."""

    def __init__(self, conn: sqlite3.Connection, clock: RuntimeClock, fire: FireAlarm) -> None:
        self._conn = conn
        self._clock = clock
        self._fire = fire
        self._timers: dict[tuple[str, str], Timer] = {}
        self._names: dict[tuple[str, str], str | None] = {}
        """Objects whose index row this runtime wrote (or found at start), with the name written."""
        conn.execute(
            "CREATE TABLE IF NOT EXISTS do_alarm_index (namespace TEXT NOT NULL, object_id TEXT NOT NULL, "
            "object_name TEXT, alarm_at INTEGER NOT NULL, PRIMARY KEY (namespace, object_id))"
        )

    def may_be_set(self, namespace: str, object_id: str, name: str | None, alarm_at: int) -> None:
        """Index an object before its file commits an alarm: the row means "may have an alarm" (ADR-0020).

        A crash between this write and the object's commit leaves a row whose file has no alarm, which the
        next start clears; the other order would lose the alarm. Free when the object is already indexed.
        """
        key = (namespace, object_id)
        if key in self._names:
            return
        self._conn.execute(
            "INSERT INTO do_alarm_index (namespace, object_id, object_name, alarm_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (namespace, object_id) DO NOTHING",
            (namespace, object_id, name, alarm_at),
        )
        self._names[key] = name

    def committed(self, namespace: str, object_id: str, name: str | None, alarm_at: int | None) -> None:
        """Record the committed alarm of one object and (re)arm or disarm its timer.

        Objects report their alarm after every transaction; an unchanged alarm (same instant, timer still
        armed, same name) costs nothing, so a busy object does not rewrite the index row on every commit.
        """
        key = (namespace, object_id)
        armed = self._timers.get(key)
        unchanged = armed is not None and armed.at_ms == alarm_at and not armed.cancelled
        if unchanged and self._names.get(key) == name:
            return
        if armed is None and alarm_at is None and key not in self._names:
            return  # nothing armed, nothing indexed since this runtime started: nothing to clear
        self._names.pop(key, None)
        old = self._timers.pop(key, None)
        if old is not None:
            old.cancel()
        if alarm_at is None:
            self._conn.execute("DELETE FROM do_alarm_index WHERE namespace = ? AND object_id = ?", key)
            return
        self._conn.execute(
            "INSERT INTO do_alarm_index (namespace, object_id, object_name, alarm_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (namespace, object_id) DO UPDATE SET alarm_at = excluded.alarm_at, "
            "object_name = excluded.object_name",
            (namespace, object_id, name, alarm_at),
        )
        self._names[key] = name
        self._timers[key] = self._clock.call_at(alarm_at, lambda: self._launch(namespace, object_id))

    def _launch(self, namespace: str, object_id: str) -> None:
        self._timers.pop((namespace, object_id), None)
        self._clock.spawn(self._fire(namespace, object_id), name=f"alarm {namespace} {object_id}")

    def indexed(self) -> list[tuple[str, str, str | None]]:
        """``(namespace, object_id, object_name)`` of every object that may have an alarm."""
        rows = self._conn.execute("SELECT namespace, object_id, object_name FROM do_alarm_index").fetchall()
        for row in rows:
            self._names[(str(row[0]), str(row[1]))] = None if row[2] is None else str(row[2])
        return [(str(r[0]), str(r[1]), None if r[2] is None else str(r[2])) for r in rows]

    def cancel_all(self) -> None:
        """Disarm every timer (the index stays for the next start)."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
