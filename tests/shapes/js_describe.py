"""``describe`` for the local runtime's JS side: the same JSON the recorder's ``describe.js`` makes in workerd.

The runtime holds a JS value as Python (``jsemu``): ``UNDEFINED``, ``jsnull``, ``bool``/``str``/``int``/``float``,
``JsBigIntValue`` and `JsProxy` objects whose ``js_class`` names the constructor. This module reads a value
from the JS side (``_js_keys``/``_js_get``, never Python's implicit conversions) and describes it by the rules
of ``recorder/describe.js`` (ADR-0104), so a description of the runtime's object and the record of workerd's
compare as JSON. A platform object implemented in Python (`HostObject`) stands for a class instance: its
``js_<name>`` methods and properties are its prototype's methods and getters; ``__iter__`` stands for
``Symbol.iterator``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from jsemu.core import UNDEFINED, HostObject, JsBigIntValue, JsCallable, JsProxy, jsnull
from jsemu.objects import (
    ArrayBuffer,
    JsArray,
    JsDate,
    JsError,
    JsIterator,
    JsMap,
    JsObject,
    JsSet,
    Uint8Array,
)
from jsemu.promise import JsPromise

JSON_EXPONENT_FROM = 1e21
"""JSON.stringify writes a number this large or larger with an exponent (JSON then reads it as a float)."""
ITERATOR = "Symbol(Symbol.iterator)"


def describe(value: Any, varies: Sequence[str] = (), path: str = "$") -> dict[str, Any]:
    """The recorder's description of the JS value ``value`` (the paths in ``varies`` by type only)."""
    patterns = [p if p.startswith("$") else f"$.{p}" for p in varies]
    return _describe(value, patterns, path)


def outcome(call: Any, varies: Sequence[str] = ()) -> dict[str, Any]:
    """``{"returns": ...}`` or ``{"throws": ...}`` for a call made from the JS side (``call()``)."""
    from jsemu.core import JsException

    try:
        return {"returns": describe(call(), varies)}
    except JsException as error:
        return {"throws": describe(error.js_error, varies)}


def _matches(patterns: list[str], path: str) -> bool:
    parts = path.split(".")
    for pattern in patterns:
        want = pattern.split(".")
        if len(want) == len(parts) and all(w in ("*", p) for w, p in zip(want, parts, strict=True)):
            return True
    return False


