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
    PyProxy,
    js_error,
    jsnull,
    register_constructor,
    to_js_implicit,
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
    _string_of,
    property_key,
    python_error,
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
    if isinstance(value, PyProxy):
        # Pyodide's PyProxy of a Python iterable is a JS iterable; what it yields crosses implicitly
        value._check_alive()
        try:
            items = iter(value._obj)
        except TypeError:
            raise js_error("TypeError", "object is not iterable") from None
        return [to_js_implicit(item) for item in items]
    if isinstance(value, JsProxy) and hasattr(value, "__iter__"):
        return [to_js_implicit(item) for item in value]  # type: ignore[attr-defined]
    raise js_error("TypeError", "object is not iterable")


def _pair(entry: Any) -> tuple[Any, Any]:
    """An entry's ``[0]`` and ``[1]`` (an array, or a PyProxy of a Python pair)."""
    if isinstance(entry, JsArray):
        items = entry._items
    elif isinstance(entry, PyProxy):
        items = _iterate(entry)
    else:
        raise js_error("TypeError", f"Iterator value {entry} is not an entry object")
    return (items[0] if items else UNDEFINED), (items[1] if len(items) > 1 else UNDEFINED)


# -- Object ------------------------------------------------------------------------------------------------
def _from_entries(entries: Any) -> JsObject:
    from jsemu.convert import from_entries

    return from_entries(JsArray([JsArray(list(_pair(entry))) for entry in _iterate(entries)]))


OBJECT_FROM_ENTRIES = JsCallable(_from_entries, name="fromEntries")


def _keys(obj: Any) -> JsArray:
    return JsArray(list(obj._js_keys()) if isinstance(obj, JsProxy) else [])


def _assign(target: Any, *sources: Any) -> Any:
    for source in sources:
        if isinstance(source, JsProxy):
            for key in source._js_keys():
                target._js_set(key, source._js_get(key))
    return target


def _same_value(a: Any, b: Any) -> bool:
    """ECMAScript SameValue (``Object.is``): NaN is NaN, 0 is not -0."""
    if (
        isinstance(a, float | int)
        and isinstance(b, float | int)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a is b or (type(a) is type(b) and isinstance(a, str | bool) and a == b)


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
            "entries": JsCallable(
                lambda o: JsArray([JsArray([k, o._js_get(k)]) for k in o._js_keys()]), name="entries"
            ),
            "assign": JsCallable(_assign, name="assign"),
            "create": JsCallable(_create, name="create"),
            "is": JsCallable(_same_value, name="is"),
        },
    ),
)


# -- Array -------------------------------------------------------------------------------------------------
def _array_new(*args: Any) -> JsArray:
    if len(args) == 1 and isinstance(args[0], int | float) and not isinstance(args[0], bool):
        length = args[0]
        if not (math.isfinite(length) and float(length).is_integer() and 0 <= length < 2**32):
            raise js_error("RangeError", "Invalid array length")
        return JsArray([UNDEFINED] * int(length))
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
            "stringify": JsCallable(json_text.stringify, name="stringify"),
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
    if isinstance(value, str):
        return JsDate(_parse_date(value))
    return JsDate(math.nan)


def _parse_date(text: str) -> float:
    """``Date.parse`` for the ISO 8601 forms (date-only and offset-less date-times read as UTC); NaN else."""
    import datetime

    try:
        moment = datetime.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return math.nan
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.timestamp() * 1000


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
        text = "" if message is UNDEFINED else _string_of(message)
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
    except Exception as error:  # the Promise constructor catches whatever the executor throws
        promise.reject(error if isinstance(error, JsException) else python_error(error))
    return promise


