"""Queues on the local runtime: batching, ack / retry, redelivery, dead letters, durability."""

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


async def test_a_handler_that_always_raises_ends_in_the_dead_letter_queue(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    await send(runtime, {"kind": "poison", "n": 9})
    await clock.advance(10_000)
    # max_retries = 2: the handler raised on all three deliveries, then the message was dead-lettered.
    assert await deliveries(runtime) == [("jobs", 9, 1), ("jobs", 9, 2), ("jobs", 9, 3), ("jobs-dlq", 9, 1)]
    assert runtime.queues.pending("jobs") == []


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
    with pytest.raises(JsException, match="delaySeconds"):
        await jobs.send({"n": 1}, delaySeconds=-1)
    with pytest.raises(
        JsException, match=r"TypeError: sendBatch\(\) requires at least one message"
    ):  # workerd's
        await jobs.sendBatch([])
    with pytest.raises(JsException, match="unknown option"):
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


async def test_the_batch_window_starts_at_the_first_message_and_is_not_extended(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    await send(runtime, {"kind": "ok", "n": 1})
    await clock.advance(600)
    await send(runtime, {"kind": "ok", "n": 2})
    await clock.advance(399)
    assert await deliveries(runtime) == []
    await clock.advance(1)  # max_batch_timeout (1 s) after the first message, not after the second
    assert await deliveries(runtime) == [("jobs", 1, 1), ("jobs", 2, 1)]


async def test_a_batch_that_fills_inside_the_window_goes_at_once(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    await send(runtime, {"kind": "ok", "n": 1})
    await clock.advance(500)
    await send(runtime, {"kind": "ok", "n": 2}, {"kind": "ok", "n": 3}, {"kind": "ok", "n": 4})
    await clock.advance(0)
    assert await deliveries(runtime) == [("jobs", 1, 1), ("jobs", 2, 1), ("jobs", 3, 1)]
    await clock.advance(999)  # the leftover waits for a window of its own
    assert len(await deliveries(runtime)) == 3
    await clock.advance(1)
    assert (await deliveries(runtime))[3:] == [("jobs", 4, 1)]


async def test_a_producers_delivery_delay_holds_every_message_back(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    later = runtime.env("conformance").LATER_JOBS  # delivery_delay = 5 on the producer binding
    await later.send({"kind": "ok", "n": 1})
    await later.send({"kind": "ok", "n": 2}, delaySeconds=0)  # an explicit delay wins
    await clock.advance(1_000)
    assert await deliveries(runtime) == [("jobs", 2, 1)]
    await clock.advance(5_000)
    assert await deliveries(runtime) == [("jobs", 2, 1), ("jobs", 1, 1)]


async def test_retry_with_delay_seconds(runtime: LocalRuntime, clock: VirtualClock) -> None:
    await send(runtime, {"kind": "retry-later", "n": 1})  # the handler retries it with delaySeconds=5
    await clock.advance(1_000)
    await clock.advance(5_999)
    assert await deliveries(runtime) == [("jobs", 1, 1)]
    await clock.advance(1)
    assert await deliveries(runtime) == [("jobs", 1, 1), ("jobs", 1, 2)]


async def test_retry_all_wins_over_later_acks(runtime: LocalRuntime, clock: VirtualClock) -> None:
    await send(runtime, {"kind": "retry-all", "n": 2}, {"kind": "ok", "n": 3})
    await clock.advance(1_000)
    assert await deliveries(runtime) == [("jobs", 2, 1), ("jobs", 3, 1)]
    # The handler acked message 3 after retryAll(): the first verdict stands, so both are queued again.
    pending = [(m.decoded_body()["n"], m.attempts) for m in runtime.queues.pending("jobs")]
    assert pending == [(2, 1), (3, 1)]


async def test_a_consumers_retry_delay_and_dropping_after_max_retries_without_a_dlq(
    runtime: LocalRuntime, clock: VirtualClock
) -> None:
    # jobs-dlq has no dead-letter queue of its own, max_retries 3 (the default) and retry_delay 2 s.
    runtime.faults.crash_consumer_next("jobs-dlq", n=4)
    await runtime.env("conformance").JOBS.sendBatch([{"body": {"kind": "retry", "n": 8}}])
    await clock.advance(3_000)  # three deliveries on jobs (max_retries 2), then moved to jobs-dlq: crash 1
    assert [m.attempts for m in runtime.queues.pending("jobs-dlq")] == [1]
    await clock.advance(1_999)
    assert [m.attempts for m in runtime.queues.pending("jobs-dlq")] == [1]
    await clock.advance(1)  # retry_delay elapsed: crash 2
    assert [m.attempts for m in runtime.queues.pending("jobs-dlq")] == [2]
    await clock.advance(4_000)  # crashes 3 and 4: the fourth delivery was the last one allowed
    assert runtime.queues.pending("jobs-dlq") == []
    assert [row for row in await deliveries(runtime) if row[0] == "jobs-dlq"] == []
