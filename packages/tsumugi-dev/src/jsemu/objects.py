# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""JS's ordinary objects: plain objects, arrays, Maps, Sets, typed arrays, Dates and errors.

Each is a `JsProxy` subclass holding its JS-side state; what Python code may do with one (index an array,
``len`` a Map, iterate) follows Pyodide 0.28's proxy types (``JsArray``, ``JsMap``, ``JsBuffer``, ...).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from jsemu.core import (
    MISSING,
    UNDEFINED,
    JsBigIntValue,
    JsCallable,
    JsException,
    JsProxy,
    js_error,
    jsnull,
    to_js_implicit,
    to_python,
)

__all__ = [
    "ArrayBuffer",
    "JsArray",
    "JsBuffer",
    "JsDate",
    "JsError",
    "JsIterator",
    "JsMap",
    "JsObject",
    "JsSet",
    "JsTypedArray",
    "Uint8Array",
    "make_error",
    "property_key",
    "python_error",
]


def property_key(key: Any) -> str:
    """ECMAScript ``ToPropertyKey`` of a JS value (``true`` -> ``"true"``, ``1.0`` -> ``"1"``)."""
    if type(key) is str:
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is UNDEFINED:
        return "undefined"
    if key is jsnull:
        return "null"
    if isinstance(key, int):
        return str(int(key))
    if isinstance(key, float):
        from jsemu.json_text import number_text

        return number_text(key)
    if isinstance(key, str):
        return str.__str__(key)
    if isinstance(key, JsProxy):
        return key.to_string()
    return str(key)


class JsObject(JsProxy):
    """A plain object (``{}``): properties in insertion order. Not subscriptable from Python (Pyodide 0.28)."""

    __slots__ = ("_null_proto", "_props")
    _props: dict[str, Any]
    _null_proto: bool

    def __init__(self, props: dict[str, Any] | None = None, *, null_proto: bool = False) -> None:
        object.__setattr__(self, "_props", props if props is not None else {})
        object.__setattr__(self, "_null_proto", null_proto)

    def _js_get(self, name: str) -> Any:
        value = self._props.get(name, MISSING)
        if value is MISSING and name in _OBJECT_PROTOTYPE and not self._null_proto:
            return _OBJECT_PROTOTYPE[name](self)
        return value

    def _js_set(self, name: str, value: Any) -> None:
        self._props[name] = value

    def _js_delete(self, name: str) -> None:
        self._props.pop(name, None)

    def _js_keys(self) -> list[str]:
        return ordered_keys(self._props)

    @property
    def constructor(self) -> Any:
        """An own ``constructor`` property, else the prototype's (none on ``Object.create(null)``)."""
        own = self._props.get("constructor", MISSING)
        if own is not MISSING:
            return to_python(own)
        if self._null_proto:
            raise AttributeError("constructor")
        return JsProxy.constructor.__get__(self)


def _array_index(key: str) -> int | None:
    """``key`` as an array index (canonical decimal below 2**32 - 1), else None."""
    if key.isdigit() and (key == "0" or not key.startswith("0")) and int(key) < 2**32 - 1:
        return int(key)
    return None


def ordered_keys(props: dict[str, Any]) -> list[str]:
    """ECMAScript OrdinaryOwnPropertyKeys: array indices ascending, then the other keys in insertion order."""
    keys = list(props)
    for key in keys:
        if key.isdigit():
            break
    else:
        return keys  # no key can be an array index (each is all digits): insertion order (the common case)
    indices = sorted((index, key) for key in props if (index := _array_index(key)) is not None)
    return [key for _, key in indices] + [key for key in props if _array_index(key) is None]


