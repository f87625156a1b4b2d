"""What crosses between Python and JavaScript when nothing converts it: Pyodide's implicit rules, as workerd sees them.

On Cloudflare a value the Workers SDK does not convert (an argument to a raw JsProxy such as ``ctx.exports.X``
or a function received over RPC, the return value of a Python callback called from JS) follows Pyodide's
implicit translation: only immutable values convert (``None``, ``bool``, ``int``, ``float``, ``str``); any other
Python object becomes a ``PyProxy``, which workerd's RPC serialiser refuses with a ``DataCloneError``
(a Python callable becomes a function stub instead). In the other direction a JS object, array or typed
array arrives as a ``JsProxy``: not a ``dict``, not subscriptable, converted only by ``to_py()`` (or the SDK's
``python_from_rpc``). Errors thrown in JS arrive as ``JsException`` (``str`` is ``"<name>: <message>"``).

Sources: Pyodide's type translations (docs/usage/type-conversions.md: implicit conversions, proxying);
workerd ``src/workerd/api/worker-rpc.c++`` (``RpcSerializerExternalHandler::serializeProxy``);
Pyodide ``src/py/_pyodide/_core_docs.py`` (``JsException.__str__``). See ADR-0042.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final, cast

__all__ = [
    "MAX_SAFE_INTEGER",
    "PROXY_REFUSED",
    "JsException",
    "JsProxy",
    "data_clone_error",
    "from_js_implicit",
    "to_js_implicit",
]

MAX_SAFE_INTEGER: Final = 2**53 - 1
"""``Number.MAX_SAFE_INTEGER``: a larger Python ``int`` becomes a JS ``BigInt`` (Pyodide)."""

PROXY_REFUSED: Final = (
    "Proxy could not be serialized because it is not a valid RPC receiver type. The Proxy must emulate "
    "either a plain object or an RpcTarget, as indicated by the Proxy's prototype chain."
)
"""workerd's message for a ``PyProxy`` (a dict, list, tuple, bytes, ... not converted) sent over RPC."""

_IMPLICIT: Final = frozenset({type(None), bool, int, float, str})


class JsException(Exception):
    """A JavaScript error as Python code sees it (Pyodide's ``pyodide.ffi.JsException``).

    Attributes:
        name: The JS error's name (``TypeError``, ``DataCloneError``, ``PythonError``, ...).
        message: Its message; for a Python exception raised across RPC, the whole Python traceback.
    """

    def __init__(self, name: str, message: str) -> None:
        super().__init__(name, message)
        self.name = name
        self.message = message

    def __str__(self) -> str:
        return f"{self.name}: {self.message}"


def data_clone_error(where: str, value: object) -> JsException:
    """The error workerd throws when ``value`` (a ``PyProxy`` here) is serialised for RPC."""
    return JsException("DataCloneError", f"{PROXY_REFUSED} ({where}: a PyProxy of {type(value).__name__})")


class JsProxy:
    """A JS object, array or typed array that reached Python unconverted.

    Attribute access reads an object's properties (converted implicitly again); arrays support ``len``,
    iteration and indexing; nothing is a ``dict``. ``to_py()`` converts deeply: objects to ``dict``, arrays to
    ``list``, typed arrays to ``memoryview``.
    """

    __slots__ = ("_js",)
    _js: Any

    def __init__(self, js: Any) -> None:
        object.__setattr__(self, "_js", js)

    @property
    def js_value(self) -> Any:
        """The JS value, in the runtime's representation (what `workers.rpc.to_js` produces)."""
        return self._js

    def to_py(self) -> Any:
        """The value as Python objects (Pyodide's ``JsProxy.to_py``)."""
        return _to_py(self._js)

    def __getattr__(self, name: str) -> Any:
        js = self._js
        if isinstance(js, dict) and not name.startswith("__"):
            properties = cast(dict[str, Any], js)
            if name in properties:
                return from_js_implicit(properties[name])
        raise AttributeError(name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError("the local runtime's JsProxy is read-only")

    def __len__(self) -> int:
        js: Any = self._js
        if isinstance(js, list | bytes):
            return len(cast(bytes, js))
        raise TypeError("object of type 'pyodide.ffi.JsProxy' has no len()")

    def __iter__(self) -> Iterator[Any]:
        js: Any = self._js
        if isinstance(js, list):
            return (from_js_implicit(v) for v in cast(list[Any], js))
        raise TypeError("'pyodide.ffi.JsProxy' object is not iterable")

    def __getitem__(self, index: int) -> Any:
        js: Any = self._js
        if isinstance(js, list):
            return from_js_implicit(cast(list[Any], js)[index])
        raise TypeError("'pyodide.ffi.JsProxy' object is not subscriptable")

    def __repr__(self) -> str:
        js: Any = self._js
        kind = "Array" if isinstance(js, list) else "Uint8Array" if isinstance(js, bytes) else "Object"
        return f"<JsProxy {kind}>"


def _to_py(js: Any) -> Any:
    if isinstance(js, dict):
        return {k: _to_py(v) for k, v in cast(dict[str, Any], js).items()}
    if isinstance(js, list):
        return [_to_py(v) for v in cast(list[Any], js)]
    if isinstance(js, bytes):
        return memoryview(js)
    return js


def to_js_implicit(value: Any, where: str) -> Any:
    """``value`` as it leaves Python with no conversion, ready to cross RPC; refuses what workerd refuses.

    Immutable values convert; a `JsProxy` gives back its JS value; a callable crosses as a function stub
    (returned unchanged: the runtime's RPC makes the stub). Anything else would be a ``PyProxy``:
    ``DataCloneError``.
    """
    if type(value) in _IMPLICIT or isinstance(value, JsProxy):
        return value.js_value if isinstance(value, JsProxy) else value
    if isinstance(value, str | int | float):  # a subclass (an enum member): JS has only the plain value
        return value
    if callable(value) and not isinstance(value, type):
        return value
    raise data_clone_error(where, value)


def from_js_implicit(js: Any) -> Any:
    """A JS value (the runtime's representation) as Python receives it with no conversion."""
    if isinstance(js, dict | list | bytes):
        return JsProxy(js)
    return js
