"""Static typing cases for tsumugi_performer, checked by test_performer_types.py (not a test module itself).

Each ``reveal_type`` line states the expected type in a trailing "revealed" comment; each line that must
be rejected ends in an "error" comment. Nothing here runs.
"""

from __future__ import annotations

from typing import Generic, TypeVar, reveal_type

import msgspec

from tsumugi_performer import HeartbeatAnswer, JobContext, Performer, RetryAfterError
from tsumugi_performer.testing import Returned, create_test_context, run_performer

T = TypeVar("T")


class Mail(msgspec.Struct):
    to: str


class SendMail(Performer[Mail, int]):
    async def perform(self, payload: Mail, ctx: JobContext) -> int:
        return len(payload.to)


class Base(Performer[T, None], Generic[T]):
    async def perform(self, payload: T, ctx: JobContext) -> None:
        return None


class ViaBase(Base[Mail]):
    pass


class WrongPayload(Performer[Mail, int]):
    async def perform(self, payload: int, ctx: JobContext) -> int:  # error
        return payload


async def cases(ctx: JobContext) -> None:
    reveal_type(SendMail.decode_payload({"to": "x"}))  # revealed: Mail
    reveal_type(ViaBase.decode_payload_json(b"{}"))  # revealed: Mail
    reveal_type(await SendMail().perform(Mail(to="x"), ctx))  # revealed: int
    reveal_type(await ctx.heartbeat(0.5))  # revealed: HeartbeatAnswer
    reveal_type((await ctx.heartbeat()).cancel_requested)  # revealed: bool
    reveal_type(ctx.deadline_at)  # revealed: int
    reveal_type(ctx.traceparent)  # revealed: str | None
    reveal_type(RetryAfterError(delay_ms=5).retry_at(1))  # revealed: int

    result = await run_performer(SendMail(), Mail(to="x"), create_test_context())
    reveal_type(result)  # revealed: Returned[int] | Raised
    if result.ok is True:
        reveal_type(result.value)  # revealed: int
    else:
        reveal_type(result.error)  # revealed: Exception
    if isinstance(result, Returned):
        reveal_type(result)  # revealed: Returned[int]
    _ = result.value  # error

    await run_performer(SendMail(), 42)  # error
    await ctx.heartbeat("half")  # error
    HeartbeatAnswer(accepted=True)  # error
