"""FFI cases: promises and awaiting in both directions, and errors that cross through them."""

from __future__ import annotations

from typing import Any

import js
from ffi_case import case
from ffi_describe import Outcome, attempt, raised
from pyodide.ffi import JsException, create_once_callable, create_proxy, jsnull


def _boom(*_args: Any) -> Any:
    raise ValueError("boom")


def _python_error_in_js(error: Any) -> Any:
    """A Python exception after a trip through JS: a PythonError whose message is a traceback (file names and
    lines differ between the two worlds, so only its last line is kept) and whose ``type`` names the class."""
    message = str(error.message).rstrip().splitlines()
    return [type(error).__name__, error.name, getattr(error, "type", None), message[-1] if message else None]


async def _outcome(awaitable: Any) -> Any:
    """The awaited value, or a description of what awaiting raised."""
    try:
        return await awaitable
    except Exception as error:  # the case records whatever crosses
        return Outcome(raised(error))


@case
async def await_resolved_primitives() -> Any:
    return [
        await js.Promise.resolve(None),
        await js.Promise.resolve(jsnull),
        await js.Promise.resolve(1.5),
        await js.Promise.resolve(2**60),
        await js.Promise.resolve("s"),
    ]


@case
async def await_resolved_js_object() -> Any:
    return await js.Promise.resolve(js.JSON.parse('{"a": [1]}'))


@case
async def await_resolved_python_list_is_kept_alive() -> Any:
    value = [1, 2]
    back = await js.Promise.resolve(value)
    return [back is value, back]


@case
async def promise_call_result_shape() -> Any:
    pending = js.Promise.resolve(1)
    shape = [
        type(pending).__qualname__,
        hasattr(pending, "then"),
        callable(pending.then),
        hasattr(pending, "__await__"),
    ]
    await pending
    return shape


@case
async def await_rejected_error() -> Any:
    return await _outcome(js.Promise.reject(js.Error.new("boom")))


@case
async def await_rejected_type_error() -> Any:
    return await _outcome(js.Promise.reject(js.TypeError.new("bad input")))


@case
async def await_rejected_with_non_errors_never_settles() -> Any:
    # Pyodide 0.28 hands the rejection value to Future.set_exception, which refuses a str or null ("invalid
    # exception object", an unhandled rejection in JS): the awaiting coroutine would wait forever. So the case
    # lets every queued reaction run (a later promise settles after them) and looks at the futures instead.
    rejected = [
        js.Promise.reject("plain text"),
        js.Promise.reject(jsnull),
        js.Promise.reject(js.Error.new("e")),
    ]
    await js.Promise.resolve(None)
    await js.Promise.resolve(None)
    settled = [future.done() for future in rejected]
    await _outcome(rejected[2])
    return settled


@case
async def await_rejection_is_jsexception_subclass() -> Any:
    try:
        await js.Promise.reject(js.RangeError.new("out"))
    except JsException as error:
        return [isinstance(error, Exception), error.name, error.message]
    return "not raised"


@case
async def promise_new_with_once_callable_executor() -> Any:
    return await js.Promise.new(create_once_callable(lambda resolve, reject: resolve(5)))


@case
async def promise_new_rejected_by_executor() -> Any:
    return await _outcome(
        js.Promise.new(create_once_callable(lambda resolve, reject: reject(js.Error.new("no"))))
    )


@case
async def promise_new_executor_raises() -> Any:
    try:
        await js.Promise.new(create_once_callable(_boom))
    except JsException as error:
        return _python_error_in_js(error)
    return "not raised"


@case
async def promise_new_with_plain_lambda_executor() -> Any:
    return await js.Promise.new(lambda resolve, reject: resolve("sync executor"))


@case
async def promise_then_with_python_callback() -> Any:
    return await js.Promise.resolve(2).then(lambda value: value * 10)


@case
async def promise_then_callback_raises() -> Any:
    return await _outcome(js.Promise.resolve(2).then(_boom))


@case
async def promise_catch_with_python_callback() -> Any:
    return await js.Promise.reject(js.Error.new("e")).catch(lambda error: ["caught", error.message])


@case
async def promise_all_over_python_list() -> Any:
    return await js.Promise.all([1, jsnull, "x"])


@case
async def promise_all_with_python_future_inside() -> Any:
    return await _outcome(js.Promise.all([1, js.Promise.resolve(2)]))


@case
async def python_coroutine_is_a_thenable() -> Any:
    async def five() -> int:
        return 5

    return await js.Promise.resolve(five())


@case
async def python_coroutine_error_rejects() -> Any:
    async def fail() -> int:
        raise KeyError("inner")

    try:
        await js.Promise.resolve(fail())
    except JsException as error:
        return _python_error_in_js(error)
    return "not raised"


@case
async def await_non_promise_proxy_raises() -> Any:
    async def wait() -> Any:
        return await js.Object.new()

    return await _outcome(wait())


@case
async def queue_microtask_runs_after_current_task() -> Any:
    calls: list[str] = []
    js.queueMicrotask(create_once_callable(lambda: calls.append("microtask")))
    before = list(calls)
    await js.Promise.resolve(None)
    return [before, calls]


@case
async def create_proxy_callback_used_by_a_promise() -> Any:
    proxy = create_proxy(lambda value: value + 1)
    try:
        return await js.Promise.resolve(1).then(proxy)
    finally:
        proxy.destroy()


@case
async def awaiting_twice() -> Any:
    pending = js.Promise.resolve("once")
    first = await pending
    return [first, await _outcome(pending)]


@case
def unawaited_promise_call_result_described() -> Any:
    pending = js.Promise.resolve(1)
    description = attempt(lambda: pending)
    pending.cancel()
    return description
