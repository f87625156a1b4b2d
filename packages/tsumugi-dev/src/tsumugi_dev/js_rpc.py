# pyright: reportPrivateUsage=false
# (The runtime's half of the JS emulation reads jsemu's object internals; ADR-0097.)
"""How workerd calls into a Python Worker, and the JS stubs that call across: Service Bindings, DO stubs.

workerd serves each Python entrypoint or Durable Object class through a JS Proxy (src/pyodide/
python-entrypoint-helper.ts and internal/introspection.py): ``fetch`` and RPC methods go through
``wrapper_func``, which converts every argument with the SDK's ``python_from_rpc`` and the result with
``python_to_rpc`` (``fetch`` called relaxed: extra arguments dropped); ``alarm`` and the WebSocket handlers get
the raw JS arguments, relaxed; a missing method is ``TypeError: Method <name> does not exist``. Class
handlers ``queue`` and ``scheduled`` are RPC-shaped there: ``(batch, None, None)``, called strictly.
A stub answers any property with a function that clones its arguments, yields, runs the callee, clones the
result back (`structured_clone`), and rejects with the callee's error (`remote_js_error`).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, ClassVar, cast

import workers as _sdk
from jsemu.core import (
    MISSING,
    UNDEFINED,
    JsCallable,
    JsException,
    js_error,
    jsnull,
    to_js_implicit,
    to_python,
)
from jsemu.fetch_api import Request as JsRequest
from jsemu.fetch_api import Response as JsResponse
from jsemu.fetch_api import _request_new
from jsemu.objects import JsObject
from jsemu.promise import JsPromise
from pyodide.code import relaxed_call

from tsumugi_dev.js_values import _SCALARS, RpcReference, remote_js_error, structured_clone

python_from_rpc: Callable[[Any], Any] = cast(
    Any, _sdk
).python_from_rpc  # the SDK's own conversions (unannotated)
python_to_rpc: Callable[[Any], Any] = cast(Any, _sdk).python_to_rpc

__all__ = ["RESERVED_NAMES", "JsExecutionContext", "JsFetcher", "invoke", "invoke_fetch", "rpc_function"]

RESERVED_NAMES = frozenset(
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


def _method(instance: Any, name: str) -> Callable[..., Any]:
    method = getattr(instance, name, None)
    if method is None or not callable(method):
        raise js_error("TypeError", f"Method {name} does not exist")
    return method


async def invoke(instance: Any, name: str, js_args: list[Any], *, relaxed: bool = False) -> Any:
    """Run ``instance.name`` as workerd's ``wrapper_func`` does; answers the result as a JS value."""
    method = _method(instance, name)
    py_args: list[Any] = [python_from_rpc(to_python(arg)) for arg in js_args]
    result = relaxed_call(method, *py_args) if relaxed else method(*py_args)
    if inspect.isawaitable(result):
        result = await result
    converted: Any = python_to_rpc(result)
    return to_js_implicit(converted)


async def invoke_raw(instance: Any, name: str, js_args: list[Any]) -> Any:
    """Run a handler workerd calls with raw JS arguments, relaxed (``alarm``)."""
    method = _method(instance, name)
    result = relaxed_call(method, *[to_python(arg) for arg in js_args])
    if inspect.isawaitable(result):
        result = await result
    return result


async def invoke_fetch(instance: Any, request: JsRequest) -> JsResponse:
    """Run ``instance.fetch(request)``; the answer must be a Response."""
    if getattr(instance, "fetch", None) is None:
        raise js_error("Error", "Handler does not export a fetch() function.")  # workerd: a plain Error
    answer = await invoke(instance, "fetch", [request], relaxed=True)
    if not isinstance(answer, JsResponse):
        raise js_error("TypeError", "Incorrect type for Promise: the Promise did not resolve to 'Response'.")
    return answer


async def _fetch_on(instance: Any, request: JsRequest) -> JsResponse:
    return await invoke_fetch(instance, request)


def check_rpc_name(name: str) -> None:
    """Refuse what workerd refuses before a call reaches the callee (and underscored names, handlers)."""
    if name in RESERVED_NAMES:
        raise js_error("TypeError", f"'{name}' is a reserved method and cannot be called over RPC.")
    if name.startswith("_") or name in _HANDLERS:
        raise js_error("TypeError", f"Method {name} does not exist")


