"""One JSON-able description of whatever an FFI case produced, the same in real Pyodide and over the emulation.

Runs unchanged in both worlds (ADR-0103). It reads a value only through what it describes: Python types,
``isinstance`` against ``pyodide.ffi``'s classes, ``JsProxy.typeof``, ``constructor.name``, ``str()`` and
``JSON.stringify``. Each of those probes that could itself raise is recorded as what it raised, so one failing
probe shows up in place instead of hiding the rest of the description.

Scalars are short strings (``"int 9007199254740993"``, ``"float -0.0"``, ``"str 'a\\U0001f600'"``, ``"None"``,
``"JsNull"``); containers are ``{"list": [...]}``, ``{"dict": [[key, value], ...]}``; a JS object is
``{"JsProxy": {"is": [...], "typeof": ..., "ctor": ..., "str": ..., "json": ...}}``; an exception is
``{"raised": type, "str": text}`` plus ``name`` and ``message`` for a JS error.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable
from typing import Any

import js
import pyodide.ffi as ffi

# The classes `describe` tests a JsProxy against, in this order. Pyodide 0.28 also exports JsFetchResponse,
# JsDomElement, JsWeakRef and JsOnceCallable, but those are typing aids that every JsProxy (or every callable
# one) passes, so they say nothing about the value.
PROBED_CLASSES = (
    "JsProxy",
    "JsArray",
    "JsTypedArray",
    "JsBuffer",
    "JsMap",
    "JsMutableMap",
    "JsIterable",
    "JsIterator",
    "JsGenerator",
    "JsCallable",
    "JsPromise",
    "JsException",
    "JsDoubleProxy",
)

_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


class Outcome:
    """A record already described (what `attempt` returns), kept as it is when it is described again."""

    def __init__(self, record: Any) -> None:
        self.record = record


def attempt(read: Callable[[], Any]) -> Outcome:
    """The description of `read()`, or of what it raised."""
    try:
        value = read()
    except Exception as error:  # the outcome under test may be any exception
        return Outcome(raised(error))
    return Outcome(describe(value))


def raised(error: BaseException) -> dict[str, Any]:
    """What an exception says about itself: its Python type and text, and a JS error's name and message."""
    out: dict[str, Any] = {"raised": type(error).__name__, "str": _text(error)}
    if isinstance(error, ffi.JsException):
        out["name"] = _probe(lambda: error.name)
        out["message"] = _probe(lambda: error.message)
    return out


def describe(value: Any) -> Any:  # noqa: C901 - one branch per kind of value is the point
    """A JSON-able record of `value`: its Python type and, per kind, what distinguishes it."""
    kind = type(value).__qualname__  # what repr shows; __name__ differs on the emulation (NOT_EMULATED)
    if isinstance(value, Outcome):
        return value.record
    if value is None or isinstance(value, ffi.JsNull):
        return kind if value is not None else "None"
    if isinstance(value, bool | int):
        return f"{kind} {value}"  # an int as text: a JSON number past 2**53 would lose digits
    if isinstance(value, float):
        return f"float {value!r}"  # nan, inf and -0.0 stay distinct
    if isinstance(value, str):
        return f"str {value!a}"  # lone surrogates and non-BMP characters spelled out
    if isinstance(value, bytes | bytearray):
        return f"{kind} {value.hex()}"
    if isinstance(value, memoryview):
        return f"memoryview {value.format} {value.tobytes().hex()}"
    if isinstance(value, list | tuple):
        return {kind: [describe(item) for item in value]}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return {kind: [[describe(k), describe(v)] for k, v in value.items()]}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, set | frozenset):
        items = [describe(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
        return {kind: sorted(items, key=lambda item: json.dumps(item, sort_keys=True))}
    if isinstance(value, datetime.datetime):
        return f"datetime {value.isoformat()}"
    if isinstance(value, ffi.JsProxy):
        return {kind: _describe_proxy(value)}
    if isinstance(value, BaseException):
        return {f"exception {kind}": [describe(arg) for arg in value.args]}
    return f"object {kind} callable={callable(value)} awaitable={hasattr(value, '__await__')}"


def _describe_proxy(value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        # A class missing from pyodide.ffi counts as not matching here (`ffi_public_names` names it), so one
        # missing export fails one case instead of every description of a proxy.
        "is": _probe(lambda: [name for name in PROBED_CLASSES if isinstance(value, getattr(ffi, name, ()))]),
        "typeof": _probe(lambda: value.typeof),
        "ctor": _probe(lambda: value.constructor.name),
        "str": _probe(lambda: _text(value)),
        "json": _probe(lambda: js.JSON.stringify(value)),
    }
    if out["ctor"] in ("Map", "Set", "LiteralMap"):
        out["size"] = _probe(lambda: value.size)
    return out


def _probe(read: Callable[[], Any]) -> Any:
    """`read()` when it gives None, a bool, int, str or list of str; else its description or what it raised."""
    try:
        value = read()
    except Exception as error:  # a probe may fail on a destroyed or exotic proxy; that is part of the record
        return raised(error)
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):  # pyright: ignore[reportUnknownVariableType]
        return value  # pyright: ignore[reportUnknownVariableType]
    return describe(value)


def _text(value: object) -> str:
    """`str(value)` without memory addresses (a Python object's repr seen through a PyProxy carries one)."""
    return _ADDRESS.sub(" at 0x…", str(value))