class ObjectMap(JsProxy):
    """``JsProxy.as_object_map()``: an object's own properties as a mutable mapping."""

    __slots__ = ("_target",)
    _target: JsProxy

    def __init__(self, target: JsProxy) -> None:
        object.__setattr__(self, "_target", target)

    def _js_get(self, name: str) -> Any:
        return self._target._js_get(name)

    def _js_keys(self) -> list[str]:
        return self._target._js_keys()

    def __getitem__(self, key: str) -> Any:
        if key not in self._target._js_keys():
            raise KeyError(key)
        return to_python(self._target._js_get(key))

    def __setitem__(self, key: str, value: Any) -> None:
        self._target._js_set(key, to_js_implicit(value))

    def __delitem__(self, key: str) -> None:
        if key not in self._target._js_keys():
            raise KeyError(key)
        self._target._js_delete(key)

    def __contains__(self, key: object) -> bool:
        return key in self._target._js_keys()

    def __len__(self) -> int:
        return len(self._target._js_keys())

    def __iter__(self) -> Iterator[str]:
        return iter(self._target._js_keys())


_OBJECT_PROTOTYPE: dict[str, Any] = {
    "hasOwnProperty": lambda self: JsCallable(
        lambda key: property_key(key) in self._props, name="hasOwnProperty"
    ),
    "toString": lambda self: JsCallable(lambda: self._js_to_string(), name="toString"),
    "valueOf": lambda self: JsCallable(lambda: self, name="valueOf"),
}


class JsIterator(JsProxy):
    """A JS iterator (``next()`` answers ``{value, done}``); iterable from Python."""

    __slots__ = ("_items",)
    _items: Iterator[Any]
    js_class: ClassVar[str] = "Object"

    def __init__(self, items: Iterator[Any]) -> None:
        object.__setattr__(self, "_items", items)

    def _next(self) -> Any:
        try:
            return JsObject({"value": next(self._items), "done": False})
        except StopIteration:
            return JsObject({"value": UNDEFINED, "done": True})

    def _js_get(self, name: str) -> Any:
        if name == "next":
            return JsCallable(self._next, name="next")
        return MISSING

    def __iter__(self) -> Iterator[Any]:
        return (to_python(item) for item in self._items)

    def __next__(self) -> Any:
        return to_python(next(self._items))


class JsArray(JsProxy):
    """An Array: indexable, ``len`` and iteration from Python, items converted implicitly."""

    __slots__ = ("_items",)
    _items: list[Any]
    js_class: ClassVar[str] = "Array"

    def __init__(self, items: list[Any] | None = None) -> None:
        object.__setattr__(self, "_items", items if items is not None else [])

    def _js_get(self, name: str) -> Any:
        if name == "length":
            return len(self._items)
        if name.isdigit():
            index = int(name)
            return self._items[index] if index < len(self._items) else UNDEFINED
        method = _ARRAY_METHODS.get(name)
        if method is not None:
            return JsCallable(lambda *args: method(self, *args), name=name)
        return MISSING

    def _js_set(self, name: str, value: Any) -> None:
        if name.isdigit():
            index = int(name)
            while len(self._items) <= index:
                self._items.append(UNDEFINED)
            self._items[index] = value
            return
        if name == "length":
            del self._items[int(value) :]
            return
        raise js_error("TypeError", f"Cannot add property {name} to an Array here")

    def _js_keys(self) -> list[str]:
        return [str(i) for i in range(len(self._items))]

    def _js_to_string(self) -> str:
        return ",".join("" if v is UNDEFINED or v is jsnull else _string_of(v) for v in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Any]:
        return (to_python(item) for item in list(self._items))

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return JsArray(self._items[index])
        if not isinstance(index, int):
            raise TypeError("list indices must be integers or slices, not " + type(index).__name__)
        if not -len(self._items) <= index < len(self._items):
            raise IndexError(index)  # Pyodide's text: the index alone
        return to_python(self._items[index])

    def __setitem__(self, index: int, value: Any) -> None:
        self._items[index] = to_js_implicit(value)

    def __delitem__(self, index: int) -> None:
        del self._items[index]

    def __contains__(self, value: object) -> bool:
        return any(to_python(item) == value for item in self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __reversed__(self) -> Iterator[Any]:
        return (to_python(item) for item in reversed(self._items))

    def append(self, value: Any) -> None:
        """``Array.prototype.push``."""
        self._items.append(to_js_implicit(value))

    def extend(self, values: Iterable[Any]) -> None:
        """Push each of ``values``."""
        for value in values:
            self.append(value)

    def pop(self, index: int = -1) -> Any:
        """Remove and answer an item."""
        return to_python(self._items.pop(index))

    def index(self, value: Any) -> int:
        """The first index of ``value``."""
        for i, item in enumerate(self._items):
            if to_python(item) == value:
                return i
        raise ValueError(f"{value!r} is not in list")

    def count(self, value: Any) -> int:
        """How many items equal ``value``."""
        return sum(1 for item in self._items if to_python(item) == value)


def _index(value: Any) -> int:
    return int(value)


def _string_of(value: Any) -> str:
    """ECMAScript ToString of a JS value."""
    if isinstance(value, str):
        return value
    if value is UNDEFINED:
        return "undefined"
    if value is jsnull:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, JsBigIntValue):
        return str(int(value))
    if isinstance(value, float | int):
        return property_key(value)
    if isinstance(value, JsProxy):
        return value.to_string()
    return str(value)


