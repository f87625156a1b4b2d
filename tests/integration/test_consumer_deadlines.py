"""The consumer's attempt deadlines on a virtual clock: answers, timeouts, heartbeat extensions, many at once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import msgspec
import pytest

from tests.support.clock import START_MS, installed
from tsumugi_dev.clock import VirtualClock
from tsumugi_scheduler import consumer, deadlines
from tsumugi_scheduler.consumer import handle_batch
from tsumugi_scheduler.start_marks import MARK_DELAY_MS

NOW = START_MS
Heartbeat = Callable[..., Awaitable[dict[str, Any]]]


@pytest.fixture
def clock() -> Iterator[VirtualClock]:
    with installed(VirtualClock(NOW)) as virtual:
        yield virtual


class Shard:
    """Records reports with the virtual instant they arrived at; accepts every heartbeat."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.reports: dict[str, tuple[int, dict[str, Any]]] = {}
        self.started: dict[str, int] = {}
        self.start_calls = 0

    async def start_many(self, name: str, attempts: list[dict[str, Any]]) -> list[bool]:
        self.start_calls += 1
        for a in attempts:
            self.started[a["jobId"]] = self.clock.now_ms() - NOW
        return [True] * len(attempts)

    async def report(self, name: str, job_id: str, attempt: int, outcome: dict[str, Any]) -> dict[str, Any]:
        self.reports[job_id] = (self.clock.now_ms() - NOW, outcome)
        return {"accepted": True, "state": None}

    async def report_many(self, name: str, reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [await self.report(name, r["jobId"], r["attempt"], r["outcome"]) for r in reports]

    async def report_json(self, name: str, reports: str) -> str:
        """``report_many`` with JSON text in and out, as the shard host answers it (ADR-0166)."""
        return json.dumps(await self.report_many(name, json.loads(reports)))

    async def heartbeat(self, *args: Any) -> dict[str, Any]:
        return {"accepted": True, "cancel_requested": False}


class Namespace:
    def __init__(self, shard: Shard) -> None:
        self.shard = shard

    def getByName(self, name: str) -> Shard:
        return self.shard


class Env:
    def __init__(self, shard: Shard) -> None:
        self.JOB_SHARD = Namespace(shard)


class Message:
    def __init__(self, local: str, timeout_ms: int) -> None:
        self.body = {
            "jobId": f"Slow#0:{local}",
            "binding": "Slow",
            "attempt": 1,
            "payload": local,
            "timeoutMs": timeout_ms,
            "claimRequired": False,
            "maxAttempts": 1,
        }
        self.acked = 0

    def ack(self) -> None:
        self.acked += 1


class Batch:
    def __init__(self, messages: list[Message]) -> None:
        self.messages = messages


class Ctx:
    def __init__(self, performer: Any) -> None:
        self.exports = {"Slow": performer}


class Scripted:
    """A performer whose behaviour per payload is a script: sleep, heartbeat, answer."""

    def __init__(self, clock: VirtualClock, scripts: dict[str, list[tuple[str, int]]]) -> None:
        self.clock = clock
        self.scripts = scripts
        self.finished: dict[str, int] = {}

    async def run_attempt(self, request: str, heartbeat: Heartbeat) -> dict[str, Any]:
        local = str(msgspec.json.decode(request)["payload"])  # the dispatch crosses as JSON text (ADR-0043)
        for step, value in self.scripts.get(local, []):
            if step == "sleep":
                await self.clock.sleep_ms(value)
            else:
                await heartbeat()
        self.finished[local] = self.clock.now_ms() - NOW
        return {"ok": True, "result": local}


def timed_out(local: str, timeout_ms: int) -> dict[str, Any]:
    return {
        "ok": False,
        "error": f"TsumugiTimeoutError: job timed out (Slow#0:{local}, {timeout_ms}ms)",
        "retryable": True,
        "retryAt": None,
        "outcomeUnknown": True,
    }


async def run(clock: VirtualClock, performer: Scripted, messages: list[Message], until_ms: int) -> Shard:
    shard = Shard(clock)
    batch = clock.spawn(handle_batch(Batch(messages), Env(shard), Ctx(performer)), name="batch")
    await clock.advance(until_ms)
    assert batch.done()
    assert [m.acked for m in messages] == [1] * len(messages)
    return shard


async def test_an_answer_within_the_timeout_is_reported_and_leaves_no_timer(clock: VirtualClock) -> None:
    performer = Scripted(clock, {"quick": [], "slowish": [("sleep", 900)]})
    shard = await run(clock, performer, [Message("quick", 1_000), Message("slowish", 1_000)], 950)
    assert shard.reports == {
        "Slow#0:quick": (0, {"ok": True, "result": "quick"}),
        "Slow#0:slowish": (900, {"ok": True, "result": "slowish"}),
    }
    assert (clock.sleepers, clock.next_timer_at()) == (0, None)  # nothing waits for the 1 s deadline


async def test_the_starts_of_a_batch_are_marked_running_in_one_call_before_the_performers_finish(
    clock: VirtualClock,
) -> None:
    # ADR-0052: the marks are not awaited before the performers start; those still running after
    # MARK_DELAY_MS go to the shard together, and a quick attempt is never marked.
    performer = Scripted(clock, {"a": [("sleep", 500)], "b": [("sleep", 500)], "quick": [("sleep", 99)]})
    messages = [Message("a", 1_000), Message("b", 1_000), Message("quick", 1_000)]
    shard = await run(clock, performer, messages, 600)
    assert shard.started == {"Slow#0:a": MARK_DELAY_MS, "Slow#0:b": MARK_DELAY_MS}
    assert shard.start_calls == 1
    assert set(shard.reports) == {"Slow#0:a", "Slow#0:b", "Slow#0:quick"}


async def test_a_batch_of_quick_attempts_sends_no_marks_and_leaves_no_timer(clock: VirtualClock) -> None:
    performer = Scripted(clock, {"x": [], "y": [("sleep", 50)]})
    shard = await run(clock, performer, [Message("x", 1_000), Message("y", 1_000)], 60)
    assert (shard.start_calls, len(shard.reports)) == (0, 2)
    assert (clock.sleepers, clock.next_timer_at()) == (0, None)


async def test_an_attempt_past_its_deadline_is_reported_timed_out_and_its_call_runs_on(
    clock: VirtualClock,
) -> None:
    performer = Scripted(clock, {"late": [("sleep", 3_000)]})
    shard = await run(clock, performer, [Message("late", 1_000)], 1_000)
    assert shard.reports == {"Slow#0:late": (1_000, timed_out("late", 1_000))}
    assert consumer._abandoned  # pyright: ignore[reportPrivateUsage]
    await clock.advance(2_000)
    assert performer.finished == {"late": 3_000}  # abandoned, not cancelled
    assert not consumer._abandoned  # pyright: ignore[reportPrivateUsage]


async def test_an_accepted_heartbeat_restarts_the_timeout(clock: VirtualClock) -> None:
    # beats: deadline 1,000 -> 1,800, answers at 1,700; beats-too-little: times out at 1,800; silent: at 1,000.
    scripts = {
        "beats": [("sleep", 800), ("heartbeat", 0), ("sleep", 900)],
        "beats-too-little": [("sleep", 800), ("heartbeat", 0), ("sleep", 1_100)],
        "silent": [("sleep", 1_700)],
    }
    performer = Scripted(clock, scripts)
    messages = [Message(local, 1_000) for local in scripts]
    shard = await run(clock, performer, messages, 2_000)
    assert shard.reports == {
        "Slow#0:beats": (1_700, {"ok": True, "result": "beats"}),
        "Slow#0:beats-too-little": (1_800, timed_out("beats-too-little", 1_000)),
        "Slow#0:silent": (1_000, timed_out("silent", 1_000)),
    }


async def test_each_of_many_attempts_times_out_at_its_own_deadline(clock: VirtualClock) -> None:
    # Later messages have earlier deadlines, so the shared watcher must wake earlier than it planned.
    timeouts = {f"t{ms}": ms for ms in (5_000, 3_000, 4_000, 1_000, 2_000)}
    performer = Scripted(clock, {local: [("sleep", 10_000)] for local in timeouts})
    shard = await run(clock, performer, [Message(local, ms) for local, ms in timeouts.items()], 5_000)
    assert shard.reports == {f"Slow#0:{local}": (ms, timed_out(local, ms)) for local, ms in timeouts.items()}
    await clock.advance(10_000)  # let the abandoned calls end before the test does


async def test_a_later_attempt_with_an_earlier_deadline_is_not_held_to_the_watchers_plan(
    clock: VirtualClock,
) -> None:
    performer = Scripted(clock, {"long": [("sleep", 10_000)], "short": [("sleep", 10_000)]})
    shard = Shard(clock)
    env, ctx = Env(shard), Ctx(performer)
    first = clock.spawn(handle_batch(Batch([Message("long", 5_000)]), env, ctx), name="first")
    await clock.advance(500)  # the watcher now sleeps until 5,000
    second = clock.spawn(handle_batch(Batch([Message("short", 1_000)]), env, ctx), name="second")
    await clock.advance(9_500)
    assert (first.done(), second.done()) == (True, True)
    assert shard.reports == {
        "Slow#0:long": (5_000, timed_out("long", 5_000)),
        "Slow#0:short": (1_500, timed_out("short", 1_000)),
    }
    await clock.advance(1_000)


async def test_finished_attempts_do_not_pile_up_while_a_long_one_runs(clock: VirtualClock) -> None:
    performer = Scripted(clock, {"long": [("sleep", 50_000)]})
    shard = Shard(clock)
    long_batch = clock.spawn(
        handle_batch(Batch([Message("long", 60_000)]), Env(shard), Ctx(performer)), name="long"
    )
    await clock.settle()
    for round_ in range(4):
        quick = [Message(f"q{round_}-{i}", 60_000) for i in range(200)]
        await handle_batch(Batch(quick), Env(shard), Ctx(performer))
    watch = deadlines._current[0]  # pyright: ignore[reportPrivateUsage]
    assert watch is not None
    assert len(watch._heap) < 300  # pyright: ignore[reportPrivateUsage]  # 801 entries without pruning
    assert len(shard.reports) == 800
    await clock.advance(50_000)
    assert long_batch.done()
    assert shard.reports["Slow#0:long"] == (50_000, {"ok": True, "result": "long"})
    assert (clock.sleepers, clock.next_timer_at()) == (0, None)


async def test_a_cancelled_wait_stops_watching_its_attempt(clock: VirtualClock) -> None:
    performer = Scripted(clock, {"hang": [("sleep", 5_000)]})
    shard = Shard(clock)
    batch = clock.spawn(handle_batch(Batch([Message("hang", 1_000)]), Env(shard), Ctx(performer)), name="b")
    await clock.settle()
    batch.cancel()
    await asyncio.gather(batch, return_exceptions=True)
    await clock.advance(1_000)
    assert shard.reports == {}  # the watcher woke nobody: the cancelled wait left it
    await clock.advance(4_000)
    assert performer.finished == {"hang": 5_000}
