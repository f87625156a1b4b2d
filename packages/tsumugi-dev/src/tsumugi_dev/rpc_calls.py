"""RPC between Workers and Durable Objects: the copy of every value that crosses, and the call itself.

A call copies its arguments (structured clone: ``workers.rpc.transfer``), yields to the event loop on the way
in and out (for the caller it is outside I/O, so other events may run meanwhile), runs the callee's method,
copies the result on the callee's side, and hands the callee's exception to the caller as a ``RemoteError``.
Durable Object stubs and Service Bindings both call through `rpc_call`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, cast

from workers.rpc import property_key, python_from_rpc, remote_error, transfer

from tsumugi_dev.jsdict import JsDict

__all__ = ["call_method", "rpc_call", "rpc_copy", "rpc_method", "rpc_receive"]

_NOT_RPC = frozenset(
    {"fetch", "alarm", "queue", "scheduled", "webSocketMessage", "webSocketClose", "webSocketError"}
)


class _NotPlain(Exception):
    """A value the plain fast path of `rpc_copy` leaves to the full conversion."""


_PLAIN_SCALARS = frozenset({str, int, bool, type(None)})
_MAX_SAFE_INT = 2**53


def _copy_plain(value: Any) -> Any:
    kind = type(cast(object, value))
    if kind in _PLAIN_SCALARS:
        return value
    if kind is float:
        return int(value) if value.is_integer() and abs(value) <= _MAX_SAFE_INT else value
    if kind is dict or kind is JsDict:
        items: dict[Any, Any] = value
        return JsDict({(k if type(k) is str else property_key(k)): _copy_plain(v) for k, v in items.items()})
    if kind is list:
        elements: list[Any] = value
        return [_copy_plain(v) for v in elements]
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
    """``python_from_rpc(value)`` (the receiving half of a copy), cheaper for plain JSON-like values."""
    try:
        return _copy_plain(value)
    except _NotPlain:
        return python_from_rpc(value)


async def call_method(fn: Callable[..., Any], *args: Any) -> Any:
    """Call a handler that may be sync or async."""
    result = fn(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


def rpc_method(target: object, name: str) -> Callable[..., Any]:
    """The method ``name`` of ``target`` if it may be called over RPC, else Cloudflare's ``TypeError``."""
    method = getattr(target, name, None) if not name.startswith("_") and name not in _NOT_RPC else None
    if method is None or not callable(method):
        raise TypeError(f'The RPC receiver does not implement the method "{name}".')
    return method



def rpc_call(
    name: str, deliver: Callable[[Callable[[Any], Awaitable[Any]]], Awaitable[Any]]
) -> Callable[..., Awaitable[Any]]:
    """The caller's side of method ``name``: ``deliver(run)`` runs ``run(instance)`` on the callee's side."""

    async def call(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError(f"{name}: RPC calls take positional arguments only (got {sorted(kwargs)})")
        sent = [rpc_copy(arg, lambda i=i: f"{name}() argument {i}") for i, arg in enumerate(args)]
        await asyncio.sleep(0)
        try:
            result = await deliver(lambda instance: call_method(rpc_method(instance, name), *sent))
            # The callee converts its result: a result that cannot cross fails on its side.
            sent_back = rpc_copy(result, lambda: f"{name}() result")
        except Exception as exc:
            raise remote_error(exc) from None
        await asyncio.sleep(0)
        return sent_back

    return call
