"""Queues on the local runtime: batching, ack / retry, redelivery, dead letters, durability."""

from __future__ import annotations

from typing import Any

import pytest

from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime


async def deliveries(runtime: LocalRuntime) -> list[tuple[str, int, int]]:
    rows = (
        await runtime.env("conformance")
        .DB.prepare("SELECT queue, n, attempts FROM delivery ORDER BY seq")
        .all()
    )
    return [(r.queue, r.n, r.attempts) for r in rows.results]


async def send(runtime: LocalRuntime, *bodies: dict[str, Any], delay: int | None = None) -> None:
    jobs = runtime.env("conformance").JOBS
    for body in bodies:
        await (jobs.send(body) if delay is None else jobs.send(body, delaySeconds=delay))


async def test_a_full_batch_goes_out_at_once(runtime: LocalRuntime, clock: VirtualClock) -> None:
    await send(runtime, *({"kind": "ok", "n": i} for i in range(3)))
    await clock.advance(0)
    assert await deliveries(runtime) == [("jobs", 0, 1), ("jobs", 1, 1), ("jobs", 2, 1)]
    assert runtime.queues.pending("jobs") == []


async def test_a_partial_batch_waits_for_max_batch_timeout(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    await send(runtime, {"kind": "ok", "n": 7})
    await clock.advance(999)
    assert await deliveries(runtime) == []
    await clock.advance(1)
    assert await deliveries(runtime) == [("jobs", 7, 1)]


async def test_delay_seconds_holds_a_message_back(runtime: LocalRuntime, clock: VirtualClock) -> None:
    await send(runtime, {"kind": "ok", "n": 1}, delay=30)
    await clock.advance(30_000)
    assert await deliveries(runtime) == []
    await clock.advance(1_000)  # visible at 30 s, then the 1 s batch window
    assert await deliveries(runtime) == [("jobs", 1, 1)]


async def test_retried_message_is_redelivered_then_dead_lettered(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    await send(runtime, {"kind": "retry", "n": 5}, {"kind": "ok", "n": 6})
    await clock.advance(10_000)
    # max_retries = 2: three deliveries on "jobs", then one on the dead-letter queue.
    assert await deliveries(runtime) == [
        ("jobs", 5, 1),
        ("jobs", 6, 1),
        ("jobs", 5, 2),
        ("jobs", 5, 3),
        ("jobs-dlq", 5, 1),
    ]
    assert runtime.queues.pending("jobs") == []
    assert runtime.queues.pending("jobs-dlq") == []


async def test_a_raising_handler_retries_only_unacked_messages(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    await send(runtime, {"kind": "ok", "n": 1}, {"kind": "raise", "n": 2}, {"kind": "ok", "n": 3})
    await clock.advance(0)
    first = await deliveries(runtime)
    assert first == [("jobs", 1, 1), ("jobs", 2, 1), ("jobs", 3, 1)]
    await clock.advance(1_000)
    # Messages 1 and 3 were acked explicitly before the raise; message 2 had no verdict and comes back.
    assert (await deliveries(runtime))[3:] == [("jobs", 2, 2)]


async def test_send_batch_and_bad_input(runtime: LocalRuntime, clock: VirtualClock) -> None:
    jobs = runtime.env("conformance").JOBS
    await jobs.sendBatch([{"body": {"kind": "ok", "n": i}} for i in range(3)])
    await clock.advance(0)
    assert len(await deliveries(runtime)) == 3
    with pytest.raises(TypeError, match="cannot be sent over RPC"):
        await jobs.send({"kind": "ok", "n": (1, 2)})
    with pytest.raises(ValueError, match="delaySeconds"):
        await jobs.send({"n": 1}, delaySeconds=-1)
    with pytest.raises(ValueError, match="1 to 100 items"):
        await jobs.sendBatch([])
    with pytest.raises(TypeError, match="unknown option"):
        await jobs.send({"n": 1}, delay=3)


async def test_message_bodies_are_copies(runtime: LocalRuntime, clock: VirtualClock) -> None:
    body = {"kind": "ok", "n": 1}
    await runtime.env("conformance").JOBS.send(body)
    body["n"] = 99  # a later change must not reach the consumer
    await clock.advance(1_000)
    assert await deliveries(runtime) == [("jobs", 1, 1)]


async def test_queued_messages_survive_a_restart(runtime: LocalRuntime, clock: VirtualClock) -> None:
    await send(runtime, {"kind": "ok", "n": 42})
    await runtime.stop()
    again = LocalRuntime(runtime.configs, data_dir=runtime.data_dir, clock=clock)
    await again.start()
    try:
        await clock.advance(1_000)
        assert await deliveries(again) == [("jobs", 42, 1)]
    finally:
        await again.stop()
