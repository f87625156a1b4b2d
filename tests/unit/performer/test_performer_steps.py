"""The performer's side of durable steps (ADR-0144, ADR-0145, ADR-0147), against a fake shard channel."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.options import MAX_SAFE_INTEGER
from tsumugi_core.steps import StepAnswer, StepCommand, StepView
from tsumugi_core.testing import FixedClock
from tsumugi_performer import (
    JobContext,
    NonRetryableError,
    Performer,
    StepFencedError,
    StepResultError,
    StepSaveLostError,
    StepsUnavailableError,
)
from tsumugi_performer._steps import SuspendSignal
from tsumugi_performer.entrypoint import PerformerRunner
from tsumugi_performer.testing import Raised, run_performer

JOB = "Order#0:job1"


class Shard:
    """Answers step commands as a shard would for the live attempt; records them."""

    def __init__(self, accepted: bool = True) -> None:
        self.steps: dict[str, StepView] = {}
        self.commands: list[StepCommand] = []
        self.accepted = accepted

    async def __call__(self, text: str) -> str:
        command = msgspec.json.decode(text, type=StepCommand)
        self.commands.append(command)
        if not self.accepted:
            return msgspec.json.encode(StepAnswer(op=command.op, accepted=False)).decode()
        if command.op == "load":
            return msgspec.json.encode(
                StepAnswer(op="load", accepted=True, steps=list(self.steps.values()))
            ).decode()
        name = str(command.name)
        if name not in self.steps or self.steps[name].state != "done":
            state = "started" if command.op == "begin" else "done"
            self.steps[name] = StepView(name=name, state=state, result=command.result)
        return msgspec.json.encode(
            StepAnswer(op=command.op, accepted=True, steps=[self.steps[name]])
        ).decode()


class Charge(msgspec.Struct, frozen=True):
    amount: int


def _ctx(
    shard: Any, clock: FixedClock, *, at_most_once: bool = False, ends_at: int | None = None
) -> JobContext:
    return JobContext(
        job_id=JOB,
        attempt=1,
        max_attempts=3,
        deadline_at=clock.now_ms() + 60_000,
        heartbeat=_no_heartbeat,
        clock=clock,
        steps=shard,
        at_most_once=at_most_once,
        invocation_ends_at=ends_at,
    )


async def _no_heartbeat(progress: float | None) -> Any:
    raise AssertionError("no heartbeat expected")


async def test_a_step_runs_once_and_a_replay_reads_its_typed_result() -> None:
    shard, clock, runs = Shard(), FixedClock(1_000), []

    async def charge(amount: int) -> Charge:
        runs.append(amount)
        return Charge(amount=amount)

    first = await _ctx(shard, clock).step("charge", charge, 12)
    again = await _ctx(shard, clock).step("charge", charge, 12)  # a later attempt: replayed
    assert (first, again, runs) == (Charge(amount=12), Charge(amount=12), [12])
    assert [c.op for c in shard.commands] == ["load", "save", "load"]


async def test_a_repeated_name_gets_an_index() -> None:
    ctx = _ctx(Shard(), FixedClock(0))
    for n in range(3):
        await ctx.step("item", lambda n=n: n)
    assert ctx.step_names == ["item", "item#2", "item#3"]


@pytest.mark.parametrize("name", ["", "a#b", "x" * 193, "bad\n"])
async def test_a_bad_step_name_is_refused_naming_the_rule(name: str) -> None:
    with pytest.raises(ValueError, match="step name"):
        await _ctx(Shard(), FixedClock(0)).step(name, lambda: 1)


async def test_a_fenced_invocation_stops_at_its_first_step() -> None:
    with pytest.raises(StepFencedError, match="no longer the job's live attempt"):
        await _ctx(Shard(accepted=False), FixedClock(0)).step("charge", lambda: 1)


async def test_a_result_that_is_not_json_fails_naming_the_step() -> None:
    with pytest.raises(StepResultError, match="step charge"):
        await _ctx(Shard(), FixedClock(0)).step("charge", lambda: object())


async def test_an_old_scheduler_answering_a_heartbeat_is_named() -> None:
    async def old(text: str) -> str:
        return '{"accepted": true, "cancel_requested": false}'

    with pytest.raises(StepsUnavailableError, match="predates durable steps"):
        await _ctx(old, FixedClock(0)).step("charge", lambda: 1)


async def test_an_at_most_once_step_is_begun_before_it_runs_and_not_rerun_when_unknown() -> None:
    shard, clock = Shard(), FixedClock(0)
    await _ctx(shard, clock, at_most_once=True).step("charge", lambda: 1)
    assert [c.op for c in shard.commands] == ["load", "begin", "save"]
    shard.steps["refund"] = StepView(name="refund", state="started")  # an attempt ended without an outcome
    with pytest.raises(Exception, match="never run again") as info:
        await _ctx(shard, clock, at_most_once=True).step("refund", lambda: 2)
    assert type(info.value).__name__ == "StepOutcomeUnknownError"


async def test_a_sleep_stores_its_wake_instant_and_suspends_until_it() -> None:
    shard, clock = Shard(), FixedClock(10_000)
    with pytest.raises(SuspendSignal) as info:
        await _ctx(shard, clock).sleep(timedelta(hours=1))
    assert info.value.suspension.until == 10_000 + 3_600_000
    clock.advance(3_600_000)
    await _ctx(shard, clock).sleep(timedelta(minutes=5))  # replayed: the stored hour has passed
    assert shard.steps["sleep"].result == '{"until":3610000}'


async def test_sleep_until_needs_an_aware_datetime_and_sleep_a_timedelta() -> None:
    ctx = _ctx(Shard(), FixedClock(0))
    with pytest.raises(ValueError, match="aware datetime"):
        await ctx.sleep_until(datetime(2026, 1, 1))
    with pytest.raises(TypeError, match="timedelta"):
        await ctx.sleep(60)  # type: ignore[arg-type]
    await ctx.sleep_until(datetime(1970, 1, 1, tzinfo=UTC))  # past: returns at once


async def test_between_steps_the_job_continues_in_a_new_invocation_near_the_end() -> None:
    clock = FixedClock(0)
    ctx = _ctx(Shard(), clock, ends_at=14 * 60_000)

    def work() -> int:
        clock.advance(5 * 60_000)
        return 1

    await ctx.step("a", work)  # 5 minutes: 9 left, under twice the longest step
    with pytest.raises(SuspendSignal) as info:
        await ctx.step("b", work)
    assert (info.value.suspension.reason, info.value.suspension.until) == ("continue", clock.now_ms())
    assert (info.value.suspension.step, clock.now_ms()) == ("b", 5 * 60_000)  # b did not run


async def test_the_first_step_of_an_invocation_always_runs() -> None:
    clock = FixedClock(0)
    assert await _ctx(Shard(), clock, ends_at=30_000).step("a", lambda: 7) == 7


async def test_run_performer_reports_a_sleep_as_needing_a_shard() -> None:
    class Sleeper:
        async def perform(self, payload: int, ctx: JobContext) -> int:
            await ctx.sleep(timedelta(seconds=payload))
            return payload

    result = await run_performer(Sleeper(), 5, _ctx(None, FixedClock(0)))
    assert isinstance(result, Raised)
    assert isinstance(result.error, StepsUnavailableError)


class _ChargesThenFails(Performer[None, None]):
    async def perform(self, payload: None, ctx: JobContext) -> None:
        with contextlib.suppress(Exception):  # a performer that swallows the step's error
            await ctx.step("charge", lambda: 1)
        raise RuntimeError("a later failure of its own")


def _lost_save_shard() -> Any:
    shard = Shard()

    async def heartbeat(text: str) -> str:
        if msgspec.json.decode(text, type=StepCommand).op == "save":
            raise ConnectionError("Network connection lost.")  # the body ran; its result is not stored
        return await shard(text)

    return heartbeat


def _dispatch(*, at_most_once: bool) -> str:
    return msgspec.json.encode(
        {
            "jobId": JOB,
            "attempt": 1,
            "maxAttempts": 3,
            "payload": None,
            "deadlineAt": 10**12,
            "timeoutMs": 60_000,
            "claimRequired": at_most_once,
        }
    ).decode()


async def test_a_lost_save_of_an_at_most_once_step_fails_the_call_not_the_attempt() -> None:
    # Answered as a failure, the attempt would clear the step's mark and a retry would run it again (seed 152
    # of bench/simulate.py found it); a failed call is an unknown outcome: the job stalls, the mark stays.
    runner = PerformerRunner(_ChargesThenFails)
    with pytest.raises(StepSaveLostError, match=r"step charge of at-most-once job .* ran, but its result"):
        await runner.run(_dispatch(at_most_once=True), _lost_save_shard(), None)
    # At least once, the step runs again in the retry: the attempt is answered as the failure it was.
    answer = msgspec.json.decode(await runner.run(_dispatch(at_most_once=False), _lost_save_shard(), None))
    assert answer["ok"] is False
    assert "a later failure of its own" in answer["error"]


# -- Bad input to the step API fails the job at once; a time already past is no error (ADR-0183) ---------------


async def test_a_negative_sleep_returns_at_once_as_asyncio_sleep_does() -> None:
    shard, clock = Shard(), FixedClock(10_000)
    await _ctx(shard, clock).sleep(timedelta(seconds=-5))  # no SuspendSignal: the time to wake has come
    assert shard.steps["sleep"].result == '{"until":10000}'  # stored as now, never as a past instant


async def test_a_sleep_computed_from_the_clock_replays_after_its_wake() -> None:
    # The wake is stored on the first run; a replay's argument is not used, so its sign must not matter: after
    # the wake, the same code computes a negative duration.
    shard, clock = Shard(), FixedClock(10_000)
    target = 70_000

    async def sleep_until_target(ctx: JobContext) -> None:
        await ctx.sleep(timedelta(milliseconds=target - clock.now_ms()))

    with pytest.raises(SuspendSignal):
        await sleep_until_target(_ctx(shard, clock))
    clock.advance(61_000)
    await sleep_until_target(_ctx(shard, clock))  # the replay, 1 s past its wake: goes on
    assert shard.steps["sleep"].result == '{"until":70000}'


async def test_a_wait_with_a_negative_timeout_waits_as_one_of_zero() -> None:
    clock, sent = FixedClock(10_000), []

    async def shard(text: str) -> str:
        command = msgspec.json.decode(text, type=StepCommand)
        sent.append(command)
        waiting = [StepView(name=str(command.name), state="waiting", result=f'{{"until":{command.until}}}')]
        return msgspec.json.encode(
            StepAnswer(op=command.op, accepted=True, steps=waiting if command.op == "wait" else [])
        ).decode()

    with pytest.raises(SuspendSignal) as info:
        await _ctx(shard, clock).wait_for_event("paid", key="o1", timeout=timedelta(minutes=-1))
    assert (
        info.value.suspension.until == 10_000
    )  # due at once: the shard times it out unless an event is kept
    assert [(c.op, c.until) for c in sent] == [("load", None), ("wait", 10_000)]


async def test_a_wake_or_timeout_past_the_latest_safe_instant_is_that_instant() -> None:
    # Past 2**53 - 1 ms a number no longer crosses to JavaScript exactly (the event box's RPC refused it as a
    # BigInt, and the attempt failed, retried, on every call): capped, as every computed instant is.
    shard, clock = Shard(), FixedClock(10_000)
    with pytest.raises(SuspendSignal) as info:
        await _ctx(shard, clock).sleep(timedelta.max)
    assert info.value.suspension.until == MAX_SAFE_INTEGER
    assert shard.steps["sleep"].result == f'{{"until":{MAX_SAFE_INTEGER}}}'


async def _sleep_an_int(ctx: JobContext) -> None:
    await ctx.sleep(60)  # type: ignore[arg-type]


async def _sleep_until_naive(ctx: JobContext) -> None:
    await ctx.sleep_until(datetime(2026, 1, 1))


async def _sleep_until_text(ctx: JobContext) -> None:
    await ctx.sleep_until("2026-01-01T00:00:00Z")  # type: ignore[arg-type]


async def _sleep_named_badly(ctx: JobContext) -> None:
    await ctx.sleep(timedelta(seconds=1), name="a#b")


async def _step_named_badly(ctx: JobContext) -> None:
    await ctx.step("charge#1", lambda: 1)


async def _step_of_no_function(ctx: JobContext) -> None:
    await ctx.step("charge", 42)  # type: ignore[arg-type]


async def _wait_named_badly(ctx: JobContext) -> None:
    await ctx.wait_for_event("", key="o1", timeout=timedelta(minutes=1))


async def _wait_with_no_key(ctx: JobContext) -> None:
    await ctx.wait_for_event("paid", key="", timeout=timedelta(minutes=1))


async def _wait_an_int(ctx: JobContext) -> None:
    await ctx.wait_for_event("paid", key="o1", timeout=60)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("call", "field", "kind"),
    [
        (_sleep_an_int, "duration", TypeError),
        (_sleep_until_naive, "at", ValueError),
        (_sleep_until_text, "at", TypeError),
        (_sleep_named_badly, "name", ValueError),
        (_step_named_badly, "name", ValueError),
        (_step_of_no_function, "fn", TypeError),
        (_wait_named_badly, "name", ValueError),
        (_wait_with_no_key, "key", ValueError),
        (_wait_an_int, "timeout", TypeError),
    ],
)
async def test_a_bad_argument_to_the_step_api_names_the_field_and_is_not_retried(
    call: Any, field: str, kind: type[Exception]
) -> None:
    with pytest.raises(kind) as info:
        await call(_ctx(Shard(), FixedClock(0)))
    error = info.value
    assert isinstance(error, InvalidFieldError)
    assert isinstance(error, NonRetryableError)  # the same call fails the same way on every attempt
    assert error.field == field
    assert error.rule in str(error)


class _SleepsBackwards(Performer[None, None]):
    async def perform(self, payload: None, ctx: JobContext) -> None:
        await ctx.sleep(timedelta(seconds=1), name="a#b")


async def test_a_bad_argument_to_the_step_api_fails_the_attempt_for_good() -> None:
    answer = msgspec.json.decode(
        await PerformerRunner(_SleepsBackwards).run(_dispatch(at_most_once=False), Shard(), None)
    )
    assert (answer["ok"], answer["retryable"]) == (False, False)
    assert "name may hold only letters" in answer["error"]
