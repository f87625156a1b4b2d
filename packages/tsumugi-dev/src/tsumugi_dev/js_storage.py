# pyright: reportPrivateUsage=false
# (The runtime's half of the JS emulation reads jsemu's object internals; ADR-0097.)
"""A Durable Object's ``state`` as workerd hands it to the constructor: JS objects over the runtime's storage.

``DurableObjectState`` (``id``, ``storage``, ``blockConcurrencyWhile``, ``waitUntil``, ``abort``),
``DurableObjectStorage`` (``sql``, alarms, ``transactionSync``, ``sync``, ``deleteAll``), ``SqlStorage`` and
its cursors. Rows are plain JS objects (not subscriptable from Python until converted, as on Cloudflare),
``getAlarm()`` resolves to a number or JS ``null``, SQL ``NULL`` reads as JS ``null``, a BLOB as an
ArrayBuffer. The Workers SDK wraps ``state`` (``DurableObjectContext``) and its storage (``_BindingWrapper``),
which converts rows and nulls; code reading the raw ``state`` gets these objects as they are.
Sources: developers.cloudflare.com/durable-objects/api/ (state, storage, SQL API); workerd
``src/workerd/api/sql.h`` (``BindingValue``: bytes, string or double).
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterator
from typing import Any, ClassVar, cast

from jsemu.core import (
    MAX_SAFE_INTEGER,
    UNDEFINED,
    HostObject,
    JsBigIntValue,
    JsCallable,
    PyProxy,
    js_error,
    jsnull,
)
from jsemu.objects import ArrayBuffer, JsArray, JsDate, JsObject, Uint8Array
from jsemu.promise import JsPromise

from tsumugi_dev.do_sql import SqlCursor, SqlError
from tsumugi_dev.do_storage import DurableObjectState, DurableObjectStorage
from tsumugi_dev.js_values import await_js, js_callback

__all__ = ["JsAlarmInvocationInfo", "JsDurableObjectId", "JsDurableObjectState", "JsSqlCursor", "sql_binding"]


def sql_binding(value: Any, index: int) -> Any:
    """A JS value bound to a statement, as ``SqlStorage.exec`` takes it (``bytes | string | double``)."""
    kind: Any = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is str or kind is float:
        return value
    if kind is int:
        return float(value)
    if value is jsnull or value is UNDEFINED:
        return None  # workerd binds undefined as NULL, like null (tests/shapes: bind.undefined)
    if kind is bool:
        return "true" if value else "false"  # no numeric type takes a boolean: ToString
    if kind is JsBigIntValue:
        raise js_error("TypeError", "Cannot convert a BigInt value to a number")
    if isinstance(value, Uint8Array | ArrayBuffer):
        return value.to_bytes()
    if isinstance(value, PyProxy):
        return str(value._obj)  # a PyProxy's ToString
    return str(value)


def _cell(value: Any) -> Any:
    kind: Any = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is str or kind is float:
        return value
    if kind is int:
        return value if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else float(value)
    if value is None:
        return jsnull
    if kind is bytes or isinstance(value, memoryview):
        return ArrayBuffer(bytearray(cast(bytes, value)))
    return value


def _row(columns: list[str], row: tuple[Any, ...]) -> JsObject:
    return JsObject(dict(zip(columns, map(_cell, row), strict=True)))


class JsSqlCursor(HostObject):
    """workerd's ``Cursor``: ``one()``, ``toArray()``, ``next()``, ``raw()``, iteration, counts."""

    __slots__ = ("_cursor",)
    _cursor: Any
    js_class: ClassVar[str] = "Cursor"

    def __init__(self, cursor: SqlCursor) -> None:
        object.__setattr__(self, "_cursor", cursor)

    def _remaining(self) -> list[tuple[Any, ...]]:
        cursor = self._cursor
        rows = cursor._rows[cursor._next :]
        cursor._next = len(cursor._rows)
        return rows

    def js_one(self) -> Any:
        cursor = self._cursor
        rows = self._remaining()
        if len(rows) != 1:
            got = "no results" if not rows else "multiple results"
            raise js_error("Error", f"Expected exactly one result from SQL query, but got {got}.")
        return _row(cursor.columnNames, rows[0])

    def js_toArray(self) -> Any:
        columns = self._cursor.columnNames
        return JsArray([_row(columns, row) for row in self._remaining()])

    def js_next(self) -> Any:
        cursor = self._cursor
        if cursor._next >= len(cursor._rows):
            return JsObject({"done": True, "value": UNDEFINED})
        row = cursor._rows[cursor._next]
        cursor._next += 1
        return JsObject({"done": False, "value": _row(cursor.columnNames, row)})

    def js_raw(self) -> Any:
        return JsRawIterator([JsArray([_cell(v) for v in row]) for row in self._remaining()])

    @property
    def js_columnNames(self) -> Any:
        return JsArray(list(self._cursor.columnNames))

    @property
    def js_rowsRead(self) -> Any:
        return self._cursor.rowsRead

    @property
    def js_rowsWritten(self) -> Any:
        return self._cursor.rowsWritten

    def __iter__(self) -> Iterator[Any]:
        columns = self._cursor.columnNames
        return iter([_row(columns, row) for row in self._remaining()])


