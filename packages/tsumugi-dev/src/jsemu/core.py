# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""The JavaScript side as CPython holds it, and Pyodide's implicit crossing rules.

A JS value is held as a Python object: ``undefined`` is `UNDEFINED`, ``null`` is `jsnull`, booleans, strings
and numbers are ``bool``, ``str`` and ``int``/``float`` (an ``int`` only within ``Number.MAX_SAFE_INTEGER``),
a BigInt is `JsBigIntValue`, and every object is an instance of a `JsProxy` subclass: the object and the
proxy Python code sees are one instance, so identity holds across crossings. A Python object that reaches JS
without conversion becomes a `PyProxy` (borrowed for the length of a call unless made with ``create_proxy``).

Crossing into Python (`to_python`) follows Pyodide 0.28: ``undefined`` -> ``None``, ``null`` -> ``jsnull``,
numbers -> ``int`` when a safe integer else ``float``, BigInt -> ``int``, a PyProxy -> the object it wraps,
objects stay proxies. Crossing into JS (`to_js_implicit`): ``None`` -> ``undefined``, ``int`` past 2^53 ->
BigInt, proxies give back their object, anything else -> a borrowed PyProxy.
Sources: pyodide.org "Type translations" (0.28), Pyodide's ``src/core/python2js.c`` / ``js2python.c``.
"""

from __future__ import annotations

import functools
import keyword
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, Final

__all__ = [
    "MAX_SAFE_INTEGER",
    "MISSING",
    "UNDEFINED",
    "HostObject",
    "JsBigIntValue",
    "JsCallable",
    "JsException",
    "JsNull",
    "JsProxy",
    "PyProxy",
    "constructor_of",
    "int_to_js",
    "js_error",
    "jsnull",
    "to_js_implicit",
    "to_python",
]

MAX_SAFE_INTEGER: Final = 2**53 - 1


class _Undefined:
    __slots__ = ()

    def __repr__(self) -> str:
        return "undefined"

    def __bool__(self) -> bool:
        return False


UNDEFINED: Final = _Undefined()
"""JS ``undefined`` on the JS side (Python code never sees it: it reads ``None``)."""


class _Missing:
    __slots__ = ()


MISSING: Final = _Missing()
"""A property lookup that found nothing (distinct from a property holding ``undefined``)."""


class JsNull:
    """The type of `jsnull`, JS ``null`` as Python sees it (Pyodide 0.28 keeps it apart from ``None``)."""

    __slots__ = ()
    _instance: ClassVar[JsNull | None] = None

    def __new__(cls) -> JsNull:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "jsnull"

    def __bool__(self) -> bool:
        return False


jsnull: Final = JsNull()


class JsBigIntValue(int):
    """A JS BigInt on the JS side (Python code reads a plain ``int``)."""

    __slots__ = ()


def _number_to_python(value: float) -> int | float:
    if value.is_integer() and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        return int(value)
    return value


def int_to_js(value: int) -> int | JsBigIntValue:
    """A Python int as JS receives it: a Number strictly inside +-(2**53 - 1), a BigInt from there on (so
    2**53 - 1 itself is a BigInt: Pyodide 0.28's bound, checked by tests/ffi)."""
    return value if -MAX_SAFE_INTEGER < value < MAX_SAFE_INTEGER else JsBigIntValue(value)


def to_python(value: Any) -> Any:
    """A JS value as it reaches Python with no explicit conversion (Pyodide's implicit rules)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool:
        return value
    if kind is float:
        return _number_to_python(value)
    if value is UNDEFINED:
        return None
    if kind is JsBigIntValue:
        return int(value)
    if kind is PyProxy:
        return value.unwrap_for_python()
    if kind in _EXCEPTION_KINDS:
        return value.as_exception()  # an Error object: Pyodide's proxy of it is a JsException
    return value


_EXCEPTION_KINDS: set[type] = set()
"""The proxy classes whose objects cross into Python as a JsException (``crosses_as_exception``), noted as
each class is made: `to_python` asks every object, and a set answers faster than a failed attribute lookup."""


def to_js_implicit(value: Any, borrowed: list[PyProxy] | None = None) -> Any:
    """A Python value as it reaches JS with no explicit conversion.

    Anything but ``None``, ``bool``, ``int``, ``float``, ``str`` and proxies becomes a PyProxy; with
    ``borrowed`` given, it is a borrowed one, appended there to be destroyed when the call returns.
    """
    kind = type(value)
    if kind is str or kind is bool or kind is float:
        return value
    if kind is int:
        return int_to_js(value)
    if value is None:
        return UNDEFINED
    if isinstance(value, JsProxy) or value is jsnull:
        return value
    if isinstance(value, JsException):
        return value.js_error
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return to_js_implicit(int(value))
    if isinstance(value, str):
        return str(value)
    if isinstance(value, float):
        return float(value)
    proxy = PyProxy(value, borrowed=borrowed is not None, roundtrip=False)
    if borrowed is not None:
        borrowed.append(proxy)
    return proxy


class JsException(Exception):
    """A JS value thrown into Python (Pyodide's ``pyodide.ffi.JsException``): ``str`` is ``"Name: message"``.

    As in Pyodide, where every Error object's proxy is a JsException, an Error object read from JS is one
    too (`to_python`): its JS properties (``constructor``, ``toString``, ``stack``, ...) read and write through.
    """

    def __init__(self, js_error: Any, *_: Any) -> None:
        super().__init__(js_error)
        object.__setattr__(self, "js_error", js_error)

    @property
    def name(self) -> str:
        error = self.js_error
        return str(error.name) if isinstance(error, JsProxy) and hasattr(error, "name") else "Error"

    @name.setter
    def name(self, value: str) -> None:
        self.js_error.name = value

    @property
    def typeof(self) -> str:
        """``typeof`` of the error object."""
        return "object"

    @property
    def constructor(self) -> Any:
        """The error object's constructor."""
        return self.__getattr__("constructor")

    def __getattr__(self, name: str) -> Any:
        error = self.__dict__.get("js_error")
        if name.startswith("__") or not isinstance(error, JsProxy):
            raise AttributeError(name)
        return getattr(error, name)

    def __setattr__(self, name: str, value: Any) -> None:
        error = self.__dict__.get("js_error")
        if name.startswith("_") or name in ("js_error", "args") or not isinstance(error, JsProxy):
            super().__setattr__(name, value)
        elif name == "name":
            type(self).name.__set__(self, value)  # type: ignore[attr-defined]
        else:
            setattr(error, name, value)

    @property
    def message(self) -> str:
        error = self.js_error
        if isinstance(error, JsProxy) and hasattr(error, "message"):
            return str(error.message)
        return str(error)

    def __str__(self) -> str:
        error = self.js_error
        if isinstance(error, JsProxy):
            return error.to_string()
        return str(to_python(error))


def js_error(name: str, message: str) -> JsException:
    """A ``JsException`` for a new JS error object ``name`` with ``message`` (what a platform API throws)."""
    from jsemu.objects import make_error

    return make_error(name, message).as_exception()


class JsProxy:
    """A JS object as Python sees it (Pyodide's ``pyodide.ffi.JsProxy``).

    Subclasses implement the JS side: ``_js_get(name)`` answers a property's JS value or `MISSING`,
    ``_js_set``/``_js_delete``/``_js_keys`` the rest; ``js_class`` is the constructor's name.
    """

    __slots__ = ("__weakref__",)
    js_class: ClassVar[str] = "Object"
    js_typeof: ClassVar[str] = "object"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _named_as_pyodide_names_it(cls)
        if getattr(cls, "crosses_as_exception", False):
            _EXCEPTION_KINDS.add(cls)

    # -- the JS side -------------------------------------------------------------------------------------
    def _js_get(self, name: str) -> Any:
        return MISSING

    def _js_set(self, name: str, value: Any) -> None:
        raise js_error("TypeError", f"Cannot add property {name}, object is not extensible")

    def _js_delete(self, name: str) -> None:
        raise js_error("TypeError", f"Cannot delete property '{name}'")

    def _js_keys(self) -> list[str]:
        return []

    def _js_to_string(self) -> str:
        return f"[object {self.js_class}]"

    # -- what Python sees --------------------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = self._js_get(_js_name(name) if name.endswith("_") else name)  # `_js_name`, its call saved
        if value is MISSING:
            raise AttributeError(name)
        return to_python(value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        self._js_set(_js_name(name), to_js_implicit(value))

    def __delattr__(self, name: str) -> None:
        self._js_delete(_js_name(name))

    @property
    def typeof(self) -> str:
        """``typeof`` of the object."""
        return self.js_typeof

    @property
    def constructor(self) -> Any:
        """The object's constructor (``.name`` is what the Workers SDK dispatches on)."""
        # The SDK reads it up to 8 times per value it converts: a function already made is found with no call.
        found = _CONSTRUCTORS.get(self.js_class)
        return found if found is not None else constructor_of(self.js_class)

    @property
    def js_id(self) -> int:
        """An id unique to the JS object."""
        return id(self)

    def to_string(self) -> str:
        """``String(object)``."""
        return self._js_to_string()

    def to_py(self, *, depth: int = -1, default_converter: Callable[..., Any] | None = None) -> Any:
        """Convert deeply (objects to ``dict``, arrays to ``list``, ...); see `jsemu.convert.to_py`."""
        return _deep_to_py()(self, depth=depth, default_converter=default_converter)

    def as_object_map(self) -> Any:
        """The object's own properties as a mutable mapping (``JsProxy.as_object_map``)."""
        from jsemu.objects import ObjectMap

        return ObjectMap(self)

    def object_keys(self) -> Iterator[str]:
        """``Object.keys(object)``."""
        return iter(self._js_keys())

    def object_values(self) -> Iterator[Any]:
        """``Object.values(object)``, each converted implicitly."""
        return (to_python(self._js_get(key)) for key in self._js_keys())

    def object_entries(self) -> Iterator[tuple[str, Any]]:
        """``Object.entries(object)``, values converted implicitly."""
        return ((key, to_python(self._js_get(key))) for key in self._js_keys())

    def __dir__(self) -> list[str]:
        return sorted(set(self._js_keys()) | set(super().__dir__()))

    def __repr__(self) -> str:
        return self._js_to_string()

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __bool__(self) -> bool:
        return True


@functools.cache
def _deep_to_py() -> Callable[..., Any]:
    """`jsemu.convert.to_py`, imported at the first call (that module imports this one), then kept: an
    import statement in `JsProxy.to_py` itself would cost more than most conversions."""
    from jsemu.convert import to_py

    return to_py


def _js_name(name: str) -> str:
    """The JS property a Python attribute names: a keyword with one trailing ``_`` (``from_``) is the keyword."""
    if name.endswith("_") and keyword.iskeyword(name[:-1]):
        return name[:-1]
    return name


def _named_as_pyodide_names_it(cls: type) -> None:
    """Every proxy class reads as Pyodide's one C type: ``repr`` ``<class 'pyodide.ffi.JsProxy'>`` and
    CPython's messages ``'pyodide.ffi.JsProxy' object is not subscriptable`` (they print ``__name__``).
    Pyodide's ``__name__`` is ``JsProxy``; a Python class cannot have both (tests/ffi: NOT_EMULATED)."""
    cls.__name__ = "pyodide.ffi.JsProxy"
    cls.__qualname__ = "JsProxy"
    cls.__module__ = "pyodide.ffi"


_named_as_pyodide_names_it(JsProxy)

_CONSTRUCTORS: dict[str, JsCallable] = {}


def constructor_of(name: str) -> JsCallable:
    """The constructor function named ``name`` (one object per name; a global's own when registered)."""
    found = _CONSTRUCTORS.get(name)
    if found is None:
        found = _CONSTRUCTORS[name] = JsCallable(_not_constructible(name), name=name)
    return found


def register_constructor(constructor: JsCallable) -> None:
    """Make ``constructor`` what ``constructor_of(its name)`` answers (a global's own function)."""
    _CONSTRUCTORS[constructor.js_name] = constructor


def _not_constructible(name: str) -> Callable[..., Any]:
    def construct(*_: Any) -> Any:
        raise js_error("TypeError", "Illegal constructor")

    construct.__name__ = name
    return construct


class JsCallable(JsProxy):
    """A JS function (Pyodide's ``JsCallable``) whose body is Python taking and returning JS values.

    Called from Python, arguments cross implicitly (keyword arguments become one trailing object, as in
    Pyodide), borrowed PyProxies are destroyed when the call returns, and the result crosses back.
    """

    __slots__ = ("_construct", "_fn", "_static", "js_name")
    _fn: Callable[..., Any]
    _construct: Callable[..., Any] | None
    _static: dict[str, Any]
    js_name: str
    js_class: ClassVar[str] = "Function"
    js_typeof: ClassVar[str] = "function"

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        construct: Callable[..., Any] | None = None,
        static: dict[str, Any] | None = None,
    ) -> None:
        object.__setattr__(self, "_fn", fn)
        object.__setattr__(self, "_construct", construct)
        object.__setattr__(self, "_static", static or {})
        object.__setattr__(self, "js_name", name if name is not None else getattr(fn, "__name__", ""))

    @property
    def name(self) -> str:
        """The function's ``name`` (a plain attribute: the SDK reads ``constructor.name`` on every value)."""
        return self.js_name

    def _js_get(self, name: str) -> Any:
        if name == "name":
            return self.js_name
        return self._static.get(name, MISSING)

    def _js_set(self, name: str, value: Any) -> None:
        self._static[name] = value

    def _js_keys(self) -> list[str]:
        return list(self._static)

    def _js_to_string(self) -> str:
        return f"function {self.js_name}() {{ [native code] }}"

    def js_call(self, *args: Any) -> Any:
        """Call with JS values (from the JS side): no conversion."""
        return self._fn(*args)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        borrowed: list[PyProxy] = []
        js_args = _js_arguments(args, kwargs, borrowed)
        result = None
        try:
            result = self._fn(*js_args)
            return to_python(result)
        finally:
            _release_after(result, borrowed)

    def new(self, *args: Any, **kwargs: Any) -> Any:
        """``new F(...args)``."""
        if self._construct is None:
            raise js_error("TypeError", f"{self.js_name} is not a constructor")
        borrowed: list[PyProxy] = []
        js_args = _js_arguments(args, kwargs, borrowed)
        result = None
        try:
            result = self._construct(*js_args)
            return to_python(result)
        finally:
            _release_after(result, borrowed)

    def js_new(self, *args: Any) -> Any:
        """``new F(...args)`` with JS values (from the JS side)."""
        if self._construct is None:
            raise js_error("TypeError", f"{self.js_name} is not a constructor")
        return self._construct(*args)


def _js_arguments(args: tuple[Any, ...], kwargs: dict[str, Any], borrowed: list[PyProxy]) -> Sequence[Any]:
    """A Python call's arguments as the JS function receives them (keyword arguments: one trailing object)."""
    if not kwargs:
        for arg in args:
            kind = type(arg)
            if not (
                kind is str
                or kind is float
                or kind is bool
                or (kind is int and -MAX_SAFE_INTEGER < arg < MAX_SAFE_INTEGER)
                or isinstance(arg, JsProxy)
            ):
                break
        else:
            return args  # the common call: text, numbers, JS objects, all crossing as themselves
    js_args = [to_js_implicit(arg, borrowed) for arg in args]
    if kwargs:
        from jsemu.objects import JsObject

        js_args.append(JsObject({key: to_js_implicit(v, borrowed) for key, v in kwargs.items()}))
    return js_args


def _release_after(result: Any, borrowed: list[PyProxy]) -> None:
    """End a call's borrowed proxies: now, or when the promise it returned settles (Pyodide keeps the
    arguments of a call that answers a promise alive until then)."""
    if not borrowed:
        return
    subscribe = getattr(result, "_subscribe", None)
    if subscribe is not None and getattr(result, "_state", None) == 0:

        def release(_: Any) -> None:
            for proxy in borrowed:
                proxy.release_borrowed()

        subscribe(release, release)
        return
    for proxy in borrowed:
        proxy.release_borrowed()


class HostObject(JsProxy):
    """A platform object implemented in Python: members are the class's ``js_<name>`` attributes.

    A ``js_<name>`` method is a JS method (it receives and returns JS values); a ``js_<name>`` property is a
    data property. ``js_class`` names the constructor, which is what the SDK's wrappers dispatch on.
    """

    __slots__ = ()

    def _js_get(self, name: str) -> Any:
        attribute = "js_" + name
        member = getattr(type(self), attribute, MISSING)
        if member is MISSING:
            return MISSING
        if isinstance(member, property):
            return member.__get__(self)
        return JsCallable(getattr(self, attribute), name=name)

    def _js_keys(self) -> list[str]:
        return []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Pyodide gives a proxy ``__getitem__`` only when the object has a ``get`` method (``obj.get(key)``,
        # KeyError when that is undefined) and ``in`` through ``has``: set per class, so that other objects
        # stay not subscriptable and not iterable through ``__getitem__``.
        super().__init_subclass__(**kwargs)
        if "js_get" in cls.__dict__:
            cls.__getitem__ = _getitem_via_get  # type: ignore[attr-defined]
        if "js_has" in cls.__dict__:
            cls.__contains__ = _contains_via_has  # type: ignore[method-assign]


def _getitem_via_get(self: Any, key: Any) -> Any:
    value = self.js_get(to_js_implicit(key))
    if value is UNDEFINED:
        raise KeyError(key)
    return to_python(value)


def _contains_via_has(self: Any, key: object) -> bool:
    return bool(self.js_has(to_js_implicit(key)))


_DEBUG_HINT = "\nFor more information about the cause of this error, use `pyodide.setDebug(true)`"
"""Pyodide appends this to the errors of a destroyed proxy."""


class PyProxy(JsProxy):
    """A Python object on the JS side. Calling it calls the object; ``destroy`` ends it.

    Python code meets one only as ``create_proxy``'s result (Pyodide's ``JsDoubleProxy``); a borrowed
    proxy made for a call's argument reads back as the object itself and is destroyed when the call returns.
    """

    __slots__ = ("_borrowed", "_destroyed", "_obj", "_once", "_roundtrip")
    _obj: Any
    _borrowed: bool
    _destroyed: str | None
    _once: bool
    _roundtrip: bool
    js_class: ClassVar[str] = "PyProxy"

    def __init__(
        self, obj: Any, *, borrowed: bool = False, once: bool = False, roundtrip: bool = True
    ) -> None:
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_borrowed", borrowed)
        object.__setattr__(self, "_destroyed", None)
        object.__setattr__(self, "_once", once)
        object.__setattr__(self, "_roundtrip", roundtrip)

    @property
    def js_typeof(self) -> str:  # type: ignore[override]
        return "function" if callable(self._obj) else "object"

    def unwrap_for_python(self) -> Any:
        """What Python code receives when this PyProxy crosses back: the object, or this double proxy
        (``create_proxy``'s ``roundtrip``, on by default)."""
        if self._roundtrip:
            return self
        self._check_alive()
        return self._obj

    def unwrap(self) -> Any:
        """The wrapped Python object (``JsDoubleProxy.unwrap``)."""
        self._check_alive()
        return self._obj

    def release_borrowed(self) -> None:
        """End of the call that borrowed this proxy."""
        if self._destroyed is None:
            object.__setattr__(
                self,
                "_destroyed",
                "This borrowed proxy was automatically destroyed at the end of a function call. "
                "Try using create_proxy or create_once_callable." + _DEBUG_HINT,
            )

    def destroy(self) -> None:
        """Release the Python object (``PyProxy.destroy``; again is a no-op, as in Pyodide 0.28)."""
        if self._destroyed is None:
            gone = (
                "OnceProxy can only be called once"
                if self._once
                else "Object has already been destroyed" + _DEBUG_HINT
            )
            object.__setattr__(self, "_destroyed", gone)

    def _check_alive(self) -> None:
        if self._destroyed is not None:
            raise js_error("Error", self._destroyed)

    def js_call(self, *args: Any) -> Any:
        """JS calls the Python object: arguments cross into Python, the result back into JS."""
        self._check_alive()
        if self._once:
            object.__setattr__(self, "_destroyed", "OnceProxy can only be called once")
        result = self._obj(*[to_python(arg) for arg in args])
        return to_js_implicit(result)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._check_alive()
        return self._obj(*args, **kwargs)

    def _js_get(self, name: str) -> Any:
        if name == "destroy":
            return JsCallable(lambda: self.destroy() or UNDEFINED, name="destroy")
        if name == "getBuffer":
            return JsCallable(self._get_buffer, name="getBuffer")
        self._check_alive()
        if name.isdigit() and hasattr(self._obj, "__getitem__") and not isinstance(self._obj, str | dict):
            try:
                return to_js_implicit(self._obj[int(name)])
            except (IndexError, TypeError, KeyError):
                return UNDEFINED
        if hasattr(self._obj, name):
            return to_js_implicit(getattr(self._obj, name))
        return MISSING

    def _get_buffer(self, *_: Any) -> Any:
        from jsemu.objects import JsObject, Uint8Array

        self._check_alive()
        data = Uint8Array.copy_of(bytes(memoryview(self._obj)))
        return JsObject({"data": data, "release": JsCallable(lambda: UNDEFINED, name="release")})

    def _js_to_string(self) -> str:
        return str(self._obj)