def _call_js(fn: Any, *args: Any) -> Any:
    if isinstance(fn, JsCallable):
        return fn.js_call(*args)
    if isinstance(fn, JsProxy) and hasattr(fn, "js_call"):
        return fn.js_call(*args)
    raise js_error("TypeError", f"{_string_of(fn)} is not a function")


_ARRAY_METHODS: dict[str, Any] = {
    "push": lambda self, *values: (self._items.extend(values), len(self._items))[1],
    "pop": lambda self: self._items.pop() if self._items else UNDEFINED,
    "at": lambda self, i: (
        self._items[int(i)] if -len(self._items) <= int(i) < len(self._items) else UNDEFINED
    ),
    "slice": lambda self, start=0, end=UNDEFINED: JsArray(
        self._items[_index(start) : None if end is UNDEFINED else _index(end)]
    ),
    "join": lambda self, sep=",": ("," if sep is UNDEFINED else _string_of(sep)).join(
        "" if v is UNDEFINED or v is jsnull else _string_of(v) for v in self._items
    ),
    "map": lambda self, fn: JsArray([_call_js(fn, v, i, self) for i, v in enumerate(list(self._items))]),
    "forEach": lambda self, fn: (
        [_call_js(fn, v, i, self) for i, v in enumerate(list(self._items))] and UNDEFINED
    ),
    "includes": lambda self, value: any(v == value and type(v) is type(value) for v in self._items),
    "indexOf": lambda self, value: next(
        (i for i, v in enumerate(self._items) if v is value or v == value), -1
    ),
    "toString": lambda self: self._js_to_string(),
    "values": lambda self: JsIterator(iter(list(self._items))),
}


class JsMap(JsProxy):
    """A Map: ``m[key]``, ``len``, ``in`` and iteration over keys from Python (Pyodide's ``JsMap``)."""

    __slots__ = ("_entries", "_literal")
    _entries: dict[Any, Any]
    _literal: bool

    def __init__(self, entries: dict[Any, Any] | None = None, *, literal: bool = False) -> None:
        object.__setattr__(self, "_entries", entries if entries is not None else {})
        object.__setattr__(self, "_literal", literal)

    @property
    def js_class(self) -> str:  # type: ignore[override]
        """``LiteralMap`` for what ``to_js`` makes of a dict (a Map that ``JSON.stringify`` writes as an object)."""
        return "LiteralMap" if self._literal else "Map"

    def _js_to_string(self) -> str:
        return "[object Map]"

    def _js_get(self, name: str) -> Any:
        if name == "size":
            return len(self._entries)
        method = _MAP_METHODS.get(name)
        if method is not None:
            return JsCallable(lambda *args: method(self, *args), name=name)
        return MISSING

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Any]:
        return (to_python(key) for key in list(self._entries))

    def __getitem__(self, key: Any) -> Any:
        js_key = to_js_implicit(key)
        if js_key not in self._entries:
            raise KeyError(key)
        return to_python(self._entries[js_key])

    def __setitem__(self, key: Any, value: Any) -> None:
        self._entries[to_js_implicit(key)] = to_js_implicit(value)

    def __delitem__(self, key: Any) -> None:
        del self._entries[to_js_implicit(key)]

    def __contains__(self, key: object) -> bool:
        return to_js_implicit(key) in self._entries

    def __bool__(self) -> bool:
        return bool(self._entries)

    def get(self, key: Any, default: Any = None) -> Any:
        """The value for ``key`` or ``default``."""
        js_key = to_js_implicit(key)
        return to_python(self._entries[js_key]) if js_key in self._entries else default

    def keys(self) -> Iterator[Any]:
        """The keys, converted."""
        return iter(self)

    def values(self) -> Iterator[Any]:
        """The values, converted."""
        return (to_python(v) for v in list(self._entries.values()))

    def items(self) -> Iterator[tuple[Any, Any]]:
        """The entries, converted."""
        return ((to_python(k), to_python(v)) for k, v in list(self._entries.items()))