class JsRawIterator(HostObject):
    """``cursor.raw()``: workerd's ``RawIterator`` (an Iterator: ``next()``, ``toArray()``, iteration)."""

    __slots__ = ("_rows",)
    _rows: Any
    js_class: ClassVar[str] = "RawIterator"
    js_inherits: ClassVar[str] = "Iterator"
    """Its prototype's prototype is Iterator.prototype, where ``toArray`` and the other helpers live."""

    def __init__(self, rows: list[Any]) -> None:
        object.__setattr__(self, "_rows", rows)

    def js_next(self) -> Any:
        if not self._rows:
            return JsObject({"done": True, "value": UNDEFINED})
        return JsObject({"done": False, "value": self._rows.pop(0)})

    def js_toArray(self) -> Any:
        rows, self._rows[:] = list(self._rows), []
        return JsArray(rows)

    def __iter__(self) -> Iterator[Any]:
        rows, self._rows[:] = list(self._rows), []
        return iter(rows)


_KJ_DATE_LIMIT_MS = 9223372036854.775807
"""workerd's bound on a Date argument: a ``kj::Date`` is 64-bit nanoseconds, so +-(2**63 - 1) ns in ms, which as a
double is 9223372036854.775390625 (tests/shapes: ``alarms.setAlarm_after_latest``, ``setAlarm_latest``)."""


def _alarm_time(value: Any) -> int:
    """``setAlarm``'s argument as workerd takes it: a number or a Date, finite, within a ``kj::Date`` (about
    1677 to 2262, whatever the messages say), cut to the millisecond and after 0; else workerd's TypeError.

    A numeric string, a BigInt, a boxed number or an object with ``valueOf`` is not converted: only a Date or a
    number is. Each refusal and bound is in the workerd record (tests/shapes/workerd-shapes.json, ``alarms``).
    """
    kind: Any = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is JsDate:
        ms: float = value._ms
    elif kind is int or kind is float:  # a BigInt (JsBigIntValue) and a boolean are other types
        ms = value
    else:
        raise js_error(
            "TypeError",
            "Failed to execute 'setAlarm' on 'DurableObjectStorage': parameter 1 is not of type 'date'.",
        )
    if not math.isfinite(ms):
        raise js_error("TypeError", "The value cannot be converted because it is not a valid Date.")
    if ms >= _KJ_DATE_LIMIT_MS:
        raise js_error("TypeError", "This API doesn't support dates after 2189.")
    if ms <= -_KJ_DATE_LIMIT_MS:
        raise js_error("TypeError", "This API doesn't support dates before 1687.")
    at_ms = math.trunc(ms)
    if at_ms <= 0:
        raise js_error("TypeError", "setAlarm() cannot be called with an alarm time <= 0")
    return at_ms


class _JsSqlStorage(HostObject):
    __slots__ = ("_storage",)
    _storage: Any
    js_class: ClassVar[str] = "SqlStorage"

    def __init__(self, storage: DurableObjectStorage) -> None:
        object.__setattr__(self, "_storage", storage)

    def js_exec(self, query: Any, *bindings: Any) -> Any:
        if not isinstance(query, str):
            raise js_error(
                "TypeError", "Failed to execute 'exec' on 'SqlStorage': parameter 1 is not of type 'string'."
            )
        params = [sql_binding(value, i) for i, value in enumerate(bindings)]
        try:
            return JsSqlCursor(self._storage.sql.exec(query, *params))
        except SqlError as error:
            raise js_error("Error", str(error)) from None

    @property
    def js_databaseSize(self) -> Any:
        return self._storage.sql.databaseSize


