# pyright: reportPrivateUsage=false
# (The runtime's half of the JS emulation reads jsemu's object internals; ADR-0097.)
"""Values between the runtime's Python implementations and the JS side the Workers SDK sees.

The runtime implements each platform object in Python and hands the SDK a JS-shaped facade (`jsemu`): what a
facade returns is built here from Python values (`platform_js`: a ``dict`` becomes a plain object, ``None``
JS ``null``, bytes an ArrayBuffer), what it receives is read back (`platform_py`). Between Workers and Durable
Objects a JS value is copied by V8's structured clone (`structured_clone`), which refuses a PyProxy
(``DataCloneError``), turns a function into an RPC stub, keeps RPC stubs as references and copies the rest.
Sources: workerd ``src/workerd/api/worker-rpc.c++`` (``serializeProxy``), the HTML structured clone algorithm.
"""

from __future__ import annotations

import asyncio
import datetime
import inspect
import math
import traceback
from collections.abc import Callable
from typing import Any, ClassVar, Final, cast

from jsemu.convert import plain_value
from jsemu.core import (
    MAX_SAFE_INTEGER,
    UNDEFINED,
    HostObject,
    JsBigIntValue,
    JsCallable,
    JsException,
    JsProxy,
    PyProxy,
    js_error,
    jsnull,
    to_js_implicit,
    to_python,
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
    make_error,
)
from jsemu.promise import JsPromise

__all__ = [
    "PROXY_REFUSED",
    "RpcReference",
    "await_js",
    "platform_js",
    "platform_py",
    "remote_js_error",
    "structured_clone",
]

PROXY_REFUSED: Final = (
    "Proxy could not be serialized because it is not a valid RPC receiver type. The Proxy must emulate "
    "either a plain object or an RpcTarget, as indicated by the Proxy's prototype chain."
)
"""workerd's message for a ``PyProxy`` (a dict, list, tuple, bytes, ... not converted) sent over RPC."""

_SCALARS: Final = frozenset({str, int, float, bool})
# The types `platform_js` asks `isinstance` about, made once (a union written in the call is made anew each time).
_ARRAYS: Final[tuple[type, ...]] = (list, tuple)
_BYTES: Final[tuple[type, ...]] = (bytes, bytearray, memoryview)
_PRIMITIVES: Final[tuple[type, ...]] = (bool, int, float, str)


class RpcReference(HostObject):
    """A platform object that crosses RPC by reference (an RPC stub, a Service Binding, a DO stub)."""

    __slots__ = ()


def platform_js(value: Any) -> Any:
    """A Python value of the runtime's as the JS value a platform API returns."""
    kind: Any = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is str or kind is bool:
        return value
    if kind is int:
        return value if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else float(value)
    if kind is float:
        return value
    if value is None:
        return jsnull
    if isinstance(value, JsProxy) or value is UNDEFINED or value is jsnull:
        return value
    if isinstance(value, dict):
        return JsObject({str(k): platform_js(v) for k, v in value.items()})  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if isinstance(value, _ARRAYS):
        return JsArray([platform_js(v) for v in value])  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, _BYTES):
        return ArrayBuffer(bytearray(cast(bytes, value)))
    if isinstance(value, datetime.datetime):
        return JsDate(value.timestamp() * 1000)
    if isinstance(value, _PRIMITIVES):
        return platform_js(plain_value(value))
    raise TypeError(f"the runtime has no JS value for {type(value).__name__}")


def platform_py(value: Any) -> Any:
    """A JS value a platform API received, as the runtime's Python implementation takes it."""
    kind: Any = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind in _SCALARS:
        return value
    if value is jsnull or value is UNDEFINED or value is None:
        return None
    if kind is JsBigIntValue:
        return int(value)
    if kind is JsObject:
        return {k: v if type(v) in _SCALARS else platform_py(v) for k, v in value._props.items()}
    if kind is JsArray:
        return [v if type(v) in _SCALARS else platform_py(v) for v in value._items]
    if kind is Uint8Array or kind is ArrayBuffer:
        return value.to_bytes()
    if kind is JsDate:
        return datetime.datetime.fromtimestamp(value._ms / 1000)
    if kind is PyProxy:
        return value._obj
    return value


def structured_clone(value: Any, where: str) -> Any:
    """Copy a JS value across an RPC boundary (raises the ``DataCloneError`` workerd would)."""
    kind: Any = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind in _SCALARS or value is jsnull or value is UNDEFINED or kind is JsBigIntValue:
        return value
    # Scalars and null in an object or array are kept without a call each (they copy as themselves).
    if kind is JsObject:
        return JsObject(
            {
                k: v if type(v) in _SCALARS or v is jsnull else structured_clone(v, where)
                for k, v in value._props.items()
            }
        )
    if kind is JsArray:
        return JsArray(
            [v if type(v) in _SCALARS or v is jsnull else structured_clone(v, where) for v in value._items]
        )
    return _clone_object(value, where)


