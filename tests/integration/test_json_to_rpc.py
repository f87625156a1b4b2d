"""`json_to_rpc` and `JsonCalls` hand JS what the SDK's ``python_to_rpc`` and its wrapper hand it (ADR-0129).

The scheduler converts its plain-data RPC and binding arguments (dispatch messages, reports, metrics points)
in one walk instead of the SDK's three; what reaches JS must not differ for any JSON value kind. Compared on
the emulated FFI (checked against real Pyodide by tests/ffi) through what JS itself sees: ``JSON.stringify``
of the value (null and undefined, objects and Maps, strings and numbers all write differently) and its
constructors.
"""

from __future__ import annotations

from typing import Any, ClassVar

import js
import pytest
from jsemu.core import HostObject
from jsemu.promise import JsPromise
from pyodide.ffi import JsException, JsProxy
from workers import python_to_rpc, rpc
from workers.rpc import JsDict

from tsumugi_scheduler._runtime import JsonCalls, from_rpc, json_to_rpc, unwrapped

# The SDK's wrapper of env bindings.
_BindingWrapper: Any = rpc._BindingWrapper  # pyright: ignore[reportPrivateUsage]

VALUES: list[Any] = [
    None,
    "text",
    0,
    -7,
    2**53 - 2,
    1.5,
    float("nan"),
    True,
    False,
    [],
    {},
    [None, 1, "a", None],
    {"a": None, "b": [None, {"c": None}], "d": {"e": [[None]]}},
    {
        "jobId": "Hello#0:01J",
        "attempt": 1,
        "payload": {"name": "n\U0001d11e\u00e9", "list": [1, 2.25, None]},
        "traceparent": None,
        "deadlineAt": 1_767_225_600_000,
        "ok": True,
    },
    [{"body": {"k": None}}, {"body": {"k": [None]}}],
    JsDict({"sub": None, "n": JsDict({"x": None})}),
    {1: "int key", "1x": None},
]


def _seen_by_js(value: Any) -> tuple[str, str]:
    """What JS sees of ``value``: its JSON text and its constructor (or JS type)."""
    if isinstance(value, JsProxy):
        return str(js.JSON.stringify(value)), str(value.constructor.name)
    return str(js.JSON.stringify(value)), type(value).__name__


@pytest.mark.parametrize("value", VALUES, ids=lambda v: repr(v)[:40])
def test_a_json_value_reaches_js_as_the_sdk_sends_it(value: Any) -> None:
    assert _seen_by_js(json_to_rpc(value)) == _seen_by_js(python_to_rpc(value))


def test_nested_objects_are_plain_objects_with_js_nulls() -> None:
    converted = json_to_rpc({"a": {"b": None}, "l": [None]})
    assert converted.constructor.name == "Object"
    assert converted.a.constructor.name == "Object"
    assert str(js.JSON.stringify(converted)) == '{"a":{"b":null},"l":[null]}'


def test_an_integer_past_the_safe_range_fails_as_through_the_sdk() -> None:
    # Both send a BigInt, which JSON cannot write.
    for convert in (json_to_rpc, python_to_rpc):
        with pytest.raises(JsException, match="BigInt"):
            js.JSON.stringify({"n": convert({"n": 2**53})})


class _Recorder(HostObject):
    """A platform binding that records the JS values its methods receive and answers a plain object."""

    __slots__ = ("_seen",)
    js_class: ClassVar[str] = "WorkerQueue"

    def __init__(self) -> None:
        object.__setattr__(self, "_seen", [])

    def js_sendBatch(self, *args: Any) -> Any:
        self._seen.append([_seen_by_js(a) for a in args])
        return JsPromise.resolved(js.JSON.parse('{"ok": true, "missing": null, "items": [{"v": null}]}'))

    def js_writeDataPoint(self, *args: Any) -> Any:
        self._seen.append([_seen_by_js(a) for a in args])
        return None


async def test_calls_through_json_calls_match_the_sdk_wrapper() -> None:
    arguments = ("shard#0", [{"body": {"jobId": "a", "traceparent": None}}], {"delaySeconds": None})
    via_wrapper, via_calls = _Recorder(), _Recorder()
    wrapper_answer = await _BindingWrapper(via_wrapper).sendBatch(*arguments)
    calls_answer = await JsonCalls(_BindingWrapper(via_calls)).sendBatch(*arguments)
    assert via_calls._seen == via_wrapper._seen  # pyright: ignore[reportPrivateUsage]
    assert calls_answer == wrapper_answer == {"ok": True, "missing": None, "items": [{"v": None}]}
    assert type(calls_answer) is type(wrapper_answer)
    point = {"indexes": ["Hello"], "blobs": ["COMPLETED", "Hello", None], "doubles": [1.0, 0.0]}
    assert JsonCalls(_BindingWrapper(via_calls)).writeDataPoint(point) is None
    _BindingWrapper(via_wrapper).writeDataPoint(point)
    assert via_calls._seen == via_wrapper._seen  # pyright: ignore[reportPrivateUsage]


async def test_a_binding_without_the_sdk_wrapper_gets_the_python_values() -> None:
    class Fake:
        def __init__(self) -> None:
            self.got: list[Any] = []

        async def sendBatch(self, messages: Any) -> None:
            self.got.append(messages)

    fake = Fake()
    messages = [{"body": {"k": None}}]
    await JsonCalls(fake).sendBatch(messages)
    assert fake.got == [messages]
    assert fake.got[0] is messages


class _Performer(HostObject):
    """A performer stub that records what JS receives and answers a string or a plain object with nulls."""

    __slots__ = ("_answer", "_seen")
    js_class: ClassVar[str] = "Fetcher"

    def __init__(self, answer: str) -> None:
        object.__setattr__(self, "_seen", [])
        object.__setattr__(self, "_answer", answer)

    def js_run_attempt(self, *args: Any) -> Any:
        self._seen.append([_seen_by_js(a) for a in args])
        text: str = self._answer
        return JsPromise.resolved(text if text.startswith("text:") else js.JSON.parse(text))


@pytest.mark.parametrize("answer", ['text:{"ok": true}', '{"ok": false, "error": null, "retryAt": [null]}'])
async def test_a_raw_call_answers_and_is_seen_as_through_the_sdk_wrapper(answer: str) -> None:
    # The consumer calls the performer on the JS object under the wrapper (ADR-0169): a string and a lent
    # function reach JS as through the wrapper, and the answer reads the same (JS null as None).
    from pyodide.ffi import create_proxy

    def heartbeat(progress: Any = None) -> str:
        return "{}"

    lent = create_proxy(heartbeat)
    try:
        via_wrapper, raw = _Performer(answer), _Performer(answer)
        wrapped_answer = await _BindingWrapper(via_wrapper).run_attempt('{"jobId": "a"}', lent)
        raw_stub = unwrapped(_BindingWrapper(raw))
        assert raw_stub is raw
        raw_answer = from_rpc(await raw_stub.run_attempt('{"jobId": "a"}', lent))
    finally:
        lent.destroy()
    assert raw._seen == via_wrapper._seen  # pyright: ignore[reportPrivateUsage]
    assert raw_answer == wrapped_answer
    assert type(raw_answer) is type(wrapped_answer)


def test_unwrapped_keeps_a_value_the_sdk_did_not_wrap() -> None:
    fake = object()
    assert unwrapped(fake) is fake
    assert from_rpc("text") == "text"
    assert from_rpc(None) is None