class _JsStorage(HostObject):
    __slots__ = ("_sql", "_storage")
    _sql: Any
    _storage: Any
    js_class: ClassVar[str] = "DurableObjectStorage"

    def __init__(self, storage: DurableObjectStorage) -> None:
        object.__setattr__(self, "_storage", storage)
        object.__setattr__(self, "_sql", _JsSqlStorage(storage))

    def _js_get(self, name: str) -> Any:
        return self._sql if name == "sql" else super()._js_get(name)  # an own data property on workerd

    def _js_keys(self) -> list[str]:
        return ["sql"]

    def js_getAlarm(self, options: Any = UNDEFINED) -> Any:
        storage = self._storage
        stored = None if storage.alarm_running else storage.stored_alarm()  # none while alarm() runs
        return JsPromise.resolved(jsnull if stored is None else stored[0])

    def js_setAlarm(self, scheduled_time: Any = UNDEFINED, options: Any = UNDEFINED) -> Any:
        self._storage.setAlarm(_alarm_time(scheduled_time))
        return JsPromise.resolved(UNDEFINED)

    def js_deleteAlarm(self, options: Any = UNDEFINED) -> Any:
        self._storage.deleteAlarm()
        return JsPromise.resolved(UNDEFINED)

    def js_transactionSync(self, callback: Any = UNDEFINED) -> Any:
        if not (isinstance(callback, JsCallable | PyProxy) or callable(getattr(callback, "js_call", None))):
            raise js_error(
                "TypeError",
                "Failed to execute 'transactionSync' on 'DurableObjectStorage': parameter 1 is not of type 'function'.",
            )
        call = js_callback(callback)
        return self._storage.transaction_sync(call)

    def js_sync(self) -> Any:
        return JsPromise.resolved(UNDEFINED)

    def js_deleteAll(self, options: Any = UNDEFINED) -> Any:
        self._storage.deleteAll()
        return JsPromise.resolved(UNDEFINED)


class JsAlarmInvocationInfo(HostObject):
    """The argument of ``alarm()``: workerd's ``AlarmInvocationInfo``, own ``scheduledTime``, ``retryCount``
    and ``isRetry`` (``scheduledTime`` is the alarm's time, the same on each retry)."""

    __slots__ = ("_own",)
    _own: Any
    js_class: ClassVar[str] = "AlarmInvocationInfo"

    def __init__(self, scheduled_at: int, retry_count: int) -> None:
        own = {"scheduledTime": scheduled_at, "retryCount": retry_count, "isRetry": retry_count > 0}
        object.__setattr__(self, "_own", own)

    def _js_get(self, name: str) -> Any:
        own = self._own
        return own[name] if name in own else super()._js_get(name)

    def _js_keys(self) -> list[str]:
        return list(self._own)


class JsDurableObjectId(HostObject):
    """``DurableObjectId``: ``toString()``, ``equals(other)``, ``name``."""

    __slots__ = ("_id",)
    _id: Any
    js_class: ClassVar[str] = "DurableObjectId"

    def __init__(self, object_id: Any) -> None:
        object.__setattr__(self, "_id", object_id)

    @property
    def local_id(self) -> Any:
        """The runtime's id object."""
        return self._id

    def js_toString(self) -> Any:
        return self._id.toString()

    def js_equals(self, other: Any) -> Any:
        return isinstance(other, JsDurableObjectId) and other._id.toString() == self._id.toString()

    def _js_get(self, name: str) -> Any:
        # Own data properties on workerd: ``jurisdiction`` (none here) and ``name`` (set by idFromName).
        if name == "name":
            return UNDEFINED if self._id.name is None else self._id.name
        if name == "jurisdiction":
            return UNDEFINED
        return super()._js_get(name)

    def _js_keys(self) -> list[str]:
        return ["jurisdiction", "name"]

    def _js_to_string(self) -> str:
        return self._id.toString()


class JsDurableObjectState(HostObject):
    """``DurableObjectState``: what workerd passes a Durable Object's constructor as ``ctx``."""

    __slots__ = ("_exports", "_id", "_state", "_storage")
    _exports: Any
    _id: Any
    _state: Any
    _storage: Any
    js_class: ClassVar[str] = "DurableObjectState"

    def __init__(self, state: DurableObjectState, object_id: JsDurableObjectId, exports: Any = None) -> None:
        object.__setattr__(self, "_state", state)
        object.__setattr__(self, "_storage", _JsStorage(state.storage))
        object.__setattr__(self, "_id", object_id)
        object.__setattr__(self, "_exports", JsObject({}) if exports is None else exports)

    def _js_get(self, name: str) -> Any:
        # Own data properties on workerd (of its facets, container, storage, id, props, exports: these four).
        # ``exports``: the Worker's entrypoints as loopback stubs, as on an invocation's ctx (the Run object
        # finds performers the scheduler Worker exports itself through it).
        if name == "storage":
            return self._storage
        if name == "id":
            return self._id
        if name == "props":
            return JsObject({})
        if name == "exports":
            return self._exports
        return super()._js_get(name)

    def _js_keys(self) -> list[str]:
        return ["storage", "id", "props", "exports"]

    def js_blockConcurrencyWhile(self, callback: Any) -> Any:
        started = js_callback(callback)()  # workerd calls it at once (a borrowed proxy is still alive)

        async def run() -> Any:
            return await await_js(started)

        return JsPromise.from_awaitable(self._state.blockConcurrencyWhile(run))

    def js_waitUntil(self, promise: Any) -> Any:
        self._state.waitUntil(await_js(promise))
        return UNDEFINED

    def js_abort(self, reason: Any = UNDEFINED) -> Any:
        self._state.reset(None if reason is UNDEFINED else str(reason))
        return UNDEFINED


_ = (datetime, JsCallable)
