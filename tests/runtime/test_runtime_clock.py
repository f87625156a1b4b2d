"""The virtual clock: timers in order, tasks that sleep on virtual time, and when the loop counts as settled."""

from __future__ import annotations

import asyncio

import pytest

from tsumugi_dev.clock import VirtualClock


async def test_virtual_clock_fires_timers_in_order_and_only_when_due() -> None:
    clock = VirtualClock(1_000)
    fired: list[tuple[str, int]] = []
    clock.call_at(3_000, lambda: fired.append(("b", clock.now_ms())))
    clock.call_at(2_000, lambda: fired.append(("a", clock.now_ms())))
    clock.call_at(3_000, lambda: fired.append(("c", clock.now_ms())))
    clock.call_at(9_000, lambda: fired.append(("never", clock.now_ms()))).cancel()
    await clock.advance(1_999)
    assert fired == [("a", 2_000)]
    await clock.advance(10_000)
    assert fired == [("a", 2_000), ("b", 3_000), ("c", 3_000)]
    assert clock.now_ms() == 12_999
    with pytest.raises(ValueError, match="ms must be >= 0"):
        await clock.advance(-1)


async def test_a_tracked_task_sleeping_on_virtual_time_does_not_block_advance() -> None:
    clock = VirtualClock(0)
    woke: list[int] = []

    async def sleeper() -> None:
        for _ in range(3):
            await clock.sleep_ms(1_000)
            woke.append(clock.now_ms())

    task = clock.spawn(sleeper(), name="sleeper")
    await clock.advance(0)
    assert (woke, clock.sleepers) == ([], 1)
    await clock.advance(2_500)
    assert woke == [1_000, 2_000]
    await clock.advance(500)
    assert woke == [1_000, 2_000, 3_000]
    assert task.done()
    assert clock.sleepers == 0
    await clock.aclose()


async def test_settle_drains_runnable_work_even_while_another_task_sleeps() -> None:
    clock = VirtualClock(0)
    steps: list[int] = []

    async def busy() -> None:
        for i in range(200):  # many hops through the loop, none of them on virtual time
            await asyncio.sleep(0)
            steps.append(i)

    clock.spawn(clock.sleep_ms(60_000), name="long sleep")
    clock.spawn(busy(), name="busy")
    await clock.advance(0)
    assert len(steps) == 200
    assert clock.sleepers == 1
    await clock.aclose()


async def test_settle_waits_for_outside_io_when_nobody_sleeps() -> None:
    clock = VirtualClock(0)

    async def off_loop() -> int:
        # Work in a thread: nothing is runnable on the loop meanwhile, yet the task is not settled.
        return await asyncio.get_running_loop().run_in_executor(None, sum, range(100_000))

    task = clock.spawn(off_loop(), name="thread")
    await clock.settle()
    assert task.done()
    assert task.result() == sum(range(100_000))


async def test_a_sleep_of_zero_or_less_only_yields() -> None:
    clock = VirtualClock(5)
    await clock.sleep_ms(0)
    await clock.sleep_ms(-3)
    assert clock.now_ms() == 5
    assert clock.next_timer_at() is None


async def test_a_cancelled_sleep_leaves_no_timer_behind() -> None:
    clock = VirtualClock(0)
    task = asyncio.ensure_future(clock.sleep_ms(1_000))
    await asyncio.sleep(0)
    assert (clock.sleepers, clock.next_timer_at()) == (1, 1_000)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (clock.sleepers, clock.next_timer_at()) == (0, None)
