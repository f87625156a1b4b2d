# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""JS Promises (Pyodide's ``JsPromise``): awaitable from Python, settled by the platform's async work.

A promise made from a coroutine starts it at once (as JS starts the work when the function is called) when
an event loop runs, otherwise at the first ``await``. Awaiting answers the value crossed implicitly, or
raises: a JS value rejected with reaches Python as ``JsException``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Generator
from typing import Any, ClassVar

from jsemu.core import (
    MISSING,
    UNDEFINED,
    JsCallable,
    JsException,
    JsProxy,
    PyProxy,
    to_js_implicit,
    to_python,
)

__all__ = ["JsPromise"]

_PENDING, _FULFILLED, _REJECTED = 0, 1, 2


class JsPromise(JsProxy):
    """A Promise. ``await`` it from Python, or ``then``/``catch``/``finally_``."""

    __slots__ = ("_callbacks", "_pending_work", "_py_value", "_state", "_value")
    _state: int
    _value: Any
    _py_value: Any
    _callbacks: list[Any]
    _pending_work: Any
    js_class: ClassVar[str] = "Promise"

    def __init__(self) -> None:
        object.__setattr__(self, "_state", _PENDING)
        object.__setattr__(self, "_value", None)
        object.__setattr__(self, "_py_value", None)
        object.__setattr__(self, "_callbacks", [])
        object.__setattr__(self, "_pending_work", None)

    @classmethod
    def resolved(cls, value: Any) -> JsPromise:
        """A promise fulfilled with the JS value ``value`` (or following it, if it is a promise)."""
        promise = cls()
        promise.resolve(value)
        return promise

    @classmethod
    def rejected(cls, error: BaseException) -> JsPromise:
        """A promise rejected with ``error`` (a JsException for a JS reason)."""
        promise = cls()
        promise.reject(error)
        return promise

    @classmethod
    def from_awaitable(cls, work: Awaitable[Any]) -> JsPromise:
        """A promise settled by ``work``, whose result is a JS value.

        The work starts on the next turn of the loop, or at once inside the first ``await`` that comes
        before that (the common case, where it then runs in the awaiting task with no task of its own).
        """
        promise = cls()
        object.__setattr__(promise, "_pending_work", work)
        promise._start_soon()
        return promise

    def _start_soon(self) -> None:
        """Start the pending work on the next turn of the loop (no loop yet: at the first ``await``)."""
        try:  # not contextlib.suppress: a context manager costs more than the rest of making a promise
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        loop.call_soon(self._start_pending)

    def _start_pending(self) -> None:
        work = self._pending_work
        if work is not None:
            object.__setattr__(self, "_pending_work", None)
            self._start(work)

    def _start(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)

        def settle(done: asyncio.Future[Any]) -> None:
            if done.cancelled():
                self.reject(asyncio.CancelledError())
                return
            error = done.exception()
            if error is not None:
                self.reject(error)
            else:
                self.resolve(done.result())

        task.add_done_callback(settle)

    # -- settling (JS side) --------------------------------------------------------------------------------
    def resolve(self, value: Any) -> None:
        """Fulfil with a JS value; a promise value is followed, and so is a PyProxy of a Python awaitable (in
        Pyodide it is a thenable: the awaitable runs, a Python exception rejects as ``PythonError``)."""
        if self._state != _PENDING:
            return
        if isinstance(value, JsPromise):
            value._subscribe(self.resolve, self.reject)
            return
        if isinstance(value, PyProxy) and value._destroyed is None and hasattr(value._obj, "__await__"):
            self._adopt(value._obj)
            return
        self._settle(_FULFILLED, value)

    def _adopt(self, awaitable: Any) -> None:
        async def run() -> Any:
            try:
                return to_js_implicit(await awaitable)
            except JsException:
                raise
            except Exception as error:  # crosses into JS as a PythonError
                from jsemu.objects import python_error

                raise python_error(error) from error

        object.__setattr__(self, "_pending_work", run())
        self._start_soon()

    def reject(self, error: BaseException) -> None:
        """Reject with a Python exception (``JsException`` for a JS reason)."""
        if self._state == _PENDING:
            self._settle(_REJECTED, error)

    def _settle(self, state: int, value: Any) -> None:
        object.__setattr__(self, "_state", state)
        object.__setattr__(self, "_value", value)
        if state == _FULFILLED:
            # What Python will be given, taken now: Pyodide converts when the promise settles, before the
            # call's borrowed proxies are destroyed (a PyProxy value reads back as its object).
            try:
                object.__setattr__(self, "_py_value", (True, to_python(value)))
            except JsException as error:
                object.__setattr__(self, "_py_value", (False, error))
        callbacks, self._callbacks[:] = list(self._callbacks), []
        for on_fulfilled, on_rejected in callbacks:
            _soon(on_fulfilled if state == _FULFILLED else on_rejected, value)

    def _subscribe(
        self, on_fulfilled: Callable[[Any], Any], on_rejected: Callable[[BaseException], Any]
    ) -> None:
        self._start_pending()
        if self._state == _PENDING:
            self._callbacks.append((on_fulfilled, on_rejected))
        elif self._state == _FULFILLED:
            _soon(on_fulfilled, self._value)
        else:
            _soon(on_rejected, self._value)

    # -- Python side -----------------------------------------------------------------------------------------
    def __await__(self) -> Generator[Any, None, Any]:
        work = self._pending_work
        if work is not None:
            object.__setattr__(self, "_pending_work", None)
            try:
                value = yield from work.__await__()
            except BaseException as error:
                self.reject(error)
                raise
            if isinstance(value, JsPromise):
                self.resolve(value)
            else:
                self._settle(_FULFILLED, value)
                return to_python(value)
        if self._state != _PENDING:
            yield  # an await resumes after the microtasks already queued, even on a settled promise
        if self._state == _PENDING:
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self._callbacks.append(
                (
                    lambda value: future.done() or future.set_result(value),
                    lambda error: future.done() or future.set_exception(error),
                )
            )
            yield from future.__await__()
        if self._state == _REJECTED:
            raise self._value
        converted, result = self._py_value
        if not converted:
            raise result
        return result

    def then(
        self, on_fulfilled: Callable[..., Any] | None = None, on_rejected: Callable[..., Any] | None = None
    ) -> JsPromise:
        """``promise.then`` with Python callables (they receive Python values)."""
        following = JsPromise()

        def fulfilled(value: Any) -> None:
            if on_fulfilled is None:
                following.resolve(value)
                return
            _run_handler(following, on_fulfilled, to_python(value))

        def rejected(error: BaseException) -> None:
            if on_rejected is None:
                following.reject(error)
                return
            _run_handler(following, on_rejected, error)

        self._subscribe(fulfilled, rejected)
        return following

    def catch(self, on_rejected: Callable[..., Any]) -> JsPromise:
        """``promise.catch``."""
        return self.then(None, on_rejected)

    def finally_(self, on_finally: Callable[[], Any]) -> JsPromise:
        """``promise.finally``."""
        following = JsPromise()

        def fulfilled(value: Any) -> None:
            on_finally()
            following.resolve(value)

        def rejected(error: BaseException) -> None:
            on_finally()
            following.reject(error)

        self._subscribe(fulfilled, rejected)
        return following

    def _js_get(self, name: str) -> Any:
        if name == "then":
            return JsCallable(self._js_then, name="then")
        if name == "catch":
            return JsCallable(lambda on_rejected: self._js_then(UNDEFINED, on_rejected), name="catch")
        return MISSING

    def _js_then(self, on_fulfilled: Any = UNDEFINED, on_rejected: Any = UNDEFINED) -> JsPromise:
        from jsemu.objects import _call_js

        following = JsPromise()

        def fulfilled(value: Any) -> None:
            if on_fulfilled is UNDEFINED:
                following.resolve(value)
                return
            try:
                following.resolve(_call_js(on_fulfilled, value))
            except BaseException as error:
                following.reject(error)

        def rejected(error: BaseException) -> None:
            if on_rejected is UNDEFINED:
                following.reject(error)
                return
            reason = error.js_error if isinstance(error, JsException) else error
            try:
                following.resolve(_call_js(on_rejected, reason))
            except BaseException as again:
                following.reject(again)

        self._subscribe(fulfilled, rejected)
        return following


def _run_handler(following: JsPromise, handler: Callable[..., Any], argument: Any) -> None:
    try:
        result = handler(argument)
    except BaseException as error:
        following.reject(error)
        return
    following.resolve(to_js_implicit(result))


def _soon(callback: Callable[[Any], Any], value: Any) -> None:
    """Run ``callback(value)`` as a microtask would: after the current step, never inside ``resolve``."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        callback(value)
        return
    loop.call_soon(callback, value)
