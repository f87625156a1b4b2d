# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""Explicit deep conversions: Pyodide's ``to_js`` and ``JsProxy.to_py``.

``to_js``: ``list``/``tuple`` -> Array, ``dict`` -> Map (or ``dict_converter`` applied to ``[key, value]``
pairs; ``Object.fromEntries`` gives a plain object), ``set`` -> Set, buffers -> Uint8Array, JsProxy -> its
object; anything else goes to ``default_converter`` when given, else becomes a PyProxy.
``to_py``: Array -> ``list``, plain object and Map -> ``dict``, Set -> ``set``, typed arrays and ArrayBuffer
-> ``memoryview``; any other object goes to ``default_converter`` when given, else stays a proxy.
Sources: pyodide.org "Type translations" and the ``to_js`` / ``JsProxy.to_py`` API reference (0.28).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from jsemu.builtins import OBJECT_FROM_ENTRIES
from jsemu.core import (
    MAX_SAFE_INTEGER,
    UNDEFINED,
    JsProxy,
    PyProxy,
    int_to_js,
    js_error,
    jsnull,
    to_python,
)
from jsemu.objects import ArrayBuffer, JsArray, JsMap, JsObject, JsSet, Uint8Array, ordered_keys, property_key

__all__ = ["ConversionError", "from_entries", "to_js", "to_py"]


class ConversionError(Exception):
    """A value ``to_js``/``to_py`` cannot convert (Pyodide's ``pyodide.ffi.ConversionError``)."""


def from_entries(entries: Any) -> JsObject:
    """``Object.fromEntries(entries)`` over JS values: keys become property keys, last one wins."""
    props: dict[str, Any] = {}
    items = entries._items if isinstance(entries, JsArray) else list(entries)
    for entry in items:
        pair = entry._items if isinstance(entry, JsArray) else list(entry)
        props[property_key(pair[0] if pair else UNDEFINED)] = pair[1] if len(pair) > 1 else UNDEFINED
    return JsObject(props)


# The types `isinstance` is asked about, made once: ``list | tuple`` written in a call makes a new union object
# at every call (about as costly as the check itself).
_ARRAYS: Final[tuple[type, ...]] = (list, tuple)
_SETS: Final[tuple[type, ...]] = (set, frozenset)
_BYTES: Final[tuple[type, ...]] = (bytes, bytearray, memoryview)
_PRIMITIVES: Final[tuple[type, ...]] = (bool, int, float, str)
_KEYS: Final[tuple[type, ...]] = (bool, int, float, JsProxy)


class _ToJs:
    """One ``to_js`` call: its options and the cache of containers already converted."""

    def __init__(
        self,
        *,
        pyproxies: Any,
        create_pyproxies: bool,
        dict_converter: Callable[..., Any] | None,
        default_converter: Callable[..., Any] | None,
        eager_converter: Callable[..., Any] | None,
    ) -> None:
        self.pyproxies = pyproxies
        self.create_pyproxies = create_pyproxies
        self.dict_converter = dict_converter
        self.plain_objects = dict_converter is OBJECT_FROM_ENTRIES
        self.default_converter = default_converter
        self.eager_converter = eager_converter
        self.cache: dict[int, Any] = {}

    def convert(self, value: Any, level: int) -> Any:
        kind = type(value)
        if kind is str or kind is bool or kind is float:
            return value
        if kind is int:
            return int_to_js(value)
        if value is None:
            return UNDEFINED
        if value is jsnull or isinstance(value, JsProxy):
            return value
        if self.eager_converter is not None:
            return _to_js_result(self.eager_converter(value, lambda v: self.convert(v, level), self.cache))
        if level == 0:
            return self.leaf(value)
        found = self.cache.get(id(value))
        if found is not None:
            return found
        return self.container(value, level - 1)

    def container(self, value: Any, inner: int) -> Any:
        if isinstance(value, _ARRAYS):
            array = JsArray([])
            self.cache[id(value)] = array
            items = array._items  # pyright: ignore[reportPrivateUsage]
            convert = self.convert
            for item in value:  # pyright: ignore[reportUnknownVariableType]
                kind = type(item)  # pyright: ignore[reportUnknownArgumentType]
                if (
                    kind is str
                    or kind is bool
                    or kind is float
                    or (kind is int and -MAX_SAFE_INTEGER < item < MAX_SAFE_INTEGER)
                ):
                    items.append(item)
                else:
                    items.append(convert(item, inner))
            return array
        if isinstance(value, dict):
            return self.mapping(value, inner)  # pyright: ignore[reportUnknownArgumentType]
        if isinstance(value, _SETS):
            return JsSet(self.convert(item, inner) for item in value)  # pyright: ignore[reportUnknownVariableType]
        if isinstance(value, _BYTES):
            return Uint8Array.copy_of(bytes(value))
        if isinstance(value, _PRIMITIVES):  # subclasses (an enum member): the plain value
            return self.convert(plain_value(value), inner + 1)
        if self.default_converter is not None:
            result = _to_js_result(
                self.default_converter(value, lambda v: self.convert(v, inner), self.cache)
            )
            self.cache[id(value)] = result
            return result
        return self.leaf(value)

    def mapping(self, value: dict[Any, Any], inner: int) -> Any:
        for key in value:
            if type(key) is not str and not (key is None or isinstance(key, _KEYS)):
                raise ConversionError(f"Cannot use {key!r} as a key for a Javascript Map")
        if self.plain_objects:
            obj = JsObject({})
            self.cache[id(value)] = obj
            props = obj._props  # pyright: ignore[reportPrivateUsage]
            convert = self.convert
            for k, v in value.items():
                kind = type(v)
                # Strings, booleans, floats and safe integers cross as themselves: no call each (`convert`).
                if not (
                    kind is str
                    or kind is bool
                    or kind is float
                    or (kind is int and -MAX_SAFE_INTEGER < v < MAX_SAFE_INTEGER)
                ):
                    v = convert(v, inner)
                props[k if type(k) is str else property_key(convert(k, inner))] = v
            return obj
        if self.dict_converter is not None:
            pairs = JsArray(
                [JsArray([self.convert(k, inner), self.convert(v, inner)]) for k, v in value.items()]
            )
            result = _to_js_result(self.dict_converter(pairs))
            self.cache[id(value)] = result
            return result
        js_map = JsMap({}, literal=True)
        self.cache[id(value)] = js_map
        for k, v in value.items():
            js_map._entries[self.convert(k, inner)] = self.convert(v, inner)  # pyright: ignore[reportPrivateUsage]
        return js_map

    def leaf(self, value: Any) -> Any:
        if not self.create_pyproxies:
            raise ConversionError("No conversion known for x.")  # Pyodide 0.28's text, as it is
        proxy = PyProxy(value)
        if self.pyproxies is not None:
            self.pyproxies.append(proxy)
        return proxy


