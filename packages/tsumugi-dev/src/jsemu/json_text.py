# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""``JSON.stringify`` / ``JSON.parse`` over JS values, with JavaScript's number text.

Used by the emulated ``JSON`` global and by the runtime where the platform serialises with JSON (queue
bodies, ``compatibility flag queuesJsonMessages``). ECMAScript: Number::toString, SerializeJSONProperty.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from jsemu.core import UNDEFINED, JsBigIntValue, JsCallable, JsProxy, PyProxy, js_error, jsnull
from jsemu.objects import ordered_keys

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


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _quote(text: str) -> str:
    """A JSON string as ``JSON.stringify`` writes it: lone surrogates escaped (well-formed JSON.stringify)."""
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))


def stringify(value: Any, replacer: Any = UNDEFINED, space: Any = UNDEFINED) -> Any:
    """``JSON.stringify(value, replacer, space)``: a string, or ``undefined`` for a value with no JSON text.

    A function ``replacer`` is called as ``(key, value)`` for every property and its answer written; ``space``
    indents (a number of spaces, at most 10, or a string, its first 10 characters)."""
    if replacer is UNDEFINED and space is UNDEFINED:
        plain = _plain(value, 0)
        if plain is not _NOT_PLAIN:  # the same text, written by Python's encoder in one call
            text = json.dumps(plain, ensure_ascii=False, separators=(",", ":"))
            return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    parts: list[str] = []
    if not _write(value, parts, set()):
        return UNDEFINED
    text = "".join(parts)
    if replacer is UNDEFINED and space is UNDEFINED:
        return text
    return _restringify(value, replacer, space)


_NOT_PLAIN = object()
_MOST_PLAIN_DEPTH = 64


def _plain(value: Any, depth: int) -> Any:  # noqa: C901 - one case a kind
    """``value`` as Python data `json.dumps` writes exactly as `_write` would, or `_NOT_PLAIN`.

    Plain: plain objects (no ``toJSON``, no undefined value) and arrays (no undefined item) of strings,
    booleans, null and numbers JSON writes as integers (integral and below 1e21 in magnitude); anything else
    (another number, a Map, a proxy, a nesting deeper than 64, which also stops a cycle) takes the general
    path. Lone surrogates are escaped in the whole text afterwards, as `_quote` does per string.
    """
    from jsemu.objects import JsArray, JsObject

    kind: Any = type(value)
    if kind is str or kind is bool or kind is int:
        return value
    if value is jsnull:
        return None
    if kind is float:
        number: float = value
        if number.is_integer() and abs(number) < 1e21:
            return int(number)
        return _NOT_PLAIN
    if depth >= _MOST_PLAIN_DEPTH:
        return _NOT_PLAIN
    if kind is JsObject:
        props: dict[str, Any] = value._props
        if "toJSON" in props:
            return _NOT_PLAIN
        result: dict[str, Any] = {}
        for key in ordered_keys(props):
            item = props[key]
            kind = type(item)
            if kind is str or kind is bool or kind is int:
                result[key] = item
                continue
            item = _plain(item, depth + 1)
            if item is _NOT_PLAIN or item is UNDEFINED:
                return _NOT_PLAIN
            result[key] = item
        return result
    if kind is JsArray:
        items: list[Any] = []
        for item in value._items:
            kind = type(item)
            if kind is str or kind is bool or kind is int:
                items.append(item)
                continue
            item = _plain(item, depth + 1)
            if item is _NOT_PLAIN or item is UNDEFINED:
                return _NOT_PLAIN
            items.append(item)
        return items
    return _NOT_PLAIN


def _restringify(value: Any, replacer: Any, space: Any) -> Any:
    """The slow path for a replacer or indentation: the same JSON, rebuilt through Python's encoder."""
    from jsemu.core import JsCallable as _Function
    from jsemu.objects import JsArray, JsObject

    def walk(holder_key: str, item: Any) -> Any:
        if isinstance(replacer, _Function | PyProxy):
            item = replacer.js_call(holder_key, item)
        if isinstance(item, JsProxy) and not isinstance(item, JsArray | JsObject):
            parts: list[str] = []
            return json.loads("".join(parts)) if _write(item, parts, set()) else None
        if isinstance(item, JsArray):
            return [walk(str(i), v) for i, v in enumerate(item._items)]
        if isinstance(item, JsObject):
            return {k: walk(k, item._props[k]) for k in item._js_keys() if item._props[k] is not UNDEFINED}
        parts = []
        return json.loads("".join(parts)) if _write(item, parts, set()) else None

    indent: Any = None
    if isinstance(space, int | float) and not isinstance(space, bool) and space >= 1:
        indent = min(int(space), 10)
    elif isinstance(space, str) and space:
        indent = space[:10]
    return json.dumps(
        walk("", value), indent=indent, ensure_ascii=False, separators=(",", ": " if indent else ":")
    )


def _write(value: Any, out: list[str], seen: set[int]) -> bool:  # noqa: C901 - one case a kind
    if value is jsnull:
        out.append("null")
        return True
    if (
        value is UNDEFINED
        or isinstance(value, JsCallable)
        or (isinstance(value, PyProxy) and callable(value._obj))
    ):
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
    if isinstance(value, PyProxy):
        return _write_pyproxy(value, out, seen)
    to_json = value._js_get("toJSON")
    if isinstance(to_json, JsCallable):
        return _write(to_json.js_call(), out, seen)
    if id(value) in seen:
        raise js_error("TypeError", "Converting circular structure to JSON")
    seen.add(id(value))
    try:
        from jsemu.objects import JsArray, JsMap

        if isinstance(value, JsMap) and value._literal:
            entries = [(key, item) for key, item in value._entries.items() if isinstance(key, str)]
            out.append("{")
            first = True
            for key, item in entries:
                mark = len(out)
                out.append(("" if first else ",") + _quote(key) + ":")
                if _write(item, out, seen):
                    first = False
                else:
                    del out[mark:]
            out.append("}")
            return True
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


def _write_pyproxy(value: PyProxy, out: list[str], seen: set[int]) -> bool:
    """A PyProxy as JSON.stringify sees it in Pyodide: a list, tuple, bytes or bytearray as an array, a dict
    as an object (its str keys), anything else as an empty object."""
    from jsemu.core import to_js_implicit
    from jsemu.objects import JsArray, JsObject

    value._check_alive()
    obj = value._obj
    if isinstance(obj, list | tuple | bytes | bytearray):
        return _write(JsArray([to_js_implicit(item) for item in obj]), out, seen)
    if isinstance(obj, dict):
        props = {key: to_js_implicit(item) for key, item in obj.items() if isinstance(key, str)}
        return _write(JsObject(props), out, seen)
    out.append("{}")
    return True


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