_MAP_METHODS: dict[str, Any] = {
    "get": lambda self, key: self._entries.get(key, UNDEFINED),
    "set": lambda self, key, value: (self._entries.__setitem__(key, value), self)[1],
    "has": lambda self, key: key in self._entries,
    "delete": lambda self, key: self._entries.pop(key, MISSING) is not MISSING,
    "keys": lambda self: JsIterator(iter(list(self._entries))),
    "values": lambda self: JsIterator(iter(list(self._entries.values()))),
    "entries": lambda self: JsIterator(iter([JsArray([k, v]) for k, v in self._entries.items()])),
}


class JsSet(JsProxy):
    """A Set: ``len``, ``in`` and iteration from Python."""

    __slots__ = ("_values",)
    _values: dict[Any, None]
    js_class: ClassVar[str] = "Set"

    def __init__(self, values: Iterable[Any] = ()) -> None:
        object.__setattr__(self, "_values", dict.fromkeys(values))

    def _js_get(self, name: str) -> Any:
        if name == "size":
            return len(self._values)
        if name == "has":
            return JsCallable(lambda value: value in self._values, name="has")
        if name == "add":
            return JsCallable(lambda value: (self._values.__setitem__(value, None), self)[1], name="add")
        return MISSING

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[Any]:
        return (to_python(v) for v in list(self._values))

    def __contains__(self, value: object) -> bool:
        return to_js_implicit(value) in self._values

    def __bool__(self) -> bool:
        return bool(self._values)


class JsBuffer(JsProxy):
    """A JS buffer (ArrayBuffer or a typed array): Pyodide's ``JsBuffer``."""

    __slots__ = ()


class JsTypedArray(JsBuffer):
    """A typed array: Pyodide's ``JsTypedArray``."""

    __slots__ = ()


class ArrayBuffer(JsBuffer):
    """An ArrayBuffer (``JsBuffer``): bytes with ``byteLength``."""

    __slots__ = ("_data",)
    _data: bytearray
    js_class: ClassVar[str] = "ArrayBuffer"

    def __init__(self, data: bytearray) -> None:
        object.__setattr__(self, "_data", data)

    def _js_get(self, name: str) -> Any:
        if name == "byteLength":
            return len(self._data)
        if name == "slice":
            return JsCallable(
                lambda start=0, end=UNDEFINED: ArrayBuffer(
                    bytearray(self._data[_index(start) : None if end is UNDEFINED else _index(end)])
                ),
                name="slice",
            )
        return MISSING

    def to_bytes(self) -> bytes:
        """A copy as ``bytes``."""
        return bytes(self._data)

    def to_memoryview(self) -> memoryview:
        """A copy as a ``memoryview``."""
        return memoryview(bytes(self._data))

    def to_file(self, file: Any) -> None:
        """Write the bytes to ``file``."""
        file.write(self._data)


