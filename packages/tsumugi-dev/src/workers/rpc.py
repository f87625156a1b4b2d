"""Values crossing a Workers RPC boundary, with the SDK's conversion rules and copy semantics.

On Cloudflare a value sent over RPC goes Python -> JS (``python_to_rpc``: dicts become plain objects, ``None``
becomes ``null``) -> structured clone -> JS -> Python (``python_from_rpc``: plain objects come back as
``JsDict``, arrays as lists, integral numbers as ``int``). Nothing is shared. ``transfer`` does the whole trip
here, so a callee never sees the caller's objects and an unsupported type fails as it would there.
"""

from __future__ import annotations

import datetime
import inspect
import math
from collections.abc import Callable
from typing import Any

from workers.http import FetchResponse, Request

__all__ = [
    "JsDict",
    "RemoteError",
    "property_key",
    "python_from_rpc",
    "python_to_rpc",
    "remote_error",
    "transfer",
]

_MAX_SAFE_INT = 2**53


class JsDict(dict[str, Any]):
    """A ``dict`` whose keys can also be read as attributes: what the SDK makes of a plain JS object.

    Defined here, as in the SDK (``workers/rpc.py``), and without imports from ``tsumugi_dev``, so that
    ``import workers`` works on its own. Like the SDK's, it has no ``__delattr__``: ``del d.key`` raises
    ``AttributeError`` and keeps the key.
    """

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value


class RemoteError(Exception):
    """An exception raised on the other side of an RPC boundary, as the caller sees it.

    Only the exception's type name and message cross (Cloudflare sends a JS ``Error``), never the object.
    """

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}" if message else name)
        self.name = name
        self.message = message


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


def python_to_rpc(value: Any, where: str = "value") -> Any:
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
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, tuple | bytearray):
        raise TypeError(f"{where}: {type(value)!r} cannot be sent over RPC.")  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(value, dict):
        items: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {property_key(k): python_to_rpc(v, _path(where, k)) for k, v in items.items()}
    if isinstance(value, list):
        elements: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return [python_to_rpc(v, f"{where}[{i}]") for i, v in enumerate(elements)]
    if isinstance(value, set | frozenset):
        members: set[Any] = set(value)  # pyright: ignore[reportUnknownArgumentType]
        return {python_to_rpc(v, f"{where}{{}}") for v in members}
    return _to_rpc_object(value, where)


def _to_rpc_object(value: Any, where: str) -> Any:
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
    """A function crosses as a stub: calling it copies the arguments and the result back."""

    async def stub(*args: Any) -> Any:
        sent = [transfer(a, f"args[{i}]") for i, a in enumerate(args)]
        result = fn(*sent)
        if inspect.isawaitable(result):
            result = await result
        return transfer(result, "result")

    return stub


def python_from_rpc(obj: Any) -> Any:
    """Shape a received value as the SDK does: dicts become ``JsDict``, integral numbers ``int``."""
    if isinstance(obj, float) and obj.is_integer() and abs(obj) <= _MAX_SAFE_INT:
        return int(obj)
    if isinstance(obj, dict):
        items: dict[Any, Any] = obj  # pyright: ignore[reportUnknownVariableType]
        return JsDict({str(k): python_from_rpc(v) for k, v in items.items()})
    if isinstance(obj, list):
        elements: list[Any] = obj  # pyright: ignore[reportUnknownVariableType]
        return [python_from_rpc(v) for v in elements]
    return obj


def transfer(value: Any, where: str = "value") -> Any:
    """Copy ``value`` across an RPC boundary (``python_from_rpc(python_to_rpc(value))``)."""
    return python_from_rpc(python_to_rpc(value, where))


def remote_error(exc: BaseException) -> RemoteError:
    """What the caller sees of an exception raised by the callee."""
    if isinstance(exc, RemoteError):
        return RemoteError(exc.name, exc.message)
    return RemoteError(type(exc).__name__, str(exc))
