# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""The JS globals the emulation offers (``from js import Object``): what the SDK and the runtime use.

``GLOBALS`` maps a name to its JS value; the runtime adds its own (``fetch``) with `define_global`. A name
not here is absent, as a global missing from workerd would be (``ImportError`` / ``AttributeError``).
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

from jsemu import json_text
from jsemu.core import (
    MAX_SAFE_INTEGER,
    UNDEFINED,
    JsBigIntValue,
    JsCallable,
    JsException,
    JsProxy,
    js_error,
    jsnull,
    register_constructor,
)
from jsemu.objects import (
    ArrayBuffer,
    JsArray,
    JsDate,
    JsError,
    JsMap,
    JsObject,
    JsSet,
    Uint8Array,
    _call_js,
    property_key,
)
from jsemu.promise import JsPromise

__all__ = ["GLOBALS", "OBJECT_FROM_ENTRIES", "define_global"]

GLOBALS: dict[str, Any] = {}


def define_global(name: str, value: Any) -> None:
    """Make ``value`` (a JS value) the global ``name``."""
    GLOBALS[name] = value
    if isinstance(value, JsCallable) and value.js_name == name:
        register_constructor(value)


def _iterate(value: Any) -> list[Any]:
    if isinstance(value, JsArray):
        return list(value._items)
    if isinstance(value, JsMap):
        return [JsArray([k, v]) for k, v in value._entries.items()]
    if isinstance(value, JsSet):
        return list(value._values)
    if isinstance(value, str):
        return list(value)
    if isinstance(value, Uint8Array):
        return list(value.to_bytes())
    if isinstance(value, JsProxy) and hasattr(value, "__iter__"):
        from jsemu.core import to_js_implicit

        return [to_js_implicit(item) for item in value]  # type: ignore[attr-defined]
    raise js_error("TypeError", "object is not iterable")


# -- Object ------------------------------------------------------------------------------------------------
def _from_entries(entries: Any) -> JsObject:
    from jsemu.convert import from_entries

    return from_entries(JsArray(_iterate(entries)))


OBJECT_FROM_ENTRIES = JsCallable(_from_entries, name="fromEntries")


def _keys(obj: Any) -> JsArray:
    return JsArray(list(obj._js_keys()) if isinstance(obj, JsProxy) else [])


def _assign(target: Any, *sources: Any) -> Any:
    for source in sources:
        if isinstance(source, JsProxy):
            for key in source._js_keys():
                target._js_set(key, source._js_get(key))
    return target


def _create(proto: Any) -> JsObject:
    return JsObject({}, null_proto=proto is jsnull)


define_global(
    "Object",
    JsCallable(
        lambda value=UNDEFINED: value if isinstance(value, JsProxy) else JsObject(),
        name="Object",
        construct=lambda value=UNDEFINED: value if isinstance(value, JsProxy) else JsObject(),
        static={
            "fromEntries": OBJECT_FROM_ENTRIES,
            "keys": JsCallable(_keys, name="keys"),
            "values": JsCallable(lambda o: JsArray([o._js_get(k) for k in o._js_keys()]), name="values"),
            "entries": JsCallable(lambda o: JsArray([JsArray([k, o._js_get(k)]) for k in o._js_keys()]), name="entries"),
            "assign": JsCallable(_assign, name="assign"),
            "create": JsCallable(_create, name="create"),
        },
    ),
)


# -- Array -------------------------------------------------------------------------------------------------
def _array_new(*args: Any) -> JsArray:
    if len(args) == 1 and isinstance(args[0], int | float) and not isinstance(args[0], bool):
        return JsArray([UNDEFINED] * int(args[0]))
    return JsArray(list(args))


define_global(
    "Array",
    JsCallable(
        _array_new,
        name="Array",
        construct=_array_new,
        static={
            "of": JsCallable(lambda *items: JsArray(list(items)), name="of"),
            "from": JsCallable(
                lambda items, fn=UNDEFINED: JsArray(
                    [v if fn is UNDEFINED else _call_js(fn, v, i) for i, v in enumerate(_iterate(items))]
                ),
                name="from",
            ),
            "isArray": JsCallable(lambda value: isinstance(value, JsArray), name="isArray"),
        },
    ),
)

define_global(
    "JSON",
    JsObject(
        {
            "parse": JsCallable(lambda text: json_text.parse(str(text)), name="parse"),
            "stringify": JsCallable(lambda value, *_: json_text.stringify(value), name="stringify"),
        }
    ),
)


# -- Date, errors ------------------------------------------------------------------------------------------
def _date_new(*args: Any) -> JsDate:
    if not args:
        return JsDate(time.time() * 1000)
    value = args[0]
    if isinstance(value, JsDate):
        return JsDate(value._ms)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return JsDate(float(value) if math.isfinite(value) else math.nan)
    return JsDate(math.nan)