class Uint8Array(JsTypedArray):
    """A Uint8Array (``JsTypedArray``) over an ArrayBuffer."""

    __slots__ = ("_buffer", "_length", "_start")
    _buffer: ArrayBuffer
    _start: int
    _length: int
    js_class: ClassVar[str] = "Uint8Array"

    def __init__(self, buffer: ArrayBuffer, start: int = 0, length: int | None = None) -> None:
        object.__setattr__(self, "_buffer", buffer)
        object.__setattr__(self, "_start", start)
        object.__setattr__(self, "_length", len(buffer._data) - start if length is None else length)

    @classmethod
    def copy_of(cls, data: bytes | bytearray | memoryview) -> Uint8Array:
        """A new array holding a copy of ``data``."""
        return cls(ArrayBuffer(bytearray(data)))

    def _view(self) -> bytes:
        return bytes(self._buffer._data[self._start : self._start + self._length])

    def _js_get(self, name: str) -> Any:
        if name in ("length", "byteLength"):
            return self._length
        if name == "byteOffset":
            return self._start
        if name == "buffer":
            return self._buffer
        if name.isdigit():
            index = int(name)
            return self._buffer._data[self._start + index] if index < self._length else UNDEFINED
        if name == "slice":
            return JsCallable(self._slice, name="slice")
        if name == "subarray":
            return JsCallable(self._subarray, name="subarray")
        return MISSING

    def _bounds(self, start: Any, end: Any) -> tuple[int, int]:
        lo = 0 if start is UNDEFINED else int(start)
        hi = self._length if end is UNDEFINED else int(end)
        lo = max(0, lo + self._length if lo < 0 else min(lo, self._length))
        hi = max(0, hi + self._length if hi < 0 else min(hi, self._length))
        return lo, max(lo, hi)

    def _slice(self, start: Any = UNDEFINED, end: Any = UNDEFINED) -> Uint8Array:
        lo, hi = self._bounds(start, end)
        return Uint8Array.copy_of(self._view()[lo:hi])

    def _subarray(self, start: Any = UNDEFINED, end: Any = UNDEFINED) -> Uint8Array:
        lo, hi = self._bounds(start, end)
        return Uint8Array(self._buffer, self._start + lo, hi - lo)

    def _js_to_string(self) -> str:
        return ",".join(str(b) for b in self._view())

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[int]:
        return iter(self._view())

    def __getitem__(self, index: int) -> int:
        return self._view()[index]

    def __setitem__(self, index: int, value: Any) -> None:
        if not -self._length <= index < self._length:
            raise IndexError(index)
        self._buffer._data[self._start + index % self._length] = int(value) & 0xFF

    def _js_keys(self) -> list[str]:
        return [str(i) for i in range(self._length)]

    def __bool__(self) -> bool:
        return self._length > 0

    def assign(self, source: Any) -> None:
        """Copy ``source`` (a buffer of the same length) in (``JsBuffer.assign``)."""
        data = bytes(memoryview(source))
        if len(data) != self._length:
            raise ValueError("Cannot assign from a buffer of a different length")
        self._buffer._data[self._start : self._start + self._length] = data

    def assign_to(self, target: Any) -> None:
        """Copy the bytes into ``target`` (a writable buffer of the same length; ``JsBuffer.assign_to``)."""
        view = memoryview(target).cast("B")
        if len(view) != self._length:
            raise ValueError("Cannot assign to a buffer of a different length")
        view[:] = self._view()

    def to_bytes(self) -> bytes:
        """A copy as ``bytes``."""
        return self._view()

    def to_memoryview(self) -> memoryview:
        """A copy as a ``memoryview``."""
        return memoryview(self._view())

    def to_string(self, encoding: str | None = None) -> str:
        """Decode (UTF-8 unless ``encoding``), as Pyodide's ``JsBuffer.to_string``."""
        if encoding is None:
            return self._js_to_string()
        return self._view().decode(encoding)

    def to_file(self, file: Any) -> None:
        """Write the bytes to ``file``."""
        file.write(self._view())