def js_number(value: float) -> Any:
    """A JS number as JSON.stringify writes it and Python's json reads it back."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 and math.copysign(1.0, value) < 0:
        return "-0"
    if float(value).is_integer() and abs(value) < JSON_EXPONENT_FROM:
        return int(
            Decimal(repr(float(value)))
        )  # JS prints the shortest digits: 2**63 reads 9223372036854776000
    return float(value)


def _typeof(value: Any) -> str:
    if value is UNDEFINED:
        return "undefined"
    if value is jsnull:
        return "object"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, JsBigIntValue):
        return "bigint"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, JsProxy):
        return value.js_typeof
    raise TypeError(f"not a JS value: {type(value).__name__}")


def _constructor(value: JsProxy) -> str | None:
    if isinstance(value, JsObject) and value._null_proto:  # pyright: ignore[reportPrivateUsage]
        return None
    return value.js_class


def _describe(value: Any, patterns: list[str], path: str) -> dict[str, Any]:
    typeof = _typeof(value)
    if _matches(patterns, path):
        if value is jsnull:
            return {"typeof": "object", "value": None, "varies": True}
        if not isinstance(value, JsProxy) or typeof == "function":
            return {"typeof": typeof, "varies": True}
        return {"typeof": "object", "constructor": _constructor(value), "varies": True}
    if value is jsnull:
        return {"typeof": "object", "value": None}
    if value is UNDEFINED:
        return {"typeof": "undefined"}
    if typeof == "number":
        return {"typeof": "number", "value": js_number(value)}
    if typeof == "bigint":
        return {"typeof": "bigint", "value": str(int(value))}
    if typeof in ("string", "boolean"):
        return {"typeof": typeof, "value": value}
    if typeof == "function":
        name = value.js_name if isinstance(value, JsCallable) else None
        return {"typeof": "function", "name": name}
    return _describe_object(value, patterns, path)


def _describe_object(value: JsProxy, patterns: list[str], path: str) -> dict[str, Any]:
    out: dict[str, Any] = {"typeof": "object", "constructor": _constructor(value)}

    def child(item: Any, key: str | int) -> dict[str, Any]:
        return _describe(item, patterns, f"{path}.{key}")

    if isinstance(value, JsArray):
        items = value._items  # pyright: ignore[reportPrivateUsage]
        return {**out, "isArray": True, "items": [child(item, i) for i, item in enumerate(items)]}
    if isinstance(value, ArrayBuffer | Uint8Array):
        return {**out, "bytes": value.to_bytes().hex()}
    if isinstance(value, JsDate):
        return {**out, "value": js_number(value._ms)}  # pyright: ignore[reportPrivateUsage]
    if isinstance(value, JsMap):
        entries = value._entries.items()  # pyright: ignore[reportPrivateUsage]
        return {**out, "entries": [[child(k, f"{i}.key"), child(v, i)] for i, (k, v) in enumerate(entries)]}
    if isinstance(value, JsSet):
        return {**out, "items": [child(v, i) for i, v in enumerate(value._values)]}  # pyright: ignore[reportPrivateUsage]
    keys = [key for key in value._js_keys() if not (isinstance(value, JsError) and key == "stack")]  # pyright: ignore[reportPrivateUsage]
    if isinstance(value, JsError):
        props = value._props  # pyright: ignore[reportPrivateUsage]
        out["name"] = props.get("name")
        out["message"] = {"varies": True} if _matches(patterns, f"{path}.message") else props.get("message")
        if "cause" in props:
            out["cause"] = child(props["cause"], "cause")
    out["keys"] = keys
    out["properties"] = {key: child(value._js_get(key), key) for key in keys}  # pyright: ignore[reportPrivateUsage]
    if isinstance(value, JsError) or type(value) is JsObject:
        return out
    members = prototype_members(value)
    out["prototype"] = members
    out["inherits"] = _inherits(value)
    out["getters"] = {
        name: child(value._js_get(name), name)  # pyright: ignore[reportPrivateUsage]
        for name, kind in members
        if kind == "getter"
    }
    return out


ITERATOR_HELPERS = frozenset(
    {"toArray", "map", "filter", "take", "drop", "flatMap", "reduce", "forEach", "some", "every", "find"}
)
"""Iterator.prototype's helpers: an iterator object of workerd inherits them rather than defining them."""


def _is_iterator(value: JsProxy) -> bool:
    """A JS iterator: the emulation's JsIterator, or a platform object whose class says it inherits Iterator."""
    return isinstance(value, JsIterator) or getattr(type(value), "js_inherits", None) == "Iterator"


def _inherits(value: JsProxy) -> str:
    if _is_iterator(value):
        return "Iterator"
    if isinstance(value, JsPromise):
        return "Promise"
    return "Object"


def prototype_members(value: JsProxy) -> list[list[str]]:
    """The ``[name, kind]`` pairs the recorder lists for a class instance's prototype chain."""
    members: list[list[str]] = []
    if isinstance(value, HostObject):
        seen: set[str] = set()
        for cls in type(value).__mro__:
            if cls in (HostObject, JsProxy, object):
                continue  # the emulation's own machinery (`js_id`, ...), not the object's JS members
            for attr, member in vars(cls).items():
                if (
                    not attr.startswith("js_")
                    or attr in ("js_class", "js_typeof", "js_inherits")
                    or attr in seen
                ):
                    continue
                seen.add(attr)
                name = attr.removeprefix("js_")
                if name in ITERATOR_HELPERS and _is_iterator(value):
                    continue  # inherited from Iterator.prototype on workerd
                kind = "getter" if isinstance(member, property) else "method"
                members.append([name, kind])
    elif isinstance(value, JsIterator):
        members.append(["next", "method"])
    if any("__iter__" in vars(cls) for cls in type(value).__mro__ if cls not in (object, JsProxy)):
        members.append([ITERATOR, "method"])
    return members
