"""The only place that knows how the Workers runtime hands values to Python (JsProxy, wrapped bindings).

Everything else in tsumugi_scheduler takes plain Python values and duck-typed bindings, so it imports and
runs on plain CPython; this module adapts what the runtime gives (``ctx.storage``, JS objects) and serves
the REST API's ASGI app with the SDK's ``workers.asgi.fetch`` (imported when first called, so this module
imports on plain CPython too). Only the Worker classes (``entrypoints.py``, ``entry.py``) call it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from http import HTTPMethod
from typing import Any, Final, TypeVar

from tsumugi_scheduler.request_limits import MAX_BODY_BYTES

__all__ = [
    "DurableObjectSql",
    "JsonCalls",
    "LentCallable",
    "PostText",
    "current_alarm",
    "get_text",
    "json_to_rpc",
    "plain",
    "post_text",
    "serve_asgi",
    "set_alarm",
]

T = TypeVar("T")

PostText = Callable[[str, str, Mapping[str, str], float], Awaitable[tuple[int, str]]]
"""POST ``body`` (text) with ``headers`` to ``url``, answering (status, body text) within ``timeout_s``."""


async def post_text(url: str, body: str, headers: Mapping[str, str], timeout_s: float) -> tuple[int, str]:
    """POST through the Worker's ``fetch`` (``workers.fetch``), the platform's HTTP client.

    Worker code uses no httpx: PyPI's build needs httpcore, anyio and sockets, which Pyodide lacks, and the
    upload carries none (ADR-0107). Raises what ``fetch`` raises (``OSError`` on Cloudflare) and
    ``TimeoutError`` after ``timeout_s``.
    """
    from workers import fetch  # the SDK: present in a Worker, and under the local runtime

    async def send() -> tuple[int, str]:
        response = await fetch(url, method=HTTPMethod.POST, headers=dict(headers), body=body)
        return int(response.status), str(await response.text())

    return await asyncio.wait_for(send(), timeout_s)


async def get_text(url: str, timeout_s: float = 10.0) -> tuple[int, str]:
    """GET ``url`` through the Worker's ``fetch``, answering (status, body text) within ``timeout_s``."""
    from workers import fetch

    async def send() -> tuple[int, str]:
        response = await fetch(url, method=HTTPMethod.GET)
        return int(response.status), str(await response.text())

    return await asyncio.wait_for(send(), timeout_s)


def plain(value: Any) -> Any:
    """A JS value as Python (``to_py``); Python values (the local runtime's) pass through."""
    to_py = getattr(value, "to_py", None)
    return to_py() if callable(to_py) else value


async def serve_asgi(app: Any, request: Any, env: Any) -> Any:
    """Answer ``request`` with the ASGI ``app`` (``workers.asgi.fetch``).

    The adapter gets the JS Request (``js_object``), which it accepts as well: the SDK's wrapper reads its
    method as ``HTTPMethod[name]``, a ``KeyError`` (a 500) for a method workerd passes on but Python's enum
    lacks, such as QUERY or PURGE. With the string the app answers 405 with ``Allow`` (ADR-0059).
    """
    from workers import Response, asgi  # the SDK: present in a Worker, and under the local runtime

    declared = request.headers.get("content-length")
    text = None if declared is None else str(declared)
    if text is not None and (not (text.isascii() and text.isdigit()) or int(text) > MAX_BODY_BYTES):
        # Before the adapter reads the body into memory (ADR-0065): the app's own check would come too late.
        error = f'{{"error": "body must be at most {MAX_BODY_BYTES} bytes"}}'
        return Response(error, status=413, headers={"content-type": "application/json"})
    return await asgi.fetch(app, getattr(request, "js_object", request), env)


class LentCallable:
    """A Python callable lent to JS for as long as a call runs (``value``), then released.

    Handed to a raw stub (``ctx.exports``), a Python function becomes a borrowed PyProxy that Pyodide
    destroys when the JS call returns, which is before the remote side calls it back; through the SDK's
    wrapper it becomes a proxy nobody destroys. A proxy made here lives until `release` (ADR-0099).
    Without Pyodide (plain CPython, no JS in between) ``value`` is the callable itself.
    """

    def __init__(self, fn: Callable[..., Any]) -> None:
        """Lend ``fn``."""
        try:
            from pyodide.ffi import create_proxy  # present in a Worker, and under the local runtime
        except ImportError:
            self.value: Any = fn
            self._proxy: Any = None
            return
        self._proxy = self.value = create_proxy(fn)

    def release(self) -> None:
        """End the loan (idempotent)."""
        proxy, self._proxy = self._proxy, None
        if proxy is not None:
            proxy.destroy()


