"""``ctx`` and ``ctx.storage`` of a Durable Object: SQL, transactions, the alarm, and the input gate.

The alarm lives in the object's own SQLite file (table ``_cf_alarm``), so it commits or rolls back with the
object's data exactly as Cloudflare's storage does. After every change the runtime's alarm scheduler is told
the committed value.
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Awaitable, Callable, Coroutine, Generator
from pathlib import Path
from typing import Any, Protocol, TypeVar

from tsumugi_dev.do_sql import SqlCursor, SqlStorage
from tsumugi_dev.private_files import private_dir

__all__ = [
    "AlarmListener",
    "DurableObjectState",
    "DurableObjectStorage",
    "InputGate",
    "ObjectSqlStorage",
    "Ready",
]

T = TypeVar("T")

_ALARM_DDL = (
    "CREATE TABLE IF NOT EXISTS _cf_alarm (id INTEGER PRIMARY KEY CHECK (id = 1), "
    "scheduled_at INTEGER NOT NULL, retry_count INTEGER NOT NULL DEFAULT 0)"
)


class Ready:
    """An awaitable that is already resolved: storage calls take effect when called, as their JS promises do."""

    def __init__(self, value: Any = None) -> None:
        self._value = value

    def __await__(self) -> Generator[Any, None, Any]:
        return self._value
        yield  # pragma: no cover - makes this a generator; storage never suspends the event


class ObjectSqlStorage(SqlStorage):
    """``SqlStorage`` plus statements the runtime itself runs (not counted in ``write_statements``)."""

    def runtime_exec(self, query: str, *params: Any) -> SqlCursor:
        """Run one statement on behalf of the runtime (unchecked: workerd's own statements are trusted)."""
        before = self.write_statements
        try:
            with self._guard.trusted():
                return self._exec_one(query, params)
        finally:
            self.write_statements = before

    def in_transaction_depth(self) -> int:
        """How many ``transaction_sync`` calls are open (0 outside any)."""
        return self._depth


class AlarmListener(Protocol):
    """Told before an alarm is written, and the committed alarm of an object after every change; and asked the
    time, which an alarm set in the past is stored as."""

    def now_ms(self) -> int:
        """The runtime clock's now, in epoch ms (workerd's ``Date.now()`` inside the object)."""
        ...

    def alarm_may_be_set(self, alarm_at: int) -> None:
        """Make a restart look at this object before its file can hold an alarm (ADR-0020)."""
        ...

    def alarm_committed(self, alarm_at: int | None) -> None:
        """Record and arm (or disarm) the object's alarm."""
        ...


class DurableObjectStorage:
    """``ctx.storage``: ``sql``, ``transactionSync``, ``setAlarm`` / ``getAlarm`` / ``deleteAlarm``."""

    def __init__(self, path: Path, listener: AlarmListener) -> None:
        private_dir(path.parent)
        self.sql = ObjectSqlStorage(path)
        try:
            self.sql.runtime_exec(_ALARM_DDL)
        except BaseException:  # not a database (or a full disk): nothing else will close it
            self.sql.close()
            raise
        self._listener = listener
        self.alarm_running = False
        """True while ``alarm()`` runs and no new alarm was set (``getAlarm`` then answers None)."""
        self.alarm_replaced = False
        self._alarm_read: tuple[tuple[int, int] | None] | None = None
        """The alarm row as last read or committed (None: read it again). Only `store_alarm` writes the row
        (applications cannot name ``_cf_`` tables), and a write inside a transaction forgets it (a rollback may
        undo it), so the row is read once per change instead of after every transaction and alarm check."""

    # -- the alarm, as the runtime reads it ------------------------------------------------------------------

    def stored_alarm(self) -> tuple[int, int] | None:
        """``(scheduled_at, retry_count)`` as committed, or None."""
        if self._alarm_read is not None:
            return self._alarm_read[0]
        row = self.sql.runtime_exec("SELECT scheduled_at, retry_count FROM _cf_alarm WHERE id = 1").toArray()
        stored = (int(row[0]["scheduled_at"]), int(row[0]["retry_count"])) if row else None
        if self.sql.in_transaction_depth() == 0:
            self._alarm_read = (stored,)
        return stored

    def store_alarm(self, scheduled_at: int | None, retry_count: int = 0) -> None:
        """Write (or clear) the alarm and tell the listener once it is committed.

        The listener hears of a new alarm before the object's file does, so a crash between the two writes
        leaves an index row pointing at the file (harmless) rather than an alarm no restart would find.
        """
        self._alarm_read = None
        if scheduled_at is None:
            self.sql.runtime_exec("DELETE FROM _cf_alarm WHERE id = 1")
        else:
            self._listener.alarm_may_be_set(scheduled_at)
            self.sql.runtime_exec(
                "INSERT INTO _cf_alarm (id, scheduled_at, retry_count) VALUES (1, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET scheduled_at = excluded.scheduled_at, "
                "retry_count = excluded.retry_count",
                scheduled_at,
                retry_count,
            )
        if self.sql.in_transaction_depth() == 0:  # committed as written: known without reading it back
            self._alarm_read = (None if scheduled_at is None else (scheduled_at, retry_count),)
            self._listener.alarm_committed(scheduled_at)

    # -- the SDK surface -------------------------------------------------------------------------------------

    def setAlarm(self, scheduled_time: int | float | datetime.datetime, options: Any = None) -> Ready:
        """Arm the object's single alarm for ``scheduled_time`` (epoch ms or a datetime).

        A time already past is stored as now, as workerd stores it (``getAlarm()`` then answers now, and so
        does the handler's ``scheduledTime``; tests/shapes: ``alarms.getAlarm_after_set_past_is_now``).
        """
        if isinstance(scheduled_time, datetime.datetime):
            at_ms = round(scheduled_time.timestamp() * 1000)
        elif isinstance(scheduled_time, int | float) and not isinstance(scheduled_time, bool):  # pyright: ignore[reportUnnecessaryIsInstance]
            at_ms = round(scheduled_time)
        else:
            raise TypeError(
                f"scheduledTime: expected epoch milliseconds or a datetime, got {type(scheduled_time).__name__}"
            )
        if self.alarm_running:
            self.alarm_replaced = True
            self.alarm_running = False
        self.store_alarm(max(at_ms, self._listener.now_ms()))
        return Ready()

    def getAlarm(self, options: Any = None) -> Ready:
        """The armed alarm in epoch ms, or None."""
        if self.alarm_running:
            return Ready(None)
        stored = self.stored_alarm()
        return Ready(stored[0] if stored else None)

    def deleteAlarm(self, options: Any = None) -> Ready:
        """Disarm the alarm."""
        if self.alarm_running:
            self.alarm_replaced = True
            self.alarm_running = False
        self.store_alarm(None)
        return Ready()

    def transaction_sync(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` atomically (alarm changes included)."""
        try:
            return self.sql.transaction_sync(fn)
        finally:
            if self.sql.in_transaction_depth() == 0:
                stored = self.stored_alarm()
                self._listener.alarm_committed(stored[0] if stored else None)

    transactionSync = transaction_sync

    def sync(self) -> Ready:
        """Writes are durable when they return here, so there is nothing to wait for."""
        return Ready()

    def deleteAll(self) -> Ready:
        """Drop every table of the object and its alarm."""
        tables = self.sql.runtime_exec(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != '_cf_alarm'"
        ).toArray()
        for table in tables:
            self.sql.runtime_exec(f'DROP TABLE IF EXISTS "{table["name"]}"')
        self.store_alarm(None)
        return Ready()

    def close(self) -> None:
        """Close the SQLite file (eviction keeps it on disk)."""
        self.sql.close()


class InputGate:
    """Cloudflare's input gate as far as Python can observe it.

    Storage calls never suspend an event here, so synchronous SQL never interleaves. An event that awaits
    outside I/O lets other events run, as on Cloudflare. ``blockConcurrencyWhile`` closes the gate: no new
    event starts until its function finishes.
    """

    def __init__(self) -> None:
        self._closed = 0
        self._opened = asyncio.Event()
        self._opened.set()

    def close(self) -> None:
        """Hold new events back."""
        self._closed += 1
        self._opened.clear()

    def open(self) -> None:
        """Release one ``close``."""
        self._closed -= 1
        if self._closed == 0:
            self._opened.set()

    async def wait_open(self) -> None:
        """Wait until no ``blockConcurrencyWhile`` is in progress."""
        await self._opened.wait()


class DurableObjectState:
    """``ctx`` of a Durable Object: ``id``, ``storage``, ``blockConcurrencyWhile``, ``waitUntil``, ``abort``."""

    def __init__(
        self,
        object_id: Any,
        storage: DurableObjectStorage,
        gate: InputGate,
        spawn: Callable[[Coroutine[Any, Any, Any], str], asyncio.Task[Any]],
        abort: Callable[[str | None], None],
    ) -> None:
        self.id = object_id
        self.storage = storage
        self._gate = gate
        self._spawn = spawn
        self._abort = abort

    def blockConcurrencyWhile(self, fn: Callable[[], Awaitable[T]]) -> asyncio.Task[T]:
        """Run ``fn`` with the input gate closed; returns a task to await for its result."""
        self._gate.close()

        async def run() -> T:
            try:
                return await fn()
            except BaseException:
                # Cloudflare resets the object when the function throws.
                self._abort("blockConcurrencyWhile callback failed")
                raise
            finally:
                self._gate.open()

        return self._spawn(run(), "blockConcurrencyWhile")

    def waitUntil(self, awaitable: Awaitable[Any]) -> None:
        """Let ``awaitable`` finish in the background."""

        async def wait() -> None:
            await awaitable

        self._spawn(wait(), "waitUntil")

    wait_until = waitUntil

    def reset(self, reason: str | None = None) -> None:
        """Reset the object (``state.abort()`` as workerd runs it): the instance is dropped, storage kept."""
        self._abort(reason)

    def abort(self, reason: str | None = None) -> None:
        """Reset the object: the instance is dropped, its storage kept."""
        self._abort(reason)
        raise DurableObjectAbortError(reason or "Durable Object abort requested")


class DurableObjectAbortError(BaseException):
    """Raised by ``ctx.abort()`` to stop the running event (a BaseException, as in the SDK)."""
