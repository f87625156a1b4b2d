"""``Slow``: works for ``seconds`` seconds, heartbeating each second with progress, and stops when cancelled.

With ``"quiet": true`` it never heartbeats (so never hears a cancel request): a job that goes silent.
"""

from __future__ import annotations

import msgspec

from tsumugi_performer import JobContext, Performer
from tsumugi_performer.entrypoint import time_source

__all__ = ["Slow", "SlowCancelledError", "SlowPayload"]


class SlowPayload(msgspec.Struct, frozen=True, kw_only=True):
    """``{"seconds": n}``, optionally ``"quiet": true``."""

    seconds: int
    quiet: bool = False


class SlowCancelledError(Exception):
    """Raised when the heartbeat answers that the job was cancelled (the job then ends CANCELLED)."""


class Slow(Performer[SlowPayload, int]):
    """Sleeps one second at a time on the host's time source; returns the seconds it worked."""

    async def perform(self, payload: SlowPayload, ctx: JobContext) -> int:
        """Work, heartbeat, and stop cooperatively on a cancel request."""
        clock = time_source()
        for second in range(payload.seconds):
            if payload.quiet:
                await clock.sleep_ms(1_000)
                continue
            answer = await ctx.heartbeat(second / payload.seconds)
            if answer.cancel_requested:
                raise SlowCancelledError(f"cancelled after {second}s of {payload.seconds}s")
            await clock.sleep_ms(1_000)
        return payload.seconds