async def current_alarm(storage: Any) -> int | None:
    """The Durable Object's armed alarm in epoch ms, or None.

    ``getAlarm()`` resolves to a number or to JS ``null``: the SDK's storage wrapper turns ``null`` into
    ``None``, a raw storage object hands Pyodide's ``jsnull`` (falsy, not ``None``). Both read as no alarm.
    """
    current = await storage.getAlarm()
    if isinstance(current, int | float) and not isinstance(current, bool):
        return int(current)
    return None


LATEST_ALARM_MS: Final = 9_223_372_036_854
"""The latest instant workerd's ``setAlarm`` takes, in epoch ms: it holds an alarm as 64-bit nanoseconds
(``kj::Date``), so it refuses from 2**63 - 1 ns on (about the year 2262; tests/shapes: ``alarms.setAlarm_latest``,
``alarms.setAlarm_after_latest``)."""


async def set_alarm(storage: Any, at_ms: int) -> None:
    """Arm the Durable Object's alarm for ``at_ms``, or for `LATEST_ALARM_MS` when ``at_ms`` is later.

    A wake that far off (a job delayed or asleep until the latest safe instant, ``2**53 - 1`` ms) would make
    ``setAlarm`` throw and fail the call that armed it; armed at the latest instant workerd keeps, the alarm
    finds nothing due then and arms again.
    """
    await storage.setAlarm(min(at_ms, LATEST_ALARM_MS))


_PLAIN_PARAMS = frozenset({str, int, float, bool})

_NUMBER_BOUND = 2**53 - 1
"""Pyodide 0.28 sends an int of this size or more as a JS BigInt (tests/ffi, ``arg_int_2_53_minus_1``), which
workerd's SQL refuses. The bound itself is exact as a double, and workerd binds every number as one."""


def _bound_as_number(value: Any) -> Any:
    """``value``, with an int of exactly +-(2**53 - 1) as the float it equals (larger ints stay: refused)."""
    if type(value) is int and abs(value) == _NUMBER_BOUND:
        return float(value)
    return value


_ROW_TYPES: list[Any] = []
"""``[JsDict, jsnull]`` once first needed (imported then: both exist in a Worker and the local runtime)."""


def _row_types() -> list[Any]:
    if not _ROW_TYPES:
        from pyodide.ffi import jsnull  # present in a Worker, and under the local runtime
        from workers.rpc import JsDict

        _ROW_TYPES.extend((JsDict, jsnull))
    return _ROW_TYPES


def _sdk_row(values: Any) -> Any:
    """A row dict from ``to_py()`` as the SDK's wrapper hands it: a ``JsDict``, JS null read as ``None``."""
    js_dict, jsnull = _ROW_TYPES or _row_types()
    return js_dict({k: None if v is jsnull else v for k, v in values.items()})


class _SqlCursor:
    """A cursor of the raw ``SqlStorage``, read the way the SDK's storage wrapper reads one (ADR-0101)."""

    __slots__ = ("_cursor",)

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    def one(self) -> Any:
        return _sdk_row(self._cursor.one().to_py())

    def toArray(self) -> list[Any]:
        """Every row, read as value arrays (``raw()``) and named here: one array per row crosses instead of
        one object per row, which workerd builds and Pyodide converts key by key (ADR-0128). A row object
        puts array-index names (``"1"``) first; a query naming a column so reads through ``toArray()``."""
        js_dict, jsnull = _ROW_TYPES or _row_types()
        cursor = self._cursor
        names: list[str] = cursor.columnNames.to_py()
        if any(name.isdigit() for name in names):
            rows = cursor.toArray().to_py()
            return [js_dict({k: None if v is jsnull else v for k, v in row.items()}) for row in rows]
        return [
            js_dict(zip(names, [None if v is jsnull else v for v in values], strict=True))
            for values in cursor.raw().toArray().to_py()
        ]

    def column(self, name: str) -> list[Any]:
        """Column ``name`` of every row, no row object made (`json_rows.decoded_rows`: one text per row)."""
        jsnull = (_ROW_TYPES or _row_types())[1]
        cursor = self._cursor
        names: list[str] = cursor.columnNames.to_py()
        if any(n.isdigit() for n in names):  # a row object puts such names first: read as toArray() does
            return [row[name] for row in self.toArray()]
        # A repeated name holds its last value, as in a row object.
        at = len(names) - 1 - names[::-1].index(name)
        return [None if (v := values[at]) is jsnull else v for values in cursor.raw().toArray().to_py()]

    def __iter__(self) -> Any:
        return iter(self.toArray())

    @property
    def rowsRead(self) -> int:
        return int(self._cursor.rowsRead)

    @property
    def rowsWritten(self) -> int:
        return int(self._cursor.rowsWritten)


