"""Values crossing a Workers RPC boundary, with the SDK's conversion rules and copy semantics.

On Cloudflare a value sent through a binding the SDK wraps (``env.X``, a Durable Object stub, a queue) goes
Python -> JS (the SDK's ``python_to_rpc``: dicts become plain objects, ``None`` becomes ``null``) ->
structured clone -> JS -> Python (``python_from_rpc``: plain objects come back as ``JsDict``, arrays as lists,
integral numbers as ``int``, typed arrays as ``memoryview``). Nothing is shared. Here ``to_js`` produces the
JS side's value (plain Python containers stand for JS objects and arrays) and ``from_js`` the receiver's;
``transfer`` does the whole trip, so a callee never sees the caller's objects and an unsupported type fails
as it would there.

What the SDK does not wrap (``ctx.exports``, functions received over RPC) follows Pyodide's implicit rules
instead (`tsumugi_dev.ffi`): a callback that returns a ``dict`` fails with ``DataCloneError``. The public
``python_to_rpc`` / ``python_from_rpc`` convert explicitly, as the SDK's do: ``python_to_rpc`` answers a JS
value (`JsProxy` for objects and arrays), ``python_from_rpc`` turns one into Python. See ADR-0042.
"""

from __future__ import annotations

import asyncio
import datetime
import inspect
import math
import traceback
from collections.abc import Callable
from typing import Any, cast

from workers.http import FetchResponse, Request

from tsumugi_dev.ffi import JsException, JsProxy, from_js_implicit, to_js_implicit

__all__ = [
    "JsDict",
    "JsException",
    "RemoteError",
    "from_js",
    "property_key",
    "python_from_rpc",
    "python_to_rpc",
    "remote_error",
    "to_js",
    "transfer",
]

_MAX_SAFE_INT = 2**53

RemoteError = JsException
"""What a caller catches for an error raised across RPC (a ``JsException`` on Cloudflare too)."""


class JsDict(dict[str, Any]):
    """A ``dict`` whose keys can also be read as attributes: what the SDK makes of a plain JS object.

    Defined here, as in the SDK (``workers/rpc.py``). Like the SDK's, it has no ``__delattr__``:
    ``del d.key`` raises ``AttributeError`` and keeps the key.
    """

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value


def property_key(key: object) -> str:
    """The JS property name a dict key becomes (the SDK sends dicts through ``Object.fromEntries``).

    ECMAScript ``ToPropertyKey``: ``True`` -> ``"true"``, ``None`` -> ``"undefined"`` (``to_js`` makes it
    ``undefined``), an int -> its digits.
    """
    if isinstance(key, str):
        return key if type(key) is str else str.__str__(key)
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "undefined"
    if isinstance(key, int):
        return str(int(key))
    return str(key)


def _path(where: str, key: object) -> str:
    return f"{where}[{key!r}]"


def to_js(value: Any, where: str = "value") -> Any:
    """Check and copy ``value`` for sending; raises ``TypeError`` naming the path of an unsupported part."""
    if value is None or isinstance(value, bool):
        return value
    # JS has no subclasses of its primitives: an enum member or other subclass arrives as the plain value.
    if isinstance(value, str):
        return value if type(value) is str else str.__str__(value)
    if isinstance(value, int):
        return value if type(value) is int else int(value)
    if isinstance(value, float):
        return value if type(value) is float else float(value)
    if isinstance(value, bytes | memoryview):
        return bytes(cast(bytes, value))  # a Uint8Array
    if isinstance(value, tuple | bytearray):
        raise TypeError(f"{where}: {type(value)!r} cannot be sent over RPC.")  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(value, JsProxy):
        return value.js_value  # already a JS value (e.g. from python_to_rpc)
    if isinstance(value, dict):
        items: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {property_key(k): to_js(v, _path(where, k)) for k, v in items.items()}
    if isinstance(value, list):
        elements: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return [to_js(v, f"{where}[{i}]") for i, v in enumerate(elements)]
    if isinstance(value, set | frozenset):
        members: set[Any] = set(value)  # pyright: ignore[reportUnknownArgumentType]
        return {to_js(v, f"{where}{{}}") for v in members}
    return _to_js_object(value, where)


