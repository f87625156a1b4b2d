"""The registry of FFI cases (ADR-0103): each case is a function of no arguments, sync or async, whose result
(or what it raises) `ffi_describe.describe` turns into the record compared between real Pyodide and the
emulation. A case's name is its function's name; the case modules register theirs when imported."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import js
from ffi_describe import Outcome
from pyodide.ffi import JsException

Case = Callable[[], Any]
CaseT = TypeVar("CaseT", bound=Case)

CASES: dict[str, Case] = {}


def case(function: CaseT) -> CaseT:
    """Register `function` as the case named after it."""
    name = function.__name__
    if name in CASES:
        raise ValueError(f"FFI case {name!r} is defined twice")
    CASES[name] = function
    return function


def js_string(value: Any) -> Any:
    """What JS's ToString makes of `value`, taken inside the one call that receives it.

    ``["", ""].join(separator)`` is the separator converted to a string, so a Python object that crosses as a
    borrowed PyProxy is still alive when it is converted (it is destroyed when the call returns).
    """
    return js.Array.of("", "").join(value)


def js_error_name(read: Callable[[], Any]) -> Any:
    """`read()`, or the JS error it raised reduced to its class and ``name``.

    For errors that V8 itself throws (JSON syntax, BigInt parsing, invalid lengths), whose messages are the
    engine's own wording and not part of the FFI, so the emulation is not asked to copy them.
    """
    try:
        return read()
    except JsException as error:
        return Outcome({"raised": type(error).__name__, "name": error.name})