class DurableObjectSql:
    """The engine's SQL port over a Durable Object's storage: ``exec`` and ``transaction_sync``.

    ``storage`` is the SDK's wrapped ``self.ctx.storage``. Statements go to ``raw_sql``, the constructor's
    ``ctx.storage.sql``, with the wrapper's conversions done here once per statement instead of once per
    argument in generic code (``None`` binds as JS null, rows come back as ``JsDict`` with null read as
    ``None``): measured, the wrapper's generic path cost more than the rest of a job (ADR-0101).
    ``transactionSync`` runs a Python callable from JS. Handed a plain function, the wrapper would make a new
    PyProxy at every call and never destroy it (a leak per transaction); so one long-lived proxy of
    `_run_pending` is made here, once per object, and passed instead (ADR-0099).
    """

    def __init__(self, storage: Any, raw_sql: Any = None) -> None:
        """Wrap ``self.ctx.storage``; ``raw_sql`` is the raw ``ctx.storage.sql`` (None: through the wrapper)."""
        self._storage = storage
        self._raw = raw_sql
        self._pending: list[Callable[[], Any]] = []
        self._results: list[Any] = []
        run_in_transaction = getattr(storage, "transactionSync", None)
        if run_in_transaction is None:  # a plain sqlite3 shim (tests): no JS in between
            self._transaction: Callable[[Any], Any] = storage.transaction_sync
            self._callback: Any = self._run_pending
        else:
            from pyodide.ffi import create_proxy  # present in a Worker, and under the local runtime

            self._transaction = run_in_transaction
            self._callback = create_proxy(self._run_pending)

    def _run_pending(self) -> None:
        self._results.append(self._pending[-1]())

    def exec(self, query: str, *params: Any) -> Any:
        """Run one statement (``ctx.storage.sql.exec``)."""
        if any(type(p) is int and not -_NUMBER_BOUND < p < _NUMBER_BOUND for p in params):
            params = tuple(_bound_as_number(p) for p in params)
        raw = self._raw
        if raw is None:
            return self._storage.sql.exec(query, *params)
        if any(type(p) not in _PLAIN_PARAMS for p in params):
            params = tuple(_param(p) for p in params)
        return _SqlCursor(raw.exec(query, *params))

    def transaction_sync(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` atomically (``ctx.storage.transactionSync``); nested calls nest."""
        self._pending.append(fn)
        depth = len(self._results)
        try:
            self._transaction(self._callback)
            return self._results[depth]
        finally:
            self._pending.pop()
            del self._results[depth:]


def _param(value: Any) -> Any:
    """One binding as the SDK's ``python_to_rpc`` sends it (``None`` -> JS null, bytes -> Uint8Array)."""
    if type(value) in _PLAIN_PARAMS:
        return value
    import workers

    sdk: Any = workers  # the SDK's own conversion (unannotated)
    convert: Callable[[Any], Any] = sdk.python_to_rpc
    return convert(value)


_JSON_CONVERSION: list[Any] = []
"""``[to_js, Object.fromEntries, jsnull, _BindingWrapper, python_from_rpc]`` once first needed (in a Worker
and under the local runtime; elsewhere the import fails)."""


def _json_conversion() -> list[Any]:
    if not _JSON_CONVERSION:
        from js import Object  # present in a Worker, and under the local runtime
        from pyodide.ffi import jsnull, to_js
        from workers import rpc

        sdk: Any = rpc  # the SDK's own conversions (unannotated)
        _JSON_CONVERSION.extend((to_js, Object.fromEntries, jsnull, sdk._BindingWrapper, sdk.python_from_rpc))
    return _JSON_CONVERSION


def _nulls(value: Any, jsnull: Any) -> Any:
    """``value``, each ``None`` in its dicts and lists as JS null (as ``_replace_none_with_jsnull`` does)."""
    if isinstance(value, dict):
        items: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {
            k: jsnull if v is None else (_nulls(v, jsnull) if isinstance(v, dict | list) else v)
            for k, v in items.items()
        }
    if isinstance(value, list):
        listed: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return [
            jsnull if v is None else (_nulls(v, jsnull) if isinstance(v, dict | list) else v) for v in listed
        ]
    return value


def json_to_rpc(value: Any, *, nulls: bool = True) -> Any:
    """A JSON-shaped value (``dict`` with ``str`` keys, ``list``, ``str``, ``int``, ``float``, ``bool``,
    ``None``) as the SDK's ``python_to_rpc`` sends it: dicts as plain objects, ``None`` as JS null.

    The SDK walks the value three times (nulls replaced; every value checked against what RPC refuses:
    tuples, bytearrays, awaitables, RegExps, none of which JSON holds; then ``to_js``): here the nulls walk
    and ``to_js`` (ADR-0129; tests/integration/test_json_to_rpc.py compares both on every JSON kind).
    ``nulls=False`` skips the first walk, for a value its caller builds without any ``None``.
    """
    to_js, from_entries, jsnull = (_JSON_CONVERSION or _json_conversion())[:3]
    if value is None:
        return jsnull
    return to_js(_nulls(value, jsnull) if nulls else value, dict_converter=from_entries)


def unwrapped(value: Any) -> Any:
    """The JS object under the SDK's ``_BindingWrapper``, else ``value`` itself (plain CPython, a test's fake).

    For hot paths whose values are strings, numbers and proxies only (queue messages, the performer call,
    ADR-0169): they cross as themselves, so the wrapper's walks over each argument and answer do nothing.
    """
    try:
        wrapper: Any = (_JSON_CONVERSION or _json_conversion())[3]
    except ImportError:
        return value
    return value._binding if isinstance(value, wrapper) else value


def from_rpc(value: Any) -> Any:
    """A JS value from a raw call or a raw object read as the SDK's wrapper reads it (``python_from_rpc``: JS
    objects to dicts, JS null to None); a string, a number or ``None`` as it is, and anything at all where no
    SDK is present (plain CPython)."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    try:
        python_from_rpc: Callable[[Any], Any] = (_JSON_CONVERSION or _json_conversion())[4]
    except ImportError:
        return value
    return python_from_rpc(value)


class JsonCalls:
    """Methods of a binding called with JSON-shaped arguments, converted by `json_to_rpc`, on the JS object
    under the SDK's wrapper; a result is read with the SDK's ``python_from_rpc``, as the wrapper reads a
    plain-data answer (ADR-0129).

    A binding that is not the SDK's wrapper (plain CPython, a test's fake) is called with the values as they
    are, which is what it would get from the wrapper.
    """

    __slots__ = ("_binding", "_nulls", "_wrapped")

    def __init__(self, binding: Any, *, nulls: bool = True) -> None:
        """Calls on ``binding`` (``env.NAME``, or a stub); ``nulls=False``: arguments never hold ``None``."""
        try:
            wrapper: Any = (_JSON_CONVERSION or _json_conversion())[3]
        except ImportError:
            wrapper = None
        self._wrapped = wrapper is not None and isinstance(binding, wrapper)
        self._binding: Any = binding._binding if self._wrapped else binding
        self._nulls = nulls

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self._binding, name)
        if not self._wrapped:
            return method

        nulls = self._nulls

        def call(*args: Any) -> Any:
            result = method(*[json_to_rpc(a, nulls=nulls) for a in args])
            if hasattr(result, "then"):
                return _read_answer(result)
            return from_rpc(result)

        return call


async def _read_answer(promise: Any) -> Any:
    return from_rpc(await promise)
