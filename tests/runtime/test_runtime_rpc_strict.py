# pyright: reportArgumentType=false, reportGeneralTypeIssues=false, reportAttributeAccessIssue=false, reportCallIssue=false
# (The SDK's annotations are narrower than its behaviour: str methods, awaitable wrapper results.)
"""Values the SDK does not convert cross RPC as workerd lets them, or fail as they fail there (ADR-0042).

Issue 9 items 4, 5 and 10: a callback's result and arguments, ``ctx.exports`` stubs, errors, bytes, DO SQL
bindings. Each test here failed against the kinder runtime before ADR-0042.
"""

from __future__ import annotations

from typing import Any

import pytest
from pyodide.ffi import JsException, JsProxy
from workers import python_from_rpc, python_to_rpc

from tsumugi_dev.do_sql import SqlStorage
from tsumugi_dev.js_values import PROXY_REFUSED
from tsumugi_dev.jsdict import JsDict
from tsumugi_dev.runtime import LocalRuntime


def peer(runtime: LocalRuntime) -> Any:
    return runtime.env("conformance").PEER


# -- item 4: a function received over RPC converts nothing --------------------------------------------------


async def test_a_callback_answering_a_dict_fails_at_its_caller_with_workerds_data_clone_error(
    runtime: LocalRuntime,
) -> None:
    async def heartbeat(progress: Any) -> dict[str, Any]:
        return {"accepted": True, "cancel_requested": False}

    with pytest.raises(JsException) as caught:
        await peer(runtime).relay(heartbeat, 0.5)
    assert caught.value.name == "DataCloneError"
    assert caught.value.message.startswith(PROXY_REFUSED)


async def test_a_callback_answering_a_string_or_number_answers_it(runtime: LocalRuntime) -> None:
    seen: list[Any] = []

    async def heartbeat(progress: Any) -> str:
        seen.append(progress)
        return '{"accepted":true}'

    assert await peer(runtime).relay(heartbeat, 0.5) == '{"accepted":true}'
    assert await peer(runtime).relay(lambda _: 7, None) == 7
    assert seen == [0.5]


async def test_a_dict_argument_to_a_callback_is_refused_at_the_caller(runtime: LocalRuntime) -> None:
    called: list[Any] = []
    with pytest.raises(JsException, match="DataCloneError"):
        await peer(runtime).relay(called.append, {"progress": 0.5})
    assert called == []


async def test_explicit_conversion_through_a_callback_works_and_arrives_as_a_js_proxy(
    runtime: LocalRuntime,
) -> None:
    received: list[Any] = []

    def echo(value: Any) -> Any:
        received.append(value)
        return value  # a JsProxy: already a JS value

    answer = await peer(runtime).relay_converted(echo, {"progress": 0.5})
    assert isinstance(received[0], JsProxy)
    proxy: Any = received[0]
    with pytest.raises(TypeError, match="not subscriptable"):
        proxy["progress"]
    assert proxy.progress == 0.5
    assert proxy.to_py() == {"progress": 0.5}
    assert answer == {"progress": 0.5}
    assert isinstance(answer, JsDict)


# -- item 5: ctx.exports is not wrapped by the SDK ----------------------------------------------------------


async def test_a_dict_sent_through_ctx_exports_is_refused(runtime: LocalRuntime) -> None:
    with pytest.raises(JsException, match="DataCloneError"):
        await peer(runtime).via_exports("raw", {"a": 1})


async def test_ctx_exports_works_with_explicit_conversion_and_answers_js_values(
    runtime: LocalRuntime,
) -> None:
    answer = await peer(runtime).via_exports("converted", {"a": 1})
    assert answer["converted"] == {"type": "JsDict", "is_jsdict": True, "payload": {"a": 1, "touched": True}}


def test_python_to_rpc_answers_a_js_value_and_python_from_rpc_converts_it_back() -> None:
    sent = python_to_rpc({"a": [1, None], "b": b"\x01"})
    assert isinstance(sent, JsProxy)
    back = python_from_rpc(sent)
    assert isinstance(back, JsDict)
    assert back == {"a": [1, None], "b": b"\x01"}
    assert isinstance(back["b"], memoryview)
    assert python_to_rpc(3) == 3
    assert python_from_rpc({"plain": 1}) == {"plain": 1}  # not a JS value: unchanged, not a JsDict
    assert type(python_from_rpc({"plain": 1})) is dict
    with pytest.raises(TypeError, match="cannot be sent over RPC"):
        python_to_rpc((1, 2))


# -- item 10: errors, bytes, DO SQL numbers -----------------------------------------------------------------


async def test_a_missing_method_on_a_python_target_is_workerds_method_does_not_exist(
    runtime: LocalRuntime,
) -> None:
    with pytest.raises(JsException) as caught:
        await peer(runtime).report_many("x")
    assert (caught.value.name, caught.value.message) == ("TypeError", "Method report_many does not exist")


async def test_a_python_exception_arrives_as_python_error_holding_the_traceback(
    runtime: LocalRuntime,
) -> None:
    with pytest.raises(JsException) as caught:
        await peer(runtime).boom()
    assert caught.value.name == "PythonError"
    assert caught.value.message.startswith("Traceback (most recent call last):\n")
    assert caught.value.message.rstrip().splitlines()[-1] == "ValueError: peer failed"
    assert str(caught.value).startswith("PythonError: Traceback")


async def test_bytes_come_back_as_a_memoryview(runtime: LocalRuntime) -> None:
    answer = await peer(runtime).give_bytes()
    assert isinstance(answer, memoryview)
    assert answer.tobytes() == b"\x00\x01"


def test_do_sql_binds_numbers_as_doubles_booleans_as_text_and_refuses_bigints() -> None:
    with SqlStorage() as sql:
        row = sql.exec(
            "SELECT typeof(?) AS i, typeof(?) AS f, ? || '' AS text, ? AS b", 1, 1.5, 2, True
        ).one()
        assert row == {"i": "real", "f": "real", "text": "2.0", "b": "true"}
        assert sql.exec("SELECT ? AS v", 2**53 - 1).one()["v"] == 2**53 - 1
        with pytest.raises(JsException, match="TypeError: Cannot convert a BigInt value to a number"):
            sql.exec("SELECT ? AS v", 2**53)
        sql.exec("CREATE TABLE t (b BLOB)")
        sql.exec("INSERT INTO t VALUES (?)", b"\x00")
        assert isinstance(sql.exec("SELECT b FROM t").one()["b"], memoryview)
