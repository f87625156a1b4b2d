"""Service Bindings (RPC with copy semantics, fetch) and cron triggers on the local runtime."""

from __future__ import annotations

import pytest
from pyodide.ffi import JsException as RemoteError

from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime


async def test_rpc_between_workers_copies_values(runtime: LocalRuntime) -> None:
    peer = runtime.env("conformance").PEER
    assert await peer.add(2, 3) == 5
    payload = {"a": 1, "b": [1, 2], "c": None}
    answer = await peer.mutate(payload)
    assert payload == {"a": 1, "b": [1, 2], "c": None}  # the callee changed its own copy only
    assert answer == {
        "type": "JsDict",
        "is_jsdict": True,
        "payload": {"a": 1, "b": [1, 2], "c": None, "touched": True},
    }
    assert answer.payload.touched is True


async def test_workers_call_each_other(runtime: LocalRuntime) -> None:
    assert await runtime.env("conformance").PEER.call_back("hi") == "conformance got hi"


async def test_unsupported_types_fail_clearly(runtime: LocalRuntime) -> None:
    peer = runtime.env("conformance").PEER
    with pytest.raises(
        TypeError, match=r"^<class 'tuple'> cannot be sent over RPC\.$"
    ):  # the SDK's own check
        await peer.add((1,), (2,))
    with pytest.raises(RemoteError, match="DataCloneError: Proxy could not be serialized"):  # a PyProxy
        await peer.add(object(), 1)
    with pytest.raises(RemoteError, match="cannot be sent over RPC"):
        await peer.give_tuple()
    # Keyword arguments become one trailing object, as Pyodide calls JS functions: add({a, b}) lacks b.
    with pytest.raises(RemoteError, match="missing 1 required positional argument: 'b'"):
        await peer.add(a=1, b=2)


async def test_callee_errors_reach_the_caller_as_copies(runtime: LocalRuntime) -> None:
    with pytest.raises(RemoteError, match="ValueError: peer failed") as caught:
        await runtime.env("conformance").PEER.boom()
    # Pyodide's PythonError: the message is the callee's traceback, its last line the exception (ADR-0042).
    assert caught.value.name == "PythonError"
    assert caught.value.message.startswith("Traceback (most recent call last):\n")
    assert caught.value.message.rstrip().endswith("ValueError: peer failed")
    with pytest.raises(RemoteError, match="TypeError: Method missing does not exist"):
        await runtime.env("conformance").PEER.missing()


async def test_fetch_through_a_service_binding(runtime: LocalRuntime) -> None:
    response = await runtime.env("conformance").PEER.fetch("http://peer/api-path")
    assert await response.text() == "peer Api.fetch http://peer/api-path"


async def test_cron_fires_under_the_virtual_clock(runtime: LocalRuntime, clock: VirtualClock) -> None:
    db = runtime.env("conformance").DB
    await clock.advance(5 * 60_000 - 1)
    assert (await db.prepare("SELECT * FROM cron_log").all()).results == []
    await clock.advance(1)
    await clock.advance(5 * 60_000)
    rows = (await db.prepare("SELECT cron, scheduled_time FROM cron_log").all()).results
    start = clock.now_ms() - 10 * 60_000
    assert rows == [
        {"cron": "*/5 * * * *", "scheduled_time": start + 5 * 60_000},
        {"cron": "*/5 * * * *", "scheduled_time": start + 10 * 60_000},
    ]
    written = runtime.analytics.query("SELECT count(*) AS n FROM conformance_metrics WHERE blob1 = 'cron'")
    assert written == [{"n": 2}]


async def test_manual_scheduled_trigger_url(runtime: LocalRuntime, clock: VirtualClock) -> None:
    response = await runtime.fetch("conformance", "http://local/cdn-cgi/handler/scheduled?cron=1+2+3+4+5")
    assert await response.text() == "ok"
    rows = (
        await runtime.env("conformance").DB.prepare("SELECT cron, scheduled_time FROM cron_log").all()
    ).results
    assert rows == [{"cron": "1 2 3 4 5", "scheduled_time": clock.now_ms()}]


async def test_class_handlers_get_none_for_env_and_ctx_as_workerd_passes_them(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    """workerd calls a class's ``queue``/``scheduled`` RPC-style: the event and two undefined arguments."""
    handlers = runtime.workers["conformance"].module.HANDLER_ARGUMENTS
    handlers.clear()
    await runtime.trigger_scheduled("conformance", "1 2 3 4 5")
    await runtime.env("conformance").JOBS.send({"kind": "ok", "n": 1})
    await clock.advance(5_000)
    assert ("scheduled", None, None) in handlers
    assert ("queue", None, None) in handlers
    assert all(env is None and ctx is None for _, env, ctx in handlers)