Deliver = Callable[[Callable[[Any], Awaitable[Any]]], Awaitable[Any]]
"""``deliver(run)`` runs ``run(instance)`` as one event of the callee."""


Call = Callable[..., Awaitable[Any]]
WrapRpc = Callable[[str, Call], Call]
"""Decorates the Python-level call of method ``name`` (fault injection, the subrequest charge)."""
WrapFetch = Callable[[Call], Call]


def rpc_function(name: str, deliver: Deliver, wrap: WrapRpc) -> JsCallable:
    """The JS function a stub answers for property ``name``: an RPC call through ``deliver``."""

    async def call(*js_args: Any) -> Any:
        check_rpc_name(name)
        sent = [
            arg if type(arg) in _SCALARS else structured_clone(arg, f"{name}() argument {i}")  # text: no call
            for i, arg in enumerate(js_args)
        ]
        await asyncio.sleep(0)
        try:
            result = await deliver(lambda instance: invoke(instance, name, sent))
            answer = result if type(result) in _SCALARS else structured_clone(result, f"{name}() result")
        except Exception as exc:
            raise remote_js_error(exc) from None
        await asyncio.sleep(0)
        return answer

    # Wrapped at each call, not once: a fault armed after the method was first looked up still applies.
    return JsCallable(lambda *args: JsPromise.from_awaitable(wrap(name, call)(*args)), name=name)


class RpcStub(RpcReference):
    """A stub: any property is an RPC method; ``fetch`` sends an HTTP request."""

    __slots__ = ("_deliver", "_methods", "_wrap", "_wrap_fetch")
    _deliver: Any
    _methods: Any
    _wrap: Any
    _wrap_fetch: Any

    def __init__(self, deliver: Deliver, wrap: WrapRpc, wrap_fetch: WrapFetch) -> None:
        object.__setattr__(self, "_deliver", deliver)
        object.__setattr__(self, "_wrap", wrap)
        object.__setattr__(self, "_wrap_fetch", wrap_fetch)
        object.__setattr__(self, "_methods", {})

    def _js_get(self, name: str) -> Any:
        # A name already answered with an RPC method is not a member of the class (looked up first, below):
        # found without that lookup, which fails at a cost for every RPC method name.
        found = self._methods.get(name)
        if found is not None:
            return found
        own = super()._js_get(name)
        if own is not MISSING:
            return own
        if name == "then":
            return MISSING  # a stub is not a thenable
        found = self._methods[name] = rpc_function(name, self._deliver, self._wrap)
        return found

    def js_fetch(self, resource: Any, init: Any = UNDEFINED) -> Any:
        request = _request_new(resource, init)
        deliver, wrap = self._deliver, self._wrap_fetch

        async def send(request: JsRequest) -> Any:
            await asyncio.sleep(0)
            try:
                response = await deliver(partial(_fetch_on, request=request))
            except Exception as exc:
                raise remote_js_error(exc) from None
            return response

        return JsPromise.from_awaitable(wrap(send)(request))


class JsFetcher(RpcStub):
    """A Service Binding (``Fetcher``)."""

    __slots__ = ()
    js_class: ClassVar[str] = "Fetcher"


class JsExecutionContext(RpcReference):
    """``ctx`` of an entrypoint: ``waitUntil``, ``passThroughOnException``; own ``tracing``, ``cache``,
    ``props`` and ``exports`` (workerd sets them on the instance; tests/shapes records the shape)."""

    __slots__ = ("_own", "_spawn")
    _own: Any
    _spawn: Any
    js_class: ClassVar[str] = "ExecutionContext"

    def __init__(self, spawn: Callable[[Awaitable[Any]], Any], exports: JsObject) -> None:
        object.__setattr__(self, "_spawn", spawn)
        own = {"tracing": UNDEFINED, "cache": UNDEFINED, "props": JsObject({}), "exports": exports}
        object.__setattr__(self, "_own", own)

    def _js_get(self, name: str) -> Any:
        own = self._own
        return own[name] if name in own else super()._js_get(name)

    def _js_keys(self) -> list[str]:
        return list(self._own)

    def js_waitUntil(self, promise: Any) -> Any:
        from tsumugi_dev.js_values import await_js

        async def wait() -> None:
            with contextlib.suppress(JsException):  # a rejected waitUntil promise is logged, not thrown
                await await_js(promise)

        self._spawn(wait())
        return UNDEFINED

    def js_passThroughOnException(self) -> Any:
        return UNDEFINED


_ = jsnull