def _to_js_object(value: Any, where: str) -> Any:
    if isinstance(value, datetime.datetime):
        # The SDK sends js.Date.new(timestamp() * 1000); a JS Date keeps whole milliseconds (TimeClip
        # truncates toward zero) and no zone, so the receiver gets a naive local datetime.
        return datetime.datetime.fromtimestamp(math.trunc(value.timestamp() * 1000) / 1000)
    if isinstance(value, Exception):
        # The SDK sends js.Error.new(str(value)); the receiver gets Exception(error.toString()).
        message = str(value)
        return Exception(f"Error: {message}" if message else "Error")
    if isinstance(value, Request):
        return value.clone()
    if isinstance(value, FetchResponse):
        return value.clone()
    if inspect.isawaitable(value):
        raise TypeError(f"{where}: Awaitable {type(value)} cannot be sent over RPC.")
    if callable(value) and not isinstance(value, type):
        return _stub_for(value)
    raise TypeError(
        f"{where}: {type(value).__name__} cannot be sent over RPC (only None, bool, int, float, str, bytes, "
        "list, dict, set, datetime, Exception, Request, Response and functions can)"
    )


def _stub_for(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A function crosses as a stub, and nothing on either side converts what goes through it.

    The holder calls the stub with Python values that leave as Pyodide passes them (`to_js_implicit`: only
    ``None``/``bool``/``int``/``float``/``str``, JS values and functions); ``fn`` receives them as JS values
    (objects as `JsProxy`); its result leaves the same way, so a ``dict`` result is a ``DataCloneError`` for
    the holder, exactly as on Cloudflare (ADR-0042).
    """

    async def stub(*args: Any) -> Any:
        sent = [to_js_implicit(a, f"args[{i}]") for i, a in enumerate(args)]
        await asyncio.sleep(0)  # a call across RPC: other events may run meanwhile
        try:
            result = fn(*[from_js_implicit(a) for a in sent])
            if inspect.isawaitable(result):
                result = await result  # workerd awaits a returned promise (a PyProxy of a coroutine is one)
            answer = to_js_implicit(result, "result")
        except Exception as exc:
            raise remote_error(exc) from None
        await asyncio.sleep(0)
        return from_js_implicit(answer)

    return stub


def from_js(value: Any) -> Any:
    """A received JS value as the SDK shapes it: objects become ``JsDict``, integral numbers ``int``."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_SAFE_INT:
        return int(value)
    if isinstance(value, dict):
        items: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return JsDict({str(k): from_js(v) for k, v in items.items()})
    if isinstance(value, list):
        elements: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return [from_js(v) for v in elements]
    if isinstance(value, bytes):
        return memoryview(value)  # a Uint8Array's to_py()
    return value


def transfer(value: Any, where: str = "value") -> Any:
    """Copy ``value`` across an RPC boundary through the SDK's conversions (``from_js(to_js(value))``)."""
    return from_js(to_js(value, where))


def python_to_rpc(value: Any) -> Any:
    """The SDK's explicit conversion: ``value`` as a JS value (objects and arrays as `JsProxy`).

    Pass the result where nothing converts (a ``ctx.exports`` stub, a function received over RPC). Raises
    ``TypeError`` for what the SDK refuses (tuples, bytearrays, awaitables, unknown objects).
    """
    if value is None:
        return None
    return from_js_implicit(to_js(value))


def python_from_rpc(obj: Any) -> Any:
    """The SDK's explicit conversion of a received JS value (a `JsProxy`); Python values pass unchanged."""
    if isinstance(obj, JsProxy):
        return from_js(obj.js_value)
    return obj


def remote_error(exc: BaseException) -> JsException:
    """What the caller sees of an exception raised by the callee.

    A JS error (workerd's own, or one passed on) keeps its name and message. A Python exception leaves the
    callee as Pyodide's ``PythonError``, whose message is the formatted traceback, ending with the
    exception's ``<qualified type>: <message>`` line; with ``enhanced_error_serialization`` (compatibility
    date 2026-04-21 on) the name crosses too.
    """
    if isinstance(exc, JsException):
        return JsException(exc.name, exc.message)
    return JsException("PythonError", "".join(traceback.format_exception(exc)))
