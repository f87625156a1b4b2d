"""Calls made from the JS side of the local runtime, as the recorder's JavaScript makes them in workerd.

``get(obj, "name")`` is ``obj.name``; ``call(obj, "name", *args)`` is ``obj.name(...args)`` with JS values
(no Pyodide conversion); ``settle(value)`` is ``await value``. Values are built with `js_value`, which turns
Python literals into JS ones (``None`` is ``undefined``; use ``jsnull`` for ``null``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jsemu.core import MISSING, UNDEFINED, JsBigIntValue, JsCallable, JsException, JsProxy, jsnull
from jsemu.objects import ArrayBuffer, JsArray, JsDate, JsMap, JsObject, JsSet, Uint8Array
from jsemu.promise import JsPromise

from tests.shapes.js_describe import describe

__all__ = [
    "UNDEFINED",
    "JsBigIntValue",
    "array_buffer",
    "call",
    "date",
    "get",
    "js_map",
    "js_set",
    "js_value",
    "jsnull",
    "outcome",
    "outcome_async",
    "safe",
    "settle",
    "uint8",
]


def get(obj: Any, name: str) -> Any:
    """``obj[name]`` on the JS side (``undefined`` when absent)."""
    if not isinstance(obj, JsProxy):
        raise TypeError(f"not a JS object: {obj!r}")
    value = obj._js_get(name)  # pyright: ignore[reportPrivateUsage]
    return UNDEFINED if value is MISSING else value


def call(obj: Any, name: str, *args: Any) -> Any:
    """``obj[name](...args)`` with JS values; a missing method throws JS's TypeError."""
    fn = get(obj, name)
    if isinstance(fn, JsCallable) or (isinstance(fn, JsProxy) and hasattr(fn, "js_call")):
        return fn.js_call(*args)  # pyright: ignore[reportAttributeAccessIssue]
    from jsemu.core import js_error

    raise js_error("TypeError", f"obj.{name} is not a function")


async def settle(value: Any) -> Any:
    """``await value`` on the JS side: the JS value it resolves to; a rejection raises its JsException."""
    if not isinstance(value, JsPromise):
        return value
    await value
    return value._value  # pyright: ignore[reportPrivateUsage]


def js_value(value: Any) -> Any:
    """A JS value for a Python literal: dict -> object, list -> Array, None -> undefined."""
    if value is None:
        return UNDEFINED
    if isinstance(value, dict):
        return JsObject({str(k): js_value(v) for k, v in value.items()})  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if isinstance(value, list):
        return JsArray([js_value(v) for v in value])  # pyright: ignore[reportUnknownVariableType]
    return value


def uint8(*data: int) -> Uint8Array:
    return Uint8Array.copy_of(bytes(data))


def array_buffer(*data: int) -> ArrayBuffer:
    return ArrayBuffer(bytearray(data))


def date(ms: float) -> JsDate:
    return JsDate(ms)


def js_map(entries: dict[Any, Any]) -> JsMap:
    return JsMap(dict(entries))


def js_set(*values: Any) -> JsSet:
    return JsSet(values)


def python_error(error: Exception) -> dict[str, str]:
    """A Python exception that escaped the JS side: JS code could never catch it, so it is a difference."""
    return {"raised in Python": f"{type(error).__name__}: {error}"}


def safe(fn: Callable[[], Any]) -> Any:
    """``fn()``, or, when the runtime throws where workerd answered, what it threw (so it is compared too)."""
    try:
        return fn()
    except JsException as error:
        return {"the runtime threw": describe(error.js_error)}
    except Exception as error:
        return python_error(error)


def outcome(fn: Callable[[], Any], varies: tuple[str, ...] = ()) -> dict[str, Any]:
    """The recorder's ``outcomeSync``: ``{"returns": ...}`` or ``{"throws": ...}``."""
    try:
        return {"returns": describe(fn(), varies)}
    except JsException as error:
        return {"throws": describe(error.js_error, varies)}
    except Exception as error:
        return python_error(error)


async def outcome_async(fn: Callable[[], Any], varies: tuple[str, ...] = ()) -> dict[str, Any]:
    """The recorder's ``outcome``: the result awaited first."""
    try:
        return {"returns": describe(await settle(fn()), varies)}
    except JsException as error:
        return {"throws": describe(error.js_error, varies)}
    except Exception as error:
        return python_error(error)
