# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""``JSON.stringify`` / ``JSON.parse`` over JS values, with JavaScript's number text.

Used by the emulated ``JSON`` global and by the runtime where the platform serialises with JSON (queue
bodies, ``compatibility flag queuesJsonMessages``). ECMAScript: Number::toString, SerializeJSONProperty.
"""

from __future__ import annotations

import json
import math
from typing import Any

from jsemu.core import UNDEFINED, JsBigIntValue, JsCallable, JsProxy, PyProxy, js_error, jsnull

__all__ = ["number_text", "parse", "stringify"]


def number_text(value: float | int) -> str:
    """``String(number)`` as JavaScript writes it (``1`` not ``1.0``, ``1e+21``, ``1e-7``, ``NaN``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = float(value) if abs(value) > 2**53 else value
        if isinstance(value, int):
            return str(value)
    number = float(value)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "0"
    if number.is_integer() and abs(number) < 1e21:
        return str(int(number))
    text = repr(number)
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    exp = int(exponent)
    if -7 < exp < 21:
        return format(number, "f").rstrip("0").rstrip(".")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return f"{mantissa}e{'+' if exp > 0 else '-'}{abs(exp)}"


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def stringify(value: Any) -> Any:
    """``JSON.stringify(value)``: a string, or ``undefined`` for a value with no JSON text."""
    parts: list[str] = []
    if not _write(value, parts, set()):
        return UNDEFINED
    return "".join(parts)


def _write(value: Any, out: list[str], seen: set[int]) -> bool:  # noqa: C901 - one case a kind
    if value is jsnull:
        out.append("null")
        return True
    if value is UNDEFINED or isinstance(value, JsCallable) or (isinstance(value, PyProxy) and callable(value._obj)):
        return False
    kind: Any = type(value)
    if kind is bool:
        out.append("true" if value else "false")
        return True
    if kind is JsBigIntValue:
        raise js_error("TypeError", "Do not know how to serialize a BigInt")
    if kind is int or kind is float:
        number: Any = value
        out.append(number_text(number) if math.isfinite(number) else "null")
        return True
    if kind is str:
        out.append(_quote(str(value)))
        return True
    if not isinstance(value, JsProxy):
        out.append("{}")
        return True
    to_json = value._js_get("toJSON")
    if isinstance(to_json, JsCallable):
        return _write(to_json.js_call(), out, seen)
    if id(value) in seen:
        raise js_error("TypeError", "Converting circular structure to JSON")
    seen.add(id(value))
    try:
        from jsemu.objects import JsArray

        if isinstance(value, JsArray):
            out.append("[")
            for i, item in enumerate(value._items):
                if i:
                    out.append(",")
                if not _write(item, out, seen):
                    out.append("null")
            out.append("]")
            return True
        out.append("{")
        first = True
        for key in value._js_keys():
            mark = len(out)
            out.append(("" if first else ",") + _quote(key) + ":")
            if _write(value._js_get(key), out, seen):
                first = False
            else:
                del out[mark:]
        out.append("}")
        return True
    finally:
        seen.discard(id(value))


def parse(text: str) -> Any:
    """``JSON.parse(text)`` into JS values; bad text throws ``SyntaxError``."""
    from jsemu.objects import JsArray, JsObject

    def number(token: str) -> Any:
        result = float(token)
        return int(result) if result.is_integer() and abs(result) <= 2**53 - 1 else result

    def build(value: Any) -> Any:
        if value is None:
            return jsnull
        if isinstance(value, dict):
            return JsObject({key: build(item) for key, item in value.items()})
        if isinstance(value, list):
            return JsArray([build(item) for item in value])
        return value

    try:
        raw = json.loads(text, parse_int=number, parse_float=number, parse_constant=_refuse_constant)
    except (ValueError, TypeError) as error:
        raise js_error("SyntaxError", f"Unexpected token in JSON: {error}") from None
    return build(raw)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")