def to_js(
    obj: Any,
    *,
    depth: int = -1,
    pyproxies: Any = None,
    create_pyproxies: bool = True,
    dict_converter: Callable[..., Any] | None = None,
    default_converter: Callable[..., Any] | None = None,
    eager_converter: Callable[..., Any] | None = None,
) -> Any:
    """Convert ``obj`` deeply to JS; answers what Python then sees of the result (a proxy or a primitive)."""
    kind = type(obj)
    if (
        kind is str
        or kind is float
        or kind is bool
        or (kind is int and -MAX_SAFE_INTEGER < obj < MAX_SAFE_INTEGER)
    ):
        return obj  # a primitive crosses as itself and reads back the same
    run = _ToJs(
        pyproxies=pyproxies,
        create_pyproxies=create_pyproxies,
        dict_converter=dict_converter,
        default_converter=default_converter,
        eager_converter=eager_converter,
    )
    return to_python(run.convert(obj, depth))


def plain_value(value: bool | int | float | str) -> bool | int | float | str:
    """The plain primitive a subclass instance (an enum member, a ``str`` subclass) stands for in JS."""
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    return str.__str__(value)


def _to_js_result(value: Any) -> Any:
    """A converter's answer as a JS value (Python objects it answers cross implicitly)."""
    if isinstance(value, JsProxy) or value is jsnull or value is UNDEFINED:
        return value
    if value is None:
        return UNDEFINED
    if isinstance(value, _PRIMITIVES):
        return int_to_js(value) if type(value) is int else value
    return PyProxy(value)


def _dict_key(js_key: Any, key: Any) -> Any:
    """A Map key as a ``dict`` key; an unhashable one is refused as Pyodide refuses it."""
    try:
        hash(key)
    except TypeError:
        kind = js_key.js_class if isinstance(js_key, JsProxy) else type(key).__name__
        raise js_error("Error", f"Cannot use key of type {kind} as a key to a Python dict") from None
    return key


_PLAIN: tuple[type, ...] = (str, int, bool)
"""What crosses into Python as itself (`to_python` answers the value, as for `jsnull`): kept without a call."""


class _ToPy:
    """One ``to_py`` call: its converter and the cache of objects already converted."""

    def __init__(self, default_converter: Callable[..., Any] | None) -> None:
        self.default_converter = default_converter
        self.cache: dict[int, Any] = {}

    def convert(self, value: Any, level: int) -> Any:
        kind = type(value)
        if kind in _PLAIN:
            return value
        if not isinstance(value, JsProxy) or kind is PyProxy:
            return to_python(value)
        if level == 0:
            return value
        found = self.cache.get(id(value), _NONE)
        if found is not _NONE:
            return found
        if kind is JsObject:
            result: dict[Any, Any] = {}
            self.cache[id(value)] = result
            props = value._props
            for name in ordered_keys(props):
                item = props[name]
                result[name] = (
                    item if type(item) in _PLAIN or item is jsnull else self.convert(item, level - 1)
                )
            return result
        if kind is JsArray:
            items: list[Any] = []
            self.cache[id(value)] = items
            for item in value._items:
                items.append(
                    item if type(item) in _PLAIN or item is jsnull else self.convert(item, level - 1)
                )
            return items
        return self.other(value, kind, level - 1)

    def other(self, value: Any, kind: type, inner: int) -> Any:
        if kind is JsMap:
            mapping: dict[Any, Any] = {}
            self.cache[id(value)] = mapping
            for k, v in value._entries.items():
                mapping[_dict_key(k, self.convert(k, inner))] = self.convert(v, inner)
            return mapping
        if kind is JsSet:
            return {self.convert(item, inner) for item in value._values}
        if kind is Uint8Array or kind is ArrayBuffer:
            return value.to_memoryview()
        if self.default_converter is not None:
            return self.default_converter(value, lambda v: self.convert(v, inner), self.cache)
        return value


_NONE = object()


def to_py(
    proxy: JsProxy,
    *,
    depth: int = -1,
    default_converter: Callable[..., Any] | None = None,
) -> Any:
    """Convert ``proxy`` deeply to Python objects."""
    return _ToPy(default_converter).convert(proxy, depth)
