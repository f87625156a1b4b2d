"""RPC between Workers and Durable Objects: the copy of every value that crosses, and the call itself.

A call copies its arguments (structured clone: ``workers.rpc.transfer``), yields to the event loop on the way
in and out (for the caller it is outside I/O, so other events may run meanwhile), runs the callee's method,
copies the result on the callee's side, and hands the callee's exception to the caller as a ``JsException``
(``RemoteError``). Durable Object stubs and Service Bindings both call through `rpc_call`; a stub the SDK
does not wrap (``ctx.exports``) calls with ``raw=True``: its arguments leave and its result arrives by
Pyodide's implicit rules (`tsumugi_dev.ffi`), as on Cloudflare (ADR-0042).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from workers.rpc import from_js, property_key, remote_error, to_js, transfer

from tsumugi_dev.ffi import JsException, from_js_implicit, to_js_implicit
from tsumugi_dev.jsdict import JsDict

__all__ = ["call_method", "rpc_call", "rpc_copy", "rpc_method", "rpc_receive"]

_RESERVED = frozenset(
    {
        "fetch",
        "connect",
        "alarm",
        "webSocketMessage",
        "webSocketClose",
        "webSocketError",
        "dup",
        "constructor",
    }
)
"""Names workerd never routes to an entrypoint or Durable Object method (``isReservedName``)."""
_HANDLERS = frozenset({"queue", "scheduled"})
"""Event handlers: callable over RPC on Cloudflare, refused here (stricter)."""


class _NotPlain(Exception):
    """A value the plain fast path of `rpc_copy` leaves to the full conversion."""


_PLAIN_SCALARS = frozenset({str, int, bool, type(None)})
_MAX_SAFE_INT = 2**53


def _copy_plain(value: Any) -> Any:
    kind: type[object] = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind in _PLAIN_SCALARS:
        return value
    if kind is float:
        return int(value) if value.is_integer() and abs(value) <= _MAX_SAFE_INT else value
    # Members that are plain scalars are taken as they are, without a call each (most of a report or dispatch).
    if kind is dict or kind is JsDict:
        items: dict[Any, Any] = value
        return JsDict({
            (k if type(k) is str else property_key(k)): v if type(v) in _PLAIN_SCALARS else _copy_plain(v)
            for k, v in items.items()
        })  # fmt: skip
    if kind is list:
        elements: list[Any] = value
        return [v if type(v) in _PLAIN_SCALARS else _copy_plain(v) for v in elements]
    raise _NotPlain


def rpc_copy(value: Any, where: Callable[[], str]) -> Any:
    """``transfer(value, where())``: the same copy, cheaper for plain JSON-like values.

    Every RPC argument, result and queue body is copied; for values made only of exact ``dict``/``JsDict``,
    ``list``, ``str``, ``int``, ``bool``, ``float`` and ``None`` the copy is built directly (no path strings),
    with the same result as `workers.rpc.transfer`. Anything else (functions, bytes, tuples, subclasses such
    as enums) takes the full conversion, so its errors and special cases stay exactly as they are.
    """
    try:
        return _copy_plain(value)
    except _NotPlain:
        return transfer(value, where())


def rpc_receive(value: Any) -> Any:
    """``from_js(value)`` (the receiving half of a copy), cheaper for plain JSON-like values."""
    try:
        return _copy_plain(value)
    except _NotPlain:
        return from_js(value)


async def call_method(fn: Callable[..., Any], *args: Any) -> Any:
    """Call a handler that may be sync or async."""
    result = fn(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


def rpc_method(target: object, name: str) -> Callable[..., Any]:
    """The method ``name`` of ``target`` if it may be called over RPC, else the error workerd throws.

    Every local target is a Python class, which workerd serves through a Proxy that answers any name and
    throws ``TypeError: Method <name> does not exist`` when the Python instance has no such method
    (src/pyodide/python-entrypoint-helper.ts); reserved names fail before that (worker-rpc.c++).
    Underscored names and the queue / scheduled handlers are refused too (stricter than Cloudflare).
    """
    if name in _RESERVED:
        raise JsException("TypeError", f"'{name}' is a reserved method and cannot be called over RPC.")
    method = getattr(target, name, None) if not name.startswith("_") and name not in _HANDLERS else None
    if method is None or not callable(method):
        raise JsException("TypeError", f"Method {name} does not exist")
    return method


def _raw_arguments(name: str, args: tuple[Any, ...]) -> list[Any]:
    # Left as Pyodide leaves them, then shaped by the callee's SDK (python_from_rpc of each argument).
    return [from_js(to_js(to_js_implicit(a, f"{name}() argument {i}"))) for i, a in enumerate(args)]


def rpc_call(
    name: str, deliver: Callable[[Callable[[Any], Awaitable[Any]]], Awaitable[Any]], *, raw: bool = False
) -> Callable[..., Awaitable[Any]]:
    """The caller's side of method ``name``: ``deliver(run)`` runs ``run(instance)`` on the callee's side.

    With ``raw`` the caller holds an unwrapped stub: arguments are not converted (a ``dict`` is a
    ``DataCloneError``) and the result arrives unconverted (objects as ``JsProxy``).
    """

    async def call(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError(f"{name}: RPC calls take positional arguments only (got {sorted(kwargs)})")
        if raw:
            sent = _raw_arguments(name, args)
        else:
            sent = [rpc_copy(arg, lambda i=i: f"{name}() argument {i}") for i, arg in enumerate(args)]
        await asyncio.sleep(0)
        try:
            result = await deliver(lambda instance: call_method(rpc_method(instance, name), *sent))
            # The callee converts its result: a result that cannot cross fails on its side.
            if raw:
                sent_back = from_js_implicit(to_js(result, f"{name}() result"))
            else:
                sent_back = rpc_copy(result, lambda: f"{name}() result")
        except Exception as exc:
            raise remote_error(exc) from None
        await asyncio.sleep(0)
        return sent_back

    return call