define_global(
    "Date",
    JsCallable(
        lambda *_: JsDate(time.time() * 1000).to_string(),
        name="Date",
        construct=_date_new,
        static={"now": JsCallable(lambda: int(time.time() * 1000), name="now")},
    ),
)


def _error_class(name: str) -> JsCallable:
    def make(message: Any = UNDEFINED, options: Any = UNDEFINED) -> JsError:
        extra = None
        if isinstance(options, JsObject) and "cause" in options._props:
            extra = {"cause": options._props["cause"]}
        text = "" if message is UNDEFINED else json_text.number_text(message) if isinstance(message, int | float) and not isinstance(message, bool) else str(message) if not isinstance(message, JsProxy) else message.to_string()
        return JsError(name, text, extra)

    return JsCallable(make, name=name, construct=make)


for _name in ("Error", "TypeError", "RangeError", "SyntaxError", "ReferenceError"):
    define_global(_name, _error_class(_name))


# -- Promise -----------------------------------------------------------------------------------------------
def _promise_new(executor: Any) -> JsPromise:
    promise = JsPromise()

    def resolve(value: Any = UNDEFINED) -> Any:
        promise.resolve(value)
        return UNDEFINED

    def reject(reason: Any = UNDEFINED) -> Any:
        promise.reject(reason if isinstance(reason, BaseException) else JsException(reason))
        return UNDEFINED

    try:
        _call_js(executor, JsCallable(resolve, name="resolve"), JsCallable(reject, name="reject"))
    except JsException as error:
        promise.reject(error)
    return promise


define_global(
    "Promise",
    JsCallable(
        lambda *_: (_ for _ in ()).throw(js_error("TypeError", "Promise constructor cannot be invoked without 'new'")),
        name="Promise",
        construct=_promise_new,
        static={
            "resolve": JsCallable(lambda value=UNDEFINED: JsPromise.resolved(value), name="resolve"),
            "reject": JsCallable(lambda reason=UNDEFINED: JsPromise.rejected(JsException(reason)), name="reject"),
        },
    ),
)


# -- bytes -------------------------------------------------------------------------------------------------
def _uint8_new(source: Any = 0, offset: Any = UNDEFINED, length: Any = UNDEFINED) -> Uint8Array:
    if isinstance(source, ArrayBuffer):
        start = 0 if offset is UNDEFINED else int(offset)
        return Uint8Array(source, start, None if length is UNDEFINED else int(length))
    if isinstance(source, int | float) and not isinstance(source, bool):
        return Uint8Array(ArrayBuffer(bytearray(int(source))))
    if isinstance(source, Uint8Array):
        return Uint8Array.copy_of(source.to_bytes())
    return Uint8Array.copy_of(bytes(int(v) & 0xFF if isinstance(v, int | float) else 0 for v in _iterate(source)))


define_global("Uint8Array", JsCallable(_uint8_new, name="Uint8Array", construct=_uint8_new))
define_global(
    "ArrayBuffer",
    JsCallable(lambda n=0: ArrayBuffer(bytearray(int(n))), name="ArrayBuffer", construct=lambda n=0: ArrayBuffer(bytearray(int(n)))),
)


# -- numbers, Map, Set -------------------------------------------------------------------------------------
def _is_safe_integer(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool | JsBigIntValue) and math.isfinite(value) and float(value).is_integer() and abs(value) <= MAX_SAFE_INTEGER


define_global(
    "Number",
    JsCallable(
        lambda value=0: float(value) if not isinstance(value, str) else float(value or 0),
        name="Number",
        static={
            "MAX_SAFE_INTEGER": MAX_SAFE_INTEGER,
            "isSafeInteger": JsCallable(_is_safe_integer, name="isSafeInteger"),
            "isInteger": JsCallable(
                lambda v: isinstance(v, int | float) and not isinstance(v, bool | JsBigIntValue) and math.isfinite(v) and float(v).is_integer(),
                name="isInteger",
            ),
        },
    ),
)
define_global("BigInt", JsCallable(lambda value: JsBigIntValue(int(value)), name="BigInt"))
define_global(
    "Map",
    JsCallable(
        lambda *_: (_ for _ in ()).throw(js_error("TypeError", "Constructor Map requires 'new'")),
        name="Map",
        construct=lambda entries=UNDEFINED: JsMap(
            {} if entries is UNDEFINED else {pair._items[0]: pair._items[1] for pair in _iterate(entries)}
        ),
    ),
)
define_global(
    "Set",
    JsCallable(
        lambda *_: (_ for _ in ()).throw(js_error("TypeError", "Constructor Set requires 'new'")),
        name="Set",
        construct=lambda values=UNDEFINED: JsSet([] if values is UNDEFINED else _iterate(values)),
    ),
)


def _queue_microtask(callback: Any) -> Any:
    asyncio.get_running_loop().call_soon(_call_js, callback)
    return UNDEFINED


define_global("queueMicrotask", JsCallable(_queue_microtask, name="queueMicrotask"))
define_global("undefined", UNDEFINED)
define_global("globalThis", JsObject({}))
_ = property_key
