"""Fault injection, the kinds the simulator needs: reordered messages, failed RPC between Workers, D1 outages."""

from __future__ import annotations

import pytest
from pyodide.ffi import JsException
from test_runtime_faults import deliveries, n_is, send

from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime


async def test_reorder_next_lets_later_messages_overtake(runtime: LocalRuntime, clock: VirtualClock) -> None:
    held = runtime.faults.reorder_next("jobs", matching=n_is(1), hold_ms=1_500)
    await send(runtime, 1, 2, 3)
    await clock.advance(1_000)  # the batch window closes: 2 and 3 are visible, 1 is not yet
    assert await deliveries(runtime) == [("jobs", 2, 1), ("jobs", 3, 1)]
    await clock.advance(2_000)
    assert await deliveries(runtime) == [("jobs", 2, 1), ("jobs", 3, 1), ("jobs", 1, 1)]
    assert (held.hits, held.hold_ms) == (1, 1_500)


async def test_fail_next_rpc_fails_the_call_before_the_callee_runs(runtime: LocalRuntime) -> None:
    counter = runtime.env("conformance").COUNTER.getByName("rpc")
    failure = runtime.faults.fail_next_rpc("conformance", "Counter", method="increment")
    assert await counter.get() == 0  # another method is not struck
    with pytest.raises(JsException, match=r"^Error: Network connection lost\.$"):
        await counter.increment(3)
    assert await counter.get() == 0  # the callee never ran
    assert await counter.increment(1) == 1  # spent
    assert failure.hits == 1


async def test_fail_next_rpc_after_call_loses_only_the_answer(runtime: LocalRuntime) -> None:
    counter = runtime.env("conformance").COUNTER.getByName("answer")
    runtime.faults.fail_next_rpc("conformance", "Counter", after_call=True)
    with pytest.raises(JsException, match="Network connection lost"):
        await counter.increment(3)
    assert await counter.get() == 3  # it ran; the caller cannot tell


async def test_fail_next_rpc_strikes_service_binding_calls_by_entrypoint(runtime: LocalRuntime) -> None:
    peer = runtime.env("conformance").PEER
    runtime.faults.fail_next_rpc("peer", "Default")  # another entrypoint: Api calls pass
    assert await peer.add(1, 2) == 3
    runtime.faults.clear()
    failure = runtime.faults.fail_next_rpc("peer", n=2)
    for _ in range(2):
        with pytest.raises(JsException, match="Network connection lost"):
            await peer.add(1, 2)
    assert (await peer.add(2, 2), failure.hits) == (4, 2)


async def test_fail_next_d1_is_an_outage_of_n_calls(runtime: LocalRuntime) -> None:
    db = runtime.env("conformance").DB
    outage = runtime.faults.fail_next_d1("conformance-db", n=2)
    with pytest.raises(JsException, match=r"^Error: D1_ERROR: Network connection lost\.$"):
        await db.prepare("SELECT 1 AS one").first("one")
    with pytest.raises(JsException, match="Network connection lost"):
        await db.batch([db.prepare("SELECT 1")])
    assert await db.prepare("SELECT 1 AS one").first("one") == 1
    assert (outage.hits, outage.active) == (2, False)


def test_bad_arguments_of_the_new_faults_name_the_field(runtime: LocalRuntime) -> None:
    faults = runtime.faults
    with pytest.raises(
        ValueError, match=r"worker: 'nope' is not a Worker of this runtime \(known: conformance, peer\)"
    ):
        faults.fail_next_rpc("nope")
    with pytest.raises(
        ValueError, match=r"database: 'nope' is not a D1 database of this runtime \(known: conformance-db\)"
    ):
        faults.fail_next_d1("nope")
    with pytest.raises(ValueError, match="hold_ms must be a positive int"):
        faults.reorder_next("jobs", hold_ms=0)
    with pytest.raises(ValueError, match="queue: 'nope' is not a queue"):
        faults.reorder_next("nope")
    assert faults.armed() == []


async def test_restart_during_next_alarm_interrupts_the_run_and_it_is_retried(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    ns = runtime.env("conformance").COUNTER
    target, bystander = ns.getByName("mid"), ns.getByName("calm")
    restart = runtime.faults.restart_during_next_alarm("conformance", "Counter", name="mid")
    at = clock.now_ms() + 1_000
    await target.arm(at)
    await bystander.arm(at)
    host = runtime.namespace("conformance", "Counter").host(ns.idFromName("mid"))
    await clock.advance(1_000)
    assert restart.hits == 1
    assert not host.is_live or await target.alarm_at() == at + 2_000  # interrupted: retried in 2 s
    assert await bystander.fired() == [0]
    await clock.advance(2_000)
    assert (await target.fired())[-1] == 1  # the retry ran (retryCount 1)
