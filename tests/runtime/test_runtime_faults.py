"""Fault injection (``runtime.faults``): lost and duplicated messages, consumer crashes, failing alarms, restarts."""

from __future__ import annotations

from typing import Any

import pytest
from pyodide.ffi import JsException

from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime


async def deliveries(runtime: LocalRuntime) -> list[tuple[str, int, int]]:
    rows = (
        await runtime.env("conformance")
        .DB.prepare("SELECT queue, n, attempts FROM delivery ORDER BY seq")
        .all()
    )
    return [(r.queue, r.n, r.attempts) for r in rows.results]


async def send(runtime: LocalRuntime, *numbers: int) -> None:
    for n in numbers:
        await runtime.env("conformance").JOBS.send({"kind": "ok", "n": n})


def n_is(wanted: int) -> Any:
    return lambda body: body["n"] == wanted


async def test_drop_next_loses_matching_messages_only(runtime: LocalRuntime, clock: VirtualClock) -> None:
    lost = runtime.faults.drop_next("jobs", matching=n_is(2))
    await send(runtime, 1, 2, 3)
    await clock.advance(1_000)
    assert await deliveries(runtime) == [("jobs", 1, 1), ("jobs", 3, 1)]
    assert (lost.hits, lost.active) == (1, False)
    await send(runtime, 2)  # spent: the next one arrives
    await clock.advance(1_000)
    assert (await deliveries(runtime))[-1] == ("jobs", 2, 1)


async def test_drop_next_counts_messages_of_a_send_batch(runtime: LocalRuntime, clock: VirtualClock) -> None:
    runtime.faults.drop_next("jobs", n=2)
    await runtime.env("conformance").JOBS.sendBatch([{"body": {"kind": "ok", "n": i}} for i in range(3)])
    await clock.advance(1_000)
    assert await deliveries(runtime) == [("jobs", 2, 1)]


async def test_duplicate_next_delivers_an_acked_message_again(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    duplicated = runtime.faults.duplicate_next("jobs")
    await send(runtime, 7)
    await clock.advance(2_000)
    # The same message (same id) comes back as a second attempt although the consumer acked it.
    assert await deliveries(runtime) == [("jobs", 7, 1), ("jobs", 7, 2)]
    assert duplicated.hits == 1
    assert runtime.queues.pending("jobs") == []


async def test_crash_consumer_next_retries_the_batch_before_the_handler_runs(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    crash = runtime.faults.crash_consumer_next("jobs")
    await send(runtime, 4)
    await clock.advance(1_000)
    assert await deliveries(runtime) == []  # the handler never ran
    assert [m.attempts for m in runtime.queues.pending("jobs")] == [1]
    await clock.advance(1_000)
    assert await deliveries(runtime) == [("jobs", 4, 2)]
    assert crash.hits == 1


async def test_repeated_consumer_crashes_end_in_the_dead_letter_queue(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    runtime.faults.crash_consumer_next("jobs", n=3)  # max_retries = 2: three failed deliveries
    await send(runtime, 9)
    await clock.advance(10_000)
    assert await deliveries(runtime) == [("jobs-dlq", 9, 1)]


async def test_crash_consumer_next_with_a_matcher_spares_other_batches(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    runtime.faults.crash_consumer_next("jobs", matching=n_is(2))
    await send(runtime, 1)
    await clock.advance(1_000)
    await send(runtime, 2)
    await clock.advance(1_000)
    assert await deliveries(runtime) == [("jobs", 1, 1)]
    await clock.advance(1_000)
    assert await deliveries(runtime) == [("jobs", 1, 1), ("jobs", 2, 2)]


async def test_fail_next_alarm_by_name_retries_on_cloudflares_schedule(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    ns = runtime.env("conformance").COUNTER
    target, bystander = ns.getByName("target"), ns.getByName("bystander")
    failure = runtime.faults.fail_next_alarm("conformance", "Counter", name="target")
    at = clock.now_ms() + 1_000
    await target.arm(at)
    await bystander.arm(at)
    await clock.advance(1_000)
    assert await target.fired() == []  # alarm() raised before it ran
    assert await target.alarm_at() == at + 2_000
    assert await bystander.fired() == [0]
    await clock.advance(2_000)
    assert await target.fired() == [1]
    assert failure.hits == 1


async def test_fail_next_alarm_by_id_or_for_any_object(runtime: LocalRuntime, clock: VirtualClock) -> None:
    ns = runtime.env("conformance").COUNTER
    stub = ns.getByName("by-id")
    runtime.faults.fail_next_alarm("conformance", "Counter", ns.idFromName("by-id"), n=2)
    await stub.arm(clock.now_ms())
    await clock.advance(6_000)  # fails now and at +2 s, runs at +6 s
    assert await stub.fired() == [2]
    any_object = runtime.faults.fail_next_alarm("conformance", "Counter")
    other = ns.getByName("other")
    await other.arm(clock.now_ms())
    await clock.advance(2_000)
    assert (await other.fired(), any_object.hits) == ([1], 1)


async def test_restart_durable_objects_keeps_storage_and_alarms(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    stub = runtime.env("conformance").COUNTER.getByName("restart")
    await stub.increment(3)
    await stub.arm(clock.now_ms() + 5_000)
    host = runtime.namespace("conformance", "Counter").objects()[0]
    runtime.faults.restart_durable_objects()
    assert not host.is_live
    await clock.advance(5_000)
    assert await stub.fired() == [0]
    assert await stub.increment(1) == 4


async def test_a_cancelled_fault_never_strikes(runtime: LocalRuntime, clock: VirtualClock) -> None:
    fault = runtime.faults.drop_next("jobs")
    assert runtime.faults.armed() == [fault]
    fault.cancel()
    await send(runtime, 1)
    await clock.advance(1_000)
    assert await deliveries(runtime) == [("jobs", 1, 1)]
    assert (fault.hits, runtime.faults.armed()) == (0, [])
    runtime.faults.duplicate_next("jobs")
    runtime.faults.clear()
    assert runtime.faults.armed() == []


def test_bad_fault_arguments_name_the_field(runtime: LocalRuntime) -> None:
    faults = runtime.faults
    with pytest.raises(
        ValueError, match=r"queue: 'nope' is not a queue of this runtime \(known: jobs, jobs-dlq\)"
    ):
        faults.drop_next("nope")
    with pytest.raises(ValueError, match="n must be a positive int"):
        faults.duplicate_next("jobs", n=0)
    with pytest.raises(TypeError, match="matching must be a callable"):
        faults.crash_consumer_next("jobs", matching="n == 1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="conformance:Nope is not a Durable Object class of this runtime"):
        faults.fail_next_alarm("conformance", "Nope")
    with pytest.raises(ValueError, match="give object_id or name, not both"):
        faults.fail_next_alarm("conformance", "Counter", "ab" * 32, name="x")
    assert faults.armed() == []


async def test_a_matcher_that_raises_counts_as_no_match(runtime: LocalRuntime, clock: VirtualClock) -> None:
    fault = runtime.faults.drop_next("jobs", matching=lambda body: body["missing"] == 1)
    await send(runtime, 1)  # the Worker's send must not fail because of the test's matcher
    await clock.advance(1_000)
    assert await deliveries(runtime) == [("jobs", 1, 1)]
    assert (fault.hits, fault.active) == (0, True)


# Fault injection, the kinds the simulator needs: reordered messages, failed RPC between Workers, D1 outages.


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