def _promise_all(values: Any) -> JsPromise:
    """``Promise.all``: the values in order once every promise among them is fulfilled; the first rejection."""
    items = _iterate(values)
    combined = JsPromise()
    results: list[Any] = list(items)
    waiting = [i for i, item in enumerate(items) if isinstance(item, JsPromise)]
    remaining = [len(waiting)]

    def fulfil(index: int) -> Any:
        def done(value: Any) -> None:
            results[index] = value
            remaining[0] -= 1
            if remaining[0] == 0:
                combined.resolve(JsArray(results))

        return done

    for index in waiting:
        items[index]._subscribe(fulfil(index), combined.reject)
    if not waiting:
        combined.resolve(JsArray(results))
    return combined


define_global(
    "Promise",
    JsCallable(
        lambda *_: (_ for _ in ()).throw(
            js_error("TypeError", "Promise constructor cannot be invoked without 'new'")
        ),
        name="Promise",
        construct=_promise_new,
        static={
            "resolve": JsCallable(lambda value=UNDEFINED: JsPromise.resolved(value), name="resolve"),
            "reject": JsCallable(
                lambda reason=UNDEFINED: JsPromise.rejected(JsException(reason)), name="reject"
            ),
            "all": JsCallable(_promise_all, name="all"),
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
    return Uint8Array.copy_of(
        bytes(int(v) & 0xFF if isinstance(v, int | float) else 0 for v in _iterate(source))
    )


define_global(
    "Uint8Array",
    JsCallable(
        _uint8_new,
        name="Uint8Array",
        construct=_uint8_new,
        static={"from": JsCallable(lambda source: _uint8_new(JsArray(_iterate(source))), name="from")},
    ),
)
define_global(
    "ArrayBuffer",
    JsCallable(
        lambda n=0: ArrayBuffer(bytearray(int(n))),
        name="ArrayBuffer",
        construct=lambda n=0: ArrayBuffer(bytearray(int(n))),
    ),
)


# -- numbers, Map, Set -------------------------------------------------------------------------------------
def _is_safe_integer(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool | JsBigIntValue)
        and math.isfinite(value)
        and float(value).is_integer()
        and abs(value) <= MAX_SAFE_INTEGER
    )


define_global(
    "Number",
    JsCallable(
        lambda value=0: float(value) if not isinstance(value, str) else float(value or 0),
        name="Number",
        static={
            "MAX_SAFE_INTEGER": MAX_SAFE_INTEGER,
            "MIN_SAFE_INTEGER": -MAX_SAFE_INTEGER,
            "NaN": math.nan,
            "POSITIVE_INFINITY": math.inf,
            "NEGATIVE_INFINITY": -math.inf,
            "isNaN": JsCallable(lambda v=UNDEFINED: isinstance(v, float) and math.isnan(v), name="isNaN"),
            "isSafeInteger": JsCallable(_is_safe_integer, name="isSafeInteger"),
            "isInteger": JsCallable(
                lambda v: (
                    isinstance(v, int | float)
                    and not isinstance(v, bool | JsBigIntValue)
                    and math.isfinite(v)
                    and float(v).is_integer()
                ),
                name="isInteger",
            ),
        },
    ),
)


def _bigint(value: Any) -> JsBigIntValue:
    if isinstance(value, str):
        try:
            return JsBigIntValue(
                int(value.strip() or "0", 0)
                if value.strip()[:2].lower() in ("0x", "0o", "0b")
                else int(value.strip() or "0")
            )
        except ValueError:
            raise js_error("SyntaxError", f"Cannot convert {value} to a BigInt") from None
    if isinstance(value, float) and not value.is_integer():
        raise js_error(
            "RangeError",
            f"The number {json_text.number_text(value)} cannot be converted to a BigInt because it is not an integer",
        )
    return JsBigIntValue(int(value))


define_global("BigInt", JsCallable(_bigint, name="BigInt"))
define_global(
    "Map",
    JsCallable(
        lambda *_: (_ for _ in ()).throw(js_error("TypeError", "Constructor Map requires 'new'")),
        name="Map",
        construct=lambda entries=UNDEFINED: JsMap(
            {}
            if entries is UNDEFINED or entries is jsnull
            else dict(_pair(entry) for entry in _iterate(entries))
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
