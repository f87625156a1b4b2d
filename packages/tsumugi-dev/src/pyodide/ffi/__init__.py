# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""``pyodide.ffi`` as Pyodide 0.28 offers it, emulated on CPython (see `jsemu` for the model and sources).

As in Pyodide, every JS object's proxy is of one type (``JsProxy``); ``JsArray``, ``JsMap``, ``JsCallable``
and the other classes here answer ``isinstance`` by what the JS object can do, not by its Python class
(Pyodide's ``_pyodide._core_docs``). Checked against real Pyodide by tests/ffi (ADR-0103).
"""

import sys
from collections.abc import Callable
from typing import Any, Protocol

from jsemu.convert import ConversionError, to_js
from jsemu.core import HostObject, JsException, JsNull, jsnull
from jsemu.core import JsCallable as _Function
from jsemu.core import JsProxy as _Proxy
from jsemu.core import PyProxy as _PyProxy
from jsemu.objects import JsArray as _Array
from jsemu.objects import JsBuffer as _Buffer
from jsemu.objects import JsIterator as _Iterator
from jsemu.objects import JsMap as _Map
from jsemu.objects import JsTypedArray as _TypedArray
from jsemu.promise import JsPromise as _Promise

__all__ = [
    "IN_BROWSER",
    "ConversionError",
    "JsArray",
    "JsAsyncGenerator",
    "JsAsyncIterable",
    "JsAsyncIterator",
    "JsBuffer",
    "JsCallable",
    "JsCallableDoubleProxy",
    "JsDomElement",
    "JsDoubleProxy",
    "JsException",
    "JsFetchResponse",
    "JsGenerator",
    "JsIterable",
    "JsIterator",
    "JsMap",
    "JsMutableMap",
    "JsNull",
    "JsOnceCallable",
    "JsPromise",
    "JsProxy",
    "JsTypedArray",
    "JsWeakRef",
    "ToJsConverter",
    "create_once_callable",
    "create_proxy",
    "destroy_proxies",
    "jsnull",
    "register_js_module",
    "run_sync",
    "to_js",
    "unregister_js_module",
]

IN_BROWSER = False


def _is_proxy(obj: Any) -> bool:
    return isinstance(obj, _Proxy) or (isinstance(obj, JsException) and isinstance(obj.js_error, _Proxy))


def _is_callable(obj: Any) -> bool:
    return isinstance(obj, _Function) or (isinstance(obj, _PyProxy) and callable(obj._obj))


def _is_iterable(obj: Any) -> bool:
    return isinstance(obj, _Proxy) and hasattr(type(obj), "__iter__")


def _is_map(obj: Any) -> bool:
    return isinstance(obj, _Map) or (isinstance(obj, HostObject) and "__getitem__" in type(obj).__dict__)


class _Kind(type):
    """The metaclass of the classes below: ``isinstance`` asks the class's ``_test``."""

    _test: Callable[[Any], bool]

    def __instancecheck__(cls, obj: Any) -> bool:
        return cls._test(obj)

    def __subclasscheck__(cls, subclass: type) -> bool:
        return type.__subclasscheck__(cls, subclass)


def _kind(name: str, test: Callable[[Any], bool], doc: str) -> Any:
    return _Kind(name, (), {"_test": staticmethod(test), "__doc__": doc, "__module__": __name__})


JsProxy = _kind("JsProxy", _is_proxy, "A proxy of a JS object.")
JsArray = _kind("JsArray", lambda o: isinstance(o, _Array | _TypedArray), "An array or typed array.")
JsTypedArray = _kind("JsTypedArray", lambda o: isinstance(o, _TypedArray), "A typed array.")
JsBuffer = _kind("JsBuffer", lambda o: isinstance(o, _Buffer), "An ArrayBuffer or a view of one.")
JsMap = _kind("JsMap", _is_map, "An object with Map's ``get``/``has``: subscriptable.")
JsMutableMap = _kind("JsMutableMap", lambda o: isinstance(o, _Map), "A Map with ``set``/``delete``.")
JsIterable = _kind("JsIterable", _is_iterable, "An object with ``[Symbol.iterator]``.")
JsIterator = _kind("JsIterator", lambda o: isinstance(o, _Iterator), "An iterator (``next()``).")
JsGenerator = _kind("JsGenerator", lambda o: False, "A generator (none in the local runtime).")
JsAsyncIterable = _kind("JsAsyncIterable", lambda o: False, "An async iterable (none in the local runtime).")
JsAsyncIterator = _kind("JsAsyncIterator", lambda o: False, "An async iterator (none in the local runtime).")
JsAsyncGenerator = _kind(
    "JsAsyncGenerator", lambda o: False, "An async generator (none in the local runtime)."
)
JsCallable = _kind("JsCallable", _is_callable, "A function.")
JsPromise = _kind("JsPromise", lambda o: isinstance(o, _Promise), "A promise.")
JsDoubleProxy = _kind("JsDoubleProxy", lambda o: isinstance(o, _PyProxy), "A PyProxy of a Python object.")
JsCallableDoubleProxy = _kind(
    "JsCallableDoubleProxy",
    lambda o: isinstance(o, _PyProxy) and callable(o._obj),
    "A PyProxy of a callable.",
)
# Typing aids in Pyodide that every proxy (every callable one) passes.
JsOnceCallable = _kind("JsOnceCallable", _is_callable, "A callable (typing aid).")
JsDomElement = _kind("JsDomElement", _is_proxy, "Any proxy (typing aid).")
JsFetchResponse = _kind("JsFetchResponse", _is_proxy, "Any proxy (typing aid).")
JsWeakRef = _kind("JsWeakRef", _is_proxy, "Any proxy (typing aid).")


class ToJsConverter(Protocol):
    """The type of ``to_js``'s ``default_converter``."""

    def __call__(
        self, obj: Any, convert: Callable[[Any], Any], cache_conversion: Callable[[Any, Any], None]
    ) -> Any:
        """Convert ``obj``."""
        ...


def create_proxy(obj: Any, *, capture_this: bool = False, roundtrip: bool = True) -> Any:
    """A PyProxy of ``obj`` that lives until ``destroy()`` (what JS may keep); with ``roundtrip`` it reads back
    into Python as this proxy, else as ``obj``."""
    return _PyProxy(obj, roundtrip=roundtrip)


def create_once_callable(obj: Any, *, _may_syncify: bool = False) -> Any:
    """A PyProxy of a callable that destroys itself after its first call."""
    return _PyProxy(obj, once=True)


def destroy_proxies(pyproxies: Any) -> None:
    """Destroy every proxy in ``pyproxies`` (a JS array of PyProxies)."""
    for proxy in list(pyproxies._items if isinstance(pyproxies, _Array) else pyproxies):
        if isinstance(proxy, _PyProxy) and proxy._destroyed is None:
            proxy.destroy()


def can_run_sync() -> bool:
    """Whether `run_sync` may block here: never, the local runtime has no JSPI stack switching."""
    return False


def run_sync(awaitable: Any) -> Any:
    """Block on ``awaitable``: needs JSPI's stack switching, which the local runtime does not have."""
    raise RuntimeError("No suspender")


_REGISTERED: dict[str, Any] = {}


def register_js_module(name: str, jsproxy: Any) -> None:
    """Make ``import name`` give ``jsproxy`` (a JS object standing for a module)."""
    _REGISTERED[name] = jsproxy
    sys.modules[name] = jsproxy


def unregister_js_module(name: str) -> None:
    """Undo `register_js_module`."""
    if name not in _REGISTERED:
        raise ValueError(f"Cannot unregister {name!r}: no Javascript module with that name is registered")
    del _REGISTERED[name]
    sys.modules.pop(name, None)
