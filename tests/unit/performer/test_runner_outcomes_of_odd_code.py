"""What a performer's own code can do to its attempt's outcome: every case answers an outcome the shard stores.

A review proved each of these ended otherwise: a lone surrogate in a result or an error made the encoding of the
answer raise (the consumer read an unknown outcome: at most once, the job STALLED); an exception whose str()
raises escaped the runner; KeyboardInterrupt and SystemExit from perform ended the whole local runtime; a
CancelledError left the job to the reaper; text as heartbeat progress was read as a step command.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from tsumugi_core.exceptions import InvalidTypeError
from tsumugi_performer import JobContext, Performer
from tsumugi_performer.entrypoint import PerformerRunner
from tsumugi_performer.testing import create_test_context

JOB = "MAIL#0:job000000000000000000001"
DISPATCH = msgspec.json.encode(
    {"jobId": JOB, "attempt": 1, "maxAttempts": 3, "payload": None, "deadlineAt": 10**13, "timeoutMs": 60_000}
).decode()


class _StrRaises(Exception):
    def __str__(self) -> str:
        raise RuntimeError("str exploded")


class _StrIsNotText(Exception):
    def __str__(self) -> Any:
        return 5


def _performer(action: Any) -> type[Performer[Any, Any]]:
    class Odd(Performer[Any, Any]):
        async def perform(self, payload: Any, ctx: JobContext) -> Any:
            return action()

    return Odd


def _raise(error: BaseException) -> Any:
    def act() -> Any:
        raise error

    return act


async def _outcome(action: Any) -> dict[str, Any]:
    answer = await PerformerRunner(_performer(action)).run(DISPATCH, None, None)
    return msgspec.json.decode(answer)


async def test_a_result_holding_a_lone_surrogate_completes_with_a_null_result() -> None:
    assert await _outcome(lambda: {"name": "caf\udce9"}) == {"ok": True, "result": None}


async def test_an_error_holding_a_lone_surrogate_fails_the_attempt_with_its_text_escaped() -> None:
    outcome = await _outcome(_raise(ValueError("caf\udce9")))
    assert (outcome["ok"], outcome["retryable"]) == (False, True)
    assert outcome["error"].startswith("ValueError: caf\\udce9")


@pytest.mark.parametrize("error", [_StrRaises(), _StrIsNotText()], ids=["raises", "not-text"])
async def test_an_exception_whose_str_fails_still_fails_the_attempt_by_its_name(error: Exception) -> None:
    outcome = await _outcome(_raise(error))
    assert (outcome["ok"], outcome["retryable"]) == (False, True)
    assert outcome["error"].startswith(f"{type(error).__name__}: <its str() failed>")


@pytest.mark.parametrize(
    "error",
    [KeyboardInterrupt(), SystemExit(3), GeneratorExit(), asyncio.CancelledError()],
    ids=["KeyboardInterrupt", "SystemExit", "GeneratorExit", "CancelledError"],
)
async def test_a_base_exception_from_perform_is_the_attempts_failure_not_the_processs(
    error: BaseException,
) -> None:
    outcome = await _outcome(_raise(error))
    assert (outcome["ok"], outcome["retryable"]) == (False, True)
    assert outcome["error"].startswith(type(error).__name__)


async def test_a_real_cancellation_of_the_attempt_still_propagates() -> None:
    started = asyncio.Event()

    async def hang() -> Any:
        started.set()
        await asyncio.sleep(3_600)  # cancelled below, never waited out

    class Hangs(Performer[Any, Any]):
        async def perform(self, payload: Any, ctx: JobContext) -> Any:
            return await hang()

    task = asyncio.create_task(PerformerRunner(Hangs).run(DISPATCH, None, None))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.parametrize("progress", ["0.5", {"p": 1}, True], ids=["text", "object", "bool"])
async def test_heartbeat_progress_that_is_not_a_number_is_refused_naming_it(progress: Any) -> None:
    ctx = create_test_context(job_id=JOB)
    with pytest.raises(InvalidTypeError, match="progress must be a number from 0 to 1 or None"):
        await ctx.heartbeat(progress)
    assert ctx.heartbeats == []
    await ctx.heartbeat(0.5)
    assert ctx.heartbeats == [0.5]


async def test_a_dispatch_nested_past_the_decoders_depth_fails_the_job_not_the_runner() -> None:
    deep = "[" * 200_000 + "]" * 200_000  # past the C recursion limit of 3.11 and 3.13 alike
    dispatch = DISPATCH.replace('"payload":null', f'"payload":{deep}')
    assert deep in dispatch
    answer = await PerformerRunner(_performer(lambda: "never")).run(dispatch, None, None)
    outcome = msgspec.json.decode(answer)
    assert (outcome["ok"], outcome["retryable"]) == (False, False)
    assert outcome["error"].startswith("NonRetryableError: invalid dispatch for Odd: maximum recursion depth")
