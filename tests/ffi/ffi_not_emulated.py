"""FFI cases whose real-Pyodide outcome the emulation does not reproduce, each with the reason (ADR-0103).

A listed case still runs in both worlds; its test then asserts that the outcomes differ, so an entry that the
emulation has come to match must be removed. Cases not listed must match exactly.
"""

from __future__ import annotations

_FUTURE = (
    "A JS call that answers a promise gives Python that promise's proxy (awaitable, with then/catch/finally_); "
    "Pyodide gives a PyodideFuture, an asyncio.Future subclass of its own event loop (webloop), which the "
    "local runtime does not run. "
)

NOT_EMULATED: dict[str, str] = {
    "jsproxy_class_names": (
        "Pyodide's JsProxy is a C type: __name__ 'JsProxy', while CPython's messages print its tp_name "
        "'pyodide.ffi.JsProxy'. A Python class has one name for both; the emulation's __name__ is "
        "'pyodide.ffi.JsProxy' so that every message reads as Pyodide's (__qualname__, __module__ and repr "
        "are Pyodide's)."
    ),
    "arg_jsproxy_crosses_back_unchanged": (
        "The emulation holds one Python object per JS object, so a JsProxy that crosses into JS and back is "
        "the same object (`is` holds); Pyodide wraps the JS object in a new JsProxy each time. `==` compares "
        "the JS objects in both."
    ),
    "js_array_hole_index_raises": (
        "The emulation stores an array hole (only `new Array(n)` makes one) as undefined, so indexing it "
        "answers None; Pyodide raises IndexError for an index with no own property."
    ),
    "callback_plain_lambda_argument_is_destroyed_after_call": (
        "Pyodide reads a destroyed borrowed PyProxy back as a broken JsProxy (not callable; isinstance on it "
        "raises SystemError); the emulation raises the proxy's 'borrowed proxy was automatically destroyed' "
        "JsException as soon as it is read."
    ),
    "promise_call_result_shape": _FUTURE + "So the result's type is not PyodideFuture.",
    "unawaited_promise_call_result_described": _FUTURE + "So the result has no cancel() and is a JsProxy.",
    "promise_all_with_python_future_inside": _FUTURE
    + "So a Python list holding one gives Promise.all a promise it waits for; in Pyodide it is a Python "
    "object whose borrowed proxy dies when Promise.all's iteration ends.",
    "await_rejected_with_non_errors_never_settles": _FUTURE
    + "Pyodide's future also never settles when the promise is rejected with a non-Error (Future."
    "set_exception refuses it, an unhandled 'invalid exception object' in JS); the emulation raises "
    "JsException instead of hanging, and its promise has no done().",
}
