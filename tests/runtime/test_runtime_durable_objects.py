"""Durable Objects on the local runtime: instances, SQL cursors, alarms with retries, gates, eviction."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pyodide.ffi import JsException as RemoteError
from workers.rpc import JsDict

from tsumugi_dev.alarms import alarm_retry_at
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.do_storage import DurableObjectStorage
from tsumugi_dev.runtime import LocalRuntime


async def test_one_instance_per_id_and_state_per_object(runtime: LocalRuntime) -> None:
    ns = runtime.env("conformance").COUNTER
    a, a_again, b = ns.getByName("a"), ns.get(ns.idFromName("a")), ns.getByName("b")
    assert await a.increment(2) == 2
    assert await a_again.increment(3) == 5
    assert await b.increment(1) == 1
    assert ns.idFromName("a").equals(ns.idFromString(ns.idFromName("a").toString()))
    assert len(runtime.namespace("conformance", "Counter").objects()) == 2


async def test_each_object_has_its_own_sqlite_file(runtime: LocalRuntime) -> None:
    ns = runtime.env("conformance").COUNTER
    await ns.getByName("a").increment(1)
    await ns.getByName("b").increment(1)
    files = sorted(p.name for p in (runtime.data_dir / "do" / "conformance" / "Counter").glob("*.sqlite"))
    assert files == sorted(f"{ns.idFromName(n).toString()}.sqlite" for n in ("a", "b"))


async def test_sql_cursor_facts(runtime: LocalRuntime) -> None:
    facts = await runtime.env("conformance").COUNTER.getByName("c").cursor_facts()
    assert facts == {"written": 3, "rows": [1, 2, 3], "read": 3, "one": 7}
    assert isinstance(facts, JsDict)


async def test_fetch_to_an_object(runtime: LocalRuntime) -> None:
    stub = runtime.env("conformance").COUNTER.getByName("f")
    await stub.increment(4)
    response = await stub.fetch("http://do/anything")
    assert await response.text() == "count=4"


async def test_unknown_and_private_methods_are_refused_like_cloudflare(runtime: LocalRuntime) -> None:
    stub = runtime.env("conformance").COUNTER.getByName("x")
    with pytest.raises(RemoteError, match="TypeError: Method nope does not exist"):
        await stub.nope()
    with pytest.raises(RemoteError, match="'alarm' is a reserved method"):
        await stub.alarm({})
    with pytest.raises(RemoteError, match="TypeError: Method _value does not exist"):
        await stub._value()  # a stub answers every name, as workerd's do; the call is refused


async def test_eviction_drops_the_instance_and_keeps_storage(runtime: LocalRuntime) -> None:
    stub = runtime.env("conformance").COUNTER.getByName("e")
    await stub.increment(5)
    host = runtime.namespace("conformance", "Counter").objects()[0]
    runtime.evict_durable_objects()
    assert not host.is_live
    assert await stub.increment(1) == 6
    assert host.is_live


async def test_alarm_fires_at_its_time_not_before(runtime: LocalRuntime, clock: VirtualClock) -> None:
    stub = runtime.env("conformance").COUNTER.getByName("alarm")
    at = clock.now_ms() + 10_000
    assert await stub.arm(at) == at
    await clock.advance(9_999)
    assert await stub.fired() == []
    await clock.advance(1)
    assert await stub.fired() == [0]
    assert await stub.alarm_at() is None


async def test_failing_alarm_is_retried_with_exponential_backoff(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    stub = runtime.env("conformance").COUNTER.getByName("flaky")
    start = clock.now_ms()
    await stub.arm(start + 1_000, 2)  # fails on retryCount 0 and 1, succeeds on 2
    await clock.advance(1_000)
    assert await stub.fired() == [0]
    assert await stub.alarm_at() == start + 1_000 + 2_000
    await clock.advance(1_999)
    assert await stub.fired() == [0]
    await clock.advance(1)
    assert await stub.fired() == [0, 1]
    assert await stub.alarm_at() == start + 3_000 + 4_000
    await clock.advance(4_000)
    assert await stub.fired() == [0, 1, 2]
    assert await stub.alarm_at() is None


async def test_alarm_gives_up_after_six_retries(runtime: LocalRuntime, clock: VirtualClock) -> None:
    stub = runtime.env("conformance").COUNTER.getByName("broken")
    await stub.arm(clock.now_ms(), 100)
    await clock.advance(600_000)
    assert await stub.fired() == [0, 1, 2, 3, 4, 5, 6]
    assert await stub.alarm_at() is None


def test_alarm_retry_schedule() -> None:
    assert [alarm_retry_at(0, n) for n in range(7)] == [2_000, 4_000, 8_000, 16_000, 32_000, 64_000, None]


async def test_alarm_set_in_a_rolled_back_transaction_is_not_armed(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    stub = runtime.env("conformance").COUNTER.getByName("tx")
    with pytest.raises(RemoteError, match="rolled back"):
        await stub.arm_in_transaction(clock.now_ms() + 1_000, True)
    assert await stub.alarm_at() is None
    assert await stub.get() == 0
    await stub.arm_in_transaction(clock.now_ms() + 1_000, False)
    assert await stub.get() == 100
    await clock.advance(1_000)
    assert await stub.fired() == [0]


def test_the_alarm_read_back_is_the_committed_one_after_a_rollback(tmp_path: Path) -> None:
    committed: list[int | None] = []

    class Listener:
        def now_ms(self) -> int:
            return 0

        def alarm_may_be_set(self, alarm_at: int) -> None: ...
        def alarm_committed(self, alarm_at: int | None) -> None:
            committed.append(alarm_at)

    storage = DurableObjectStorage(tmp_path / "object.sqlite", Listener())
    try:
        storage.store_alarm(1_000)
        assert storage.stored_alarm() == (1_000, 0)

        def replace_then_fail() -> None:
            storage.store_alarm(5_000, 2)
            assert storage.stored_alarm() == (5_000, 2)  # inside the transaction: its own write
            raise RuntimeError("rolled back")

        with pytest.raises(RuntimeError):
            storage.transaction_sync(replace_then_fail)
        assert storage.stored_alarm() == (1_000, 0)
        assert committed[-1] == 1_000
        storage.transaction_sync(lambda: storage.store_alarm(None))
        assert storage.stored_alarm() is None
        assert committed[-1] is None
    finally:
        storage.close()


async def test_deleted_alarm_does_not_fire(runtime: LocalRuntime, clock: VirtualClock) -> None:
    stub = runtime.env("conformance").COUNTER.getByName("del")
    await stub.arm(clock.now_ms() + 1_000)
    await stub.cancel_alarm()
    await clock.advance(5_000)
    assert await stub.fired() == []


async def test_events_interleave_while_one_awaits_outside_io(runtime: LocalRuntime) -> None:
    # Both events read 0 before either writes: code relying on whole-call serialisation loses an update,
    # as it would on Cloudflare.
    stub = runtime.env("conformance").COUNTER.getByName("race")
    results = await asyncio.gather(stub.increment_with_send(1), stub.increment_with_send(1))
    assert results == [1, 1]
    assert await stub.get() == 1


async def test_synchronous_sql_never_interleaves(runtime: LocalRuntime) -> None:
    stub = runtime.env("conformance").COUNTER.getByName("sync")
    results = await asyncio.gather(*(stub.increment(1) for _ in range(20)))
    assert sorted(results) == list(range(1, 21))


async def test_alarms_survive_a_restart(runtime: LocalRuntime, clock: VirtualClock) -> None:
    await runtime.env("conformance").COUNTER.getByName("persist").arm(clock.now_ms() + 5_000)
    await runtime.stop()
    again = LocalRuntime(runtime.configs, data_dir=runtime.data_dir, clock=clock)
    await again.start()
    try:
        stub = again.env("conformance").COUNTER.getByName("persist")
        await clock.advance(5_000)
        assert await stub.fired() == [0]
    finally:
        await again.stop()


async def test_ids_by_name_string_and_unique(runtime: LocalRuntime) -> None:
    ns = runtime.env("conformance").COUNTER
    by_name = ns.idFromName("alpha")
    assert (by_name.name, len(by_name.toString())) == ("alpha", 64)
    assert by_name.equals(ns.idFromName("alpha"))
    assert not by_name.equals(ns.idFromName("beta"))
    assert ns.idFromString(by_name.toString()).name is None
    stub = ns.getByName("alpha")
    assert (stub.name, stub.id.toString()) == ("alpha", by_name.toString())
    unique = ns.newUniqueId()
    assert unique.toString() != ns.newUniqueId().toString()
    assert await ns.get(unique).increment(2) == 2
    assert await ns.get(ns.idFromString(unique.toString())).get() == 2
    with pytest.raises(RemoteError, match="TypeError: Invalid Durable Object ID: must be 64 hex digits"):
        ns.idFromString("not-an-id")
    with pytest.raises(RemoteError, match=r"TypeError: .*idFromName.*not of type 'string'"):
        ns.idFromName(7)


async def test_the_same_name_in_another_namespace_is_another_object(runtime: LocalRuntime) -> None:
    ns = runtime.env("conformance").COUNTER
    other_key = "elsewhere:Counter"
    here = runtime.namespace("conformance", "Counter")
    assert ns.idFromName("a").toString() == here.id_from_name("a").toString()
    assert runtime.object_id_for_name(other_key, "a") != ns.idFromName("a").toString()


async def test_an_alarm_set_in_the_past_fires_at_once(runtime: LocalRuntime, clock: VirtualClock) -> None:
    stub = runtime.env("conformance").COUNTER.getByName("past")
    await stub.arm(clock.now_ms() - 60_000)
    await clock.advance(0)
    assert await stub.fired() == [0]


async def test_an_alarm_set_in_the_past_is_kept_as_now(runtime: LocalRuntime, clock: VirtualClock) -> None:
    # workerd stores a past time as Date.now(): getAlarm() then answers now, not the time given.
    stub = runtime.env("conformance").COUNTER.getByName("past-now")
    assert await stub.arm(clock.now_ms() - 60_000) == clock.now_ms()
    assert await stub.arm(1) == clock.now_ms()


@pytest.mark.parametrize(
    ("at", "message"),
    [
        (0, "setAlarm() cannot be called with an alarm time <= 0"),
        (-1_000, "setAlarm() cannot be called with an alarm time <= 0"),
        (0.5, "setAlarm() cannot be called with an alarm time <= 0"),
        (9_223_372_036_855, "This API doesn't support dates after 2189."),
        (-9_223_372_036_855, "This API doesn't support dates before 1687."),
        (8.64e15, "This API doesn't support dates after 2189."),
        (float("inf"), "The value cannot be converted because it is not a valid Date."),
        (float("nan"), "The value cannot be converted because it is not a valid Date."),
        # Past 2**53 a Python int crosses into JS as a BigInt, which is not a number to setAlarm.
        (2**53, "Failed to execute 'setAlarm' on 'DurableObjectStorage': parameter 1 is not of type 'date'."),
        (
            "4102444800000",
            "Failed to execute 'setAlarm' on 'DurableObjectStorage': parameter 1 is not of type 'date'.",
        ),
    ],
)
async def test_set_alarm_refuses_what_workerd_refuses_and_keeps_the_alarm(
    runtime: LocalRuntime, clock: VirtualClock, at: object, message: str
) -> None:
    # The texts are workerd's (tests/shapes/workerd-shapes.json, alarms); a refused call changes nothing.
    stub = runtime.env("conformance").COUNTER.getByName("refused")
    armed = clock.now_ms() + 10_000
    assert await stub.arm(armed) == armed
    with pytest.raises(RemoteError) as refused:
        await stub.arm(at)
    assert str(refused.value) == f"TypeError: {message}"
    assert await stub.alarm_at() == armed


async def test_the_latest_alarm_workerd_takes_is_cut_to_the_millisecond(runtime: LocalRuntime) -> None:
    stub = runtime.env("conformance").COUNTER.getByName("latest")
    assert await stub.arm(9_223_372_036_854.773) == 9_223_372_036_854


async def test_an_alarm_retry_survives_a_restart(runtime: LocalRuntime, clock: VirtualClock) -> None:
    start = clock.now_ms()
    await runtime.env("conformance").COUNTER.getByName("retry-restart").arm(start + 1_000, 1)
    await clock.advance(1_000)  # fails once: retry due at +3 s with retryCount 1
    await runtime.stop()
    again = LocalRuntime(runtime.configs, data_dir=runtime.data_dir, clock=clock)
    await again.start()
    try:
        stub = again.env("conformance").COUNTER.getByName("retry-restart")
        assert await stub.alarm_at() == start + 3_000
        await clock.advance(2_000)
        assert await stub.fired() == [0, 1]
        assert await stub.alarm_at() is None
    finally:
        await again.stop()