def _clone_object(value: Any, where: str) -> Any:
    if isinstance(value, JsMap):
        return JsMap(
            {structured_clone(k, where): structured_clone(v, where) for k, v in value._entries.items()}
        )
    if isinstance(value, JsSet):
        return JsSet(structured_clone(v, where) for v in value._values)
    if isinstance(value, Uint8Array):
        return Uint8Array.copy_of(value.to_bytes())
    if isinstance(value, ArrayBuffer):
        return ArrayBuffer(bytearray(value.to_bytes()))
    if isinstance(value, JsDate):
        return JsDate(value._ms)
    if isinstance(value, JsError):
        return _clone_error(value, where)
    if isinstance(value, RpcReference):
        return value
    if isinstance(value, PyProxy):
        if callable(value._obj):
            return function_stub(value)
        raise data_clone_error(f"{PROXY_REFUSED} ({where}: a PyProxy of {type(value._obj).__name__})")
    if isinstance(value, JsCallable):
        return function_stub(value)
    if isinstance(value, JsProxy) and value.js_class in ("Request", "Response"):
        return cast(Any, value).js_clone()
    kind_name = value.js_class if isinstance(value, JsProxy) else type(value).__name__
    raise data_clone_error(
        f'Could not serialize object of type "{kind_name}". This type does not support serialization.'
    )


class _DomException(JsError):
    """A ``DOMException`` (workerd's ``DataCloneError`` is one): ``code``, ``name`` and ``message`` are own keys."""

    __slots__ = ()

    @property
    def js_class(self) -> str:
        return "DOMException"

    def _js_keys(self) -> list[str]:
        return ["code", "name", "message", *super()._js_keys()[1:]]


DATA_CLONE_ERR: Final = 25
"""``DOMException.DATA_CLONE_ERR``, the ``code`` of a ``DataCloneError``."""


def data_clone_error(message: str) -> JsException:
    """workerd's refusal of a value that cannot cross RPC: a ``DOMException`` named ``DataCloneError``."""
    return JsException(_DomException("DataCloneError", message, {"code": DATA_CLONE_ERR}))


def _clone_error(error: JsError, where: str) -> JsError:
    """An error copied across RPC: its name, message and own properties (the class of a DOMException too)."""
    name, message = str(to_python(error._js_get("name"))), str(to_python(error._js_get("message")))
    extra = {key: structured_clone(error._js_get(key), where) for key in error._js_keys()}
    if isinstance(error, _DomException):
        return _DomException(name, message, {k: v for k, v in extra.items() if k not in ("name", "message")})
    return make_error(name, message, extra)


class _FunctionStub(RpcReference):
    """A function received over RPC: calling it calls the original across the boundary."""

    __slots__ = ("_target",)
    _target: Any
    js_typeof = "function"

    def __init__(self, target: Any) -> None:
        object.__setattr__(self, "_target", target)

    js_class: ClassVar[str] = "Function"

    def js_call(self, *args: Any) -> Any:
        """Call the original with copies of ``args``; a promise of a copy of its result."""
        sent = [structured_clone(arg, f"args[{i}]") for i, arg in enumerate(args)]

        async def call() -> Any:
            await asyncio.sleep(0)  # a call across RPC: other events may run meanwhile
            try:
                result = self._target.js_call(*sent)
                result = await await_js(result)
                answer = structured_clone(result, "result")
            except Exception as exc:
                raise remote_js_error(exc) from None
            await asyncio.sleep(0)
            return answer

        return JsPromise.from_awaitable(call())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        borrowed: list[PyProxy] = []
        js_args = [to_js_implicit(arg, borrowed) for arg in args]
        try:
            return to_python(self.js_call(*js_args))
        finally:
            for proxy in borrowed:
                proxy.release_borrowed()


def function_stub(target: Any) -> _FunctionStub:
    """The RPC stub a function becomes on the other side."""
    return _FunctionStub(target)


async def await_js(value: Any) -> Any:
    """Settle a JS value the way ``await`` in JS would: a promise, or a PyProxy of a Python awaitable."""
    if isinstance(value, JsPromise):
        try:
            await value
        except JsException:
            raise
        return value._value
    if isinstance(value, PyProxy) and inspect.isawaitable(value._obj):
        return to_js_implicit(await value._obj)
    return value


def remote_js_error(exc: BaseException) -> JsException:
    """What the caller sees of an exception raised by the callee.

    A JS error keeps its name and message. A Python exception leaves the callee as Pyodide's ``PythonError``,
    whose message is the formatted traceback ending with the exception's ``<qualified type>: <message>`` line.
    """
    if isinstance(exc, JsException):
        error = exc.js_error
        if isinstance(error, JsError):
            return JsException(_remote(_clone_error(error, "error")))
        if isinstance(error, JsObject):
            return JsException(_remote(structured_clone(error, "error")))
        # A thrown primitive arrives as an Error whose message is its text (tests/shapes: throwsString).
        return JsException(_remote(make_error("Error", str(to_python(error)))))
    return JsException(_remote(make_error("PythonError", "".join(traceback.format_exception(exc)))))


def _remote(error: Any) -> Any:
    """workerd marks what was thrown across RPC with an own ``remote: true`` (tests/shapes records it)."""
    error._js_set("remote", True)
    return error


def js_callback(fn: Any) -> Callable[..., Any]:
    """A JS function value as something Python can call with JS values (a JsCallable or a PyProxy)."""
    if isinstance(fn, JsCallable | PyProxy | _FunctionStub):
        return fn.js_call
    raise js_error("TypeError", "The callback must be a function")


_ = math
