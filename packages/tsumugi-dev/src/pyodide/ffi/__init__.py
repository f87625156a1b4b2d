# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""``pyodide.ffi`` as Pyodide 0.28 offers it, emulated on CPython (see `jsemu` for the model and sources)."""

from typing import Any

from jsemu.convert import ConversionError, to_js
from jsemu.core import JsCallable, JsException, JsNull, JsProxy, jsnull
from jsemu.core import PyProxy as JsDoubleProxy
from jsemu.objects import JsArray, JsBuffer, JsIterator, JsMap, JsTypedArray
from jsemu.promise import JsPromise

__all__ = [
    "IN_BROWSER",
    "ConversionError",
    "JsArray",
    "JsBuffer",
    "JsCallable",
    "JsDoubleProxy",
    "JsException",
    "JsIterator",
    "JsMap",
    "JsNull",
    "JsPromise",
    "JsProxy",
    "JsTypedArray",
    "create_once_callable",
    "create_proxy",
    "destroy_proxies",
    "jsnull",
    "run_sync",
    "to_js",
]

IN_BROWSER = False


def create_proxy(obj: Any, *, capture_this: bool = False, roundtrip: bool = True) -> JsDoubleProxy:
    """A PyProxy of ``obj`` that lives until ``destroy()`` (what JS may keep)."""
    return JsDoubleProxy(obj)


def create_once_callable(obj: Any, *, _may_syncify: bool = False) -> JsDoubleProxy:
    """A PyProxy of a callable that destroys itself after its first call."""
    return JsDoubleProxy(obj, once=True)


def destroy_proxies(pyproxies: Any) -> None:
    """Destroy every proxy in ``pyproxies`` (a JS array of PyProxies)."""
    for proxy in list(pyproxies._items if isinstance(pyproxies, JsArray) else pyproxies):
        if isinstance(proxy, JsDoubleProxy) and proxy._destroyed is None:
            proxy.destroy()


def run_sync(awaitable: Any) -> Any:
    """Block on ``awaitable``: needs JSPI's stack switching, which the local runtime does not have."""
    raise RuntimeError("No suspender")
