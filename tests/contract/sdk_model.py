"""The real SDK's conversion rules, run on CPython over a tiny model of ``js`` and ``pyodide.ffi``.

`load_real_rpc` executes the wheel's ``workers/rpc.py`` (and the modules it imports) under a private package
name, with stub ``js`` / ``pyodide`` / ``_pyodide_entrypoint_helper`` modules present only while it loads,
so it never meets the imitation called ``workers``. The stubs model just what ``python_to_rpc`` and
``python_from_rpc`` touch, each rule from a public source:

- ``to_js``: ``None`` becomes ``undefined``; ``str``/``int``/``float``/``bool``/``bytes`` stay as they are
  (number and buffer representations are Pyodide's business and not compared); ``dict`` goes through the
  ``dict_converter`` as ``[key, value]`` pairs, ``list``/``tuple`` become arrays, ``set`` a JS ``Set``;
  anything else is handed to ``default_converter``, and a Python object it returns becomes a ``PyProxy``
  (Pyodide's "Type conversions" page: ``to_js`` and its ``default_converter``).
- ``Object.fromEntries`` names each property with ECMAScript ``ToPropertyKey``: ``true``, ``undefined``,
  ``1`` for the keys ``True``, ``None``, ``1``.
- ``js.Date.new(ms)`` keeps ``TimeClip(ms)``: the time value truncated toward zero (ECMAScript ``TimeClip``).
- ``js.Error.new(message).toString()`` is ``"Error: message"``, or ``"Error"`` when the message is empty
  (ECMAScript ``Error.prototype.toString``).
- workerd's RPC serialiser clones plain objects, arrays, sets, dates and errors, turns a function into a stub
  and refuses a non-function ``PyProxy`` (issue 9, item 4).
- ``to_py`` turns objects into ``dict``, arrays into ``list``, sets into ``set``, leaves ``null`` as
  ``jsnull`` and hands other objects (``Date``, ``Error``) to ``default_converter``.
"""

from __future__ import annotations

import math
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from typing import Any

import sdk_wheel

PACKAGE = "_tsumugi_real_workers_sdk"


class _Constructor:
    def __init__(self, name: str) -> None:
        self.name = name


class JsValue:
    """A JS object in the model; ``constructor.name`` is what the SDK dispatches on."""

    constructor = _Constructor("Object")

    def to_py(self, *, default_converter: Callable[..., Any] | None = None) -> Any:
        return to_py(self, default_converter)


class _Null:
    def __repr__(self) -> str:
        return "jsnull"


class _Undefined:
    def __repr__(self) -> str:
        return "undefined"


jsnull = _Null()
undefined = _Undefined()


class JsObject(JsValue):
    def __init__(self, entries: dict[str, Any]) -> None:
        self.entries = entries


class JsArray(JsValue):
    constructor = _Constructor("Array")

    def __init__(self, items: list[Any]) -> None:
        self.items = items


class JsSet(JsValue):
    constructor = _Constructor("Set")

    def __init__(self, items: list[Any]) -> None:
        self.items = items


class JsDate(JsValue):
    constructor = _Constructor("Date")

    def __init__(self, ms: float) -> None:
        self.ms = math.trunc(ms)  # TimeClip: ToIntegerOrInfinity truncates toward zero

    def getTime(self) -> int:
        return self.ms


class JsError(JsValue):
    constructor = _Constructor("Error")

    def __init__(self, message: str) -> None:
        self.message = message

    def toString(self) -> str:
        return f"Error: {self.message}" if self.message else "Error"


class JsFunction(JsValue):
    """What the receiver of a function gets over workerd RPC: a callable stub."""

    constructor = _Constructor("Function")

    def __call__(self, *args: Any) -> Any:
        raise NotImplementedError("model: calling an RPC stub is not modelled")


class PyProxy:
    """A Python object as JS sees it (``create_proxy`` or an unconvertible value)."""

    def __init__(self, target: object) -> None:
        self.target = target


class DataCloneError(Exception):
    """workerd's serialiser refused a value."""


def property_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is undefined:
        return "undefined"
    if key is jsnull:
        return "null"
    if isinstance(key, int):
        return str(key)
    raise NotImplementedError(f"model: ToPropertyKey of {type(key).__name__} is not modelled")


def to_js(
    value: Any,
    *,
    default_converter: Callable[..., Any] | None = None,
    dict_converter: Callable[[list[list[Any]]], Any] | None = None,
    **_options: Any,
) -> Any:
    def convert(v: Any) -> Any:
        return to_js(v, default_converter=default_converter, dict_converter=dict_converter)

    if value is None:
        return undefined
    if value is jsnull or isinstance(value, str | int | float | bytes | JsValue | PyProxy):
        return value
    if isinstance(value, dict):
        pairs = [[convert(k), convert(v)] for k, v in value.items()]  # pyright: ignore[reportUnknownVariableType]
        return dict_converter(pairs) if dict_converter else JsObject({property_key(k): v for k, v in pairs})
    if isinstance(value, list | tuple):
        return JsArray([convert(v) for v in value])  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, set):
        return JsSet([convert(v) for v in value])  # pyright: ignore[reportUnknownVariableType]
    if default_converter is None:
        return PyProxy(value)
    converted = default_converter(value, convert, {})
    if converted is None or isinstance(converted, str | int | float | bytes | JsValue | PyProxy | _Null):
        return converted
    return PyProxy(converted)