class JsDate(JsProxy):
    """A Date: milliseconds since the epoch (``getTime``), or NaN when invalid."""

    __slots__ = ("_ms",)
    _ms: float
    js_class: ClassVar[str] = "Date"

    def __init__(self, ms: float) -> None:
        # ECMAScript TimeClip: past +-8.64e15 ms invalid, else truncated toward zero
        clipped = math.nan if math.isnan(ms) or abs(ms) > 8.64e15 else float(math.trunc(ms))
        object.__setattr__(self, "_ms", clipped)

    def _js_get(self, name: str) -> Any:
        if name in ("getTime", "valueOf"):
            return JsCallable(lambda: self._ms, name=name)
        if name in ("toISOString", "toJSON"):
            return JsCallable(self._iso if name == "toISOString" else self._json, name=name)
        if name == "toString":
            return JsCallable(self._js_to_string, name=name)
        return MISSING

    def _json(self, *_: Any) -> Any:
        return jsnull if math.isnan(self._ms) else self._iso()

    def _iso(self) -> str:
        import datetime

        if math.isnan(self._ms):
            raise js_error("RangeError", "Invalid time value")
        moment = datetime.datetime.fromtimestamp(self._ms / 1000, tz=datetime.UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(self._ms) % 1000:03d}Z"

    def _js_to_string(self) -> str:
        """``String(date)``: Date.prototype.toString in UTC, the zone workerd runs in (tests/shapes: bind.date)."""
        import datetime

        if math.isnan(self._ms):
            return "Invalid Date"
        moment = datetime.datetime.fromtimestamp(self._ms / 1000, tz=datetime.UTC)
        return moment.strftime("%a %b %d %Y %H:%M:%S") + " GMT+0000 (Coordinated Universal Time)"


class JsError(JsProxy):
    """An Error object (``name``, ``message``, ``stack``, optional ``cause``); in Python, a JsException."""

    __slots__ = ("_exception", "_props")
    _props: dict[str, Any]
    _exception: JsException | None
    crosses_as_exception: ClassVar[bool] = True

    def __init__(self, name: str, message: str, extra: dict[str, Any] | None = None) -> None:
        props: dict[str, Any] = {
            "name": name,
            "message": message,
            "stack": f"{name}: {message}\n    at <local>",
        }
        if extra:
            props.update(extra)
        object.__setattr__(self, "_props", props)
        object.__setattr__(self, "_exception", None)

    def as_exception(self) -> JsException:
        """The JsException that stands for this object in Python (one per object, so identity holds)."""
        if self._exception is None:
            object.__setattr__(self, "_exception", JsException(self))
        return self._exception  # type: ignore[return-value]

    @property
    def js_class(self) -> str:  # type: ignore[override]
        name = self._props.get("name")
        return name if name in _ERROR_CLASSES else "Error"

    def _js_get(self, name: str) -> Any:
        if name == "toString":
            return JsCallable(self._js_to_string, name="toString")
        return self._props.get(name, MISSING)

    def _js_set(self, name: str, value: Any) -> None:
        self._props[name] = value

    def _js_keys(self) -> list[str]:
        # ``cause`` is an own property but not enumerable (ECMAScript InstallErrorCause), like the other three.
        return [key for key in self._props if key not in ("name", "message", "stack", "cause")]

    def _js_to_string(self) -> str:
        name, message = self._props.get("name", "Error"), self._props.get("message", "")
        name_text = _string_of(name) if name is not UNDEFINED else "Error"
        message_text = _string_of(message) if message is not UNDEFINED else ""
        if not message_text:
            return name_text
        if not name_text:
            return message_text
        return f"{name_text}: {message_text}"


_ERROR_CLASSES = frozenset(
    {
        "Error",
        "TypeError",
        "RangeError",
        "SyntaxError",
        "ReferenceError",
        "EvalError",
        "URIError",
        "DOMException",
    }
)


def make_error(name: str, message: str, extra: dict[str, Any] | None = None) -> JsError:
    """A new error object ``name`` with ``message``."""
    return JsError(name, message, extra)


def python_error(error: BaseException) -> JsException:
    """A Python exception that JS caught, back in Python: Pyodide's ``PythonError`` (its message the formatted
    traceback, ``type`` the exception's class name)."""
    import traceback

    text = "".join(traceback.format_exception(error))
    return make_error("PythonError", text, {"type": type(error).__name__}).as_exception()


def thrown(value: Any) -> JsException:
    """What Python receives when JS throws ``value``."""
    return value.as_exception() if isinstance(value, JsError) else JsException(value)