def _from_entries(pairs: list[list[Any]]) -> JsObject:
    return JsObject({property_key(k): v for k, v in pairs})


def clone(value: Any) -> Any:
    """workerd's serialisation of an RPC argument or result."""
    if isinstance(value, PyProxy):
        if callable(value.target):
            return JsFunction()
        raise DataCloneError(
            f"Could not serialize object of type {type(value.target).__name__!r} (a PyProxy)"
        )
    if isinstance(value, JsObject):
        return JsObject({k: clone(v) for k, v in value.entries.items()})
    if isinstance(value, JsArray):
        return JsArray([clone(v) for v in value.items])
    if isinstance(value, JsSet):
        return JsSet([clone(v) for v in value.items])
    return value


def to_py(value: Any, default_converter: Callable[..., Any] | None) -> Any:
    def convert(v: Any) -> Any:
        return to_py(v, default_converter)

    if value is undefined:
        return None
    if isinstance(value, JsObject):
        return {k: convert(v) for k, v in value.entries.items()}
    if isinstance(value, JsArray):
        return [convert(v) for v in value.items]
    if isinstance(value, JsSet):
        return {convert(v) for v in value.items}
    if isinstance(value, JsValue) and default_converter is not None:
        return default_converter(value, convert, {})
    return value


def _create_proxy(obj: object, **_options: Any) -> PyProxy:
    return PyProxy(obj)


def _unmodelled(module: str) -> Callable[[str], Any]:
    def missing(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)

        def fail(*_args: Any, **_kwargs: Any) -> Any:
            raise NotImplementedError(f"model: {module}.{name} is not modelled")

        return fail

    return missing


class _JsClass:
    def __init__(self, new: Callable[..., Any]) -> None:
        self.new = new


def _stub_modules() -> dict[str, types.ModuleType]:
    js = types.ModuleType("js")
    js.Object = types.SimpleNamespace(fromEntries=_from_entries)  # type: ignore[attr-defined]
    js.Date = _JsClass(JsDate)  # type: ignore[attr-defined]
    js.Error = _JsClass(JsError)  # type: ignore[attr-defined]
    js.Array = _JsClass(lambda: JsArray([]))  # type: ignore[attr-defined]
    js.__getattr__ = _unmodelled("js")  # type: ignore[attr-defined]
    ffi = types.ModuleType("pyodide.ffi")
    ffi.JsProxy = JsValue  # type: ignore[attr-defined]
    ffi.JsException = type("JsException", (Exception,), {})  # type: ignore[attr-defined]
    ffi.JsBuffer = type("JsBuffer", (JsValue,), {})  # type: ignore[attr-defined]
    ffi.jsnull = jsnull  # type: ignore[attr-defined]
    ffi.to_js = to_js  # type: ignore[attr-defined]
    ffi.create_proxy = _create_proxy  # type: ignore[attr-defined]
    ffi.__getattr__ = _unmodelled("pyodide.ffi")  # type: ignore[attr-defined]
    http = types.ModuleType("pyodide.http")
    http.FetchResponse = type("FetchResponse", (), {})  # type: ignore[attr-defined]
    http.pyfetch = _unmodelled("pyodide.http")("pyfetch")  # type: ignore[attr-defined]
    pyodide = types.ModuleType("pyodide")
    pyodide.__path__ = []  # type: ignore[attr-defined]
    pyodide.__version__ = "0.28.0"  # type: ignore[attr-defined]
    pyodide.ffi = ffi  # type: ignore[attr-defined]
    pyodide.http = http  # type: ignore[attr-defined]
    helper = types.ModuleType("_pyodide_entrypoint_helper")
    helper.__getattr__ = _unmodelled("_pyodide_entrypoint_helper")  # type: ignore[attr-defined]
    return {"js": js, "pyodide": pyodide, "pyodide.ffi": ffi, "pyodide.http": http,
            "_pyodide_entrypoint_helper": helper}  # fmt: skip


class _WheelFinder(MetaPathFinder, Loader):
    """Finds ``PACKAGE.<name>`` as ``workers/<name>.py`` of the wheel."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> ModuleSpec | None:
        if not fullname.startswith(PACKAGE + "."):
            return None
        source = "workers/" + fullname.removeprefix(PACKAGE + ".").replace(".", "/") + ".py"
        if source not in sdk_wheel.sources():
            return None
        spec = ModuleSpec(fullname, self, origin=f"{sdk_wheel.pin().name}:{source}")
        spec.has_location = False
        return spec

    def exec_module(self, module: types.ModuleType) -> None:
        assert module.__spec__ is not None
        assert module.__spec__.origin is not None
        source = module.__spec__.origin.split(":", 1)[1]
        exec(compile(sdk_wheel.sources()[source], source, "exec"), module.__dict__)


@contextmanager
def _isolated_import() -> Iterator[None]:
    """Stubs, the wheel's finder and the private package exist only inside this block."""
    stubs = _stub_modules()
    package = types.ModuleType(PACKAGE)
    package.__path__ = []
    saved = {name: sys.modules.get(name) for name in stubs}
    finder = _WheelFinder()
    sys.modules.update(stubs)
    sys.modules[PACKAGE] = package
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def load_real_rpc() -> types.ModuleType:
    """The wheel's ``workers/rpc.py``, loaded over the model (its imports resolve inside the wheel)."""
    import importlib

    with _isolated_import():
        return importlib.import_module(PACKAGE + ".rpc")
