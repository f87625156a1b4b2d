"""The simulated system's performers: work for a while (in the runtime's time), heartbeat, maybe fail.

``SimWork`` payload: ``{"work_ms": int, "beat_ms": int | None, "fail": None | "retryable" | "fatal"}``. It works
``work_ms`` in steps, heartbeating every ``beat_ms`` (never when None; a ``beat_ms`` longer than the timeout is a
performer that heartbeats too slowly, a ``work_ms`` past it one that hangs), stops when a heartbeat says the job
was cancelled, and then fails as ``fail`` says. ``SimNotice`` accepts any notice and returns its state.
"""

from __future__ import annotations

from typing import Any

import msgspec

from tsumugi_core.exceptions import TsumugiError
from tsumugi_performer import JobContext, NonRetryableError, Performer
from tsumugi_performer.entrypoint import time_source
from tsumugi_simulation._ledger import SimulatedPerformerError

__all__ = ["SimNotice", "SimWork", "WorkPayload"]


class WorkPayload(msgspec.Struct, frozen=True, kw_only=True):
    """What one simulated job does."""

    work_ms: int = 10
    beat_ms: int | None = None
    fail: str | None = None
    seq: int = 0
    """The workload's number for the job (makes payloads distinct)."""
    spawn: list[int] = []
    """Inside a flow: children to spawn on the same binding, one per entry (its ``work_ms``), on success."""


class SimCancelledError(TsumugiError):
    """The heartbeat said the job was cancelled; the performer stops."""


class SimWork(Performer[WorkPayload, int]):
    """Works ``work_ms``, heartbeating every ``beat_ms``; answers the payload's ``seq``."""

    async def perform(self, payload: WorkPayload, ctx: JobContext) -> int:
        """Work in virtual time; fail as the payload says."""
        clock = time_source()
        left = payload.work_ms
        step = payload.beat_ms or left
        while left > 0:
            pause = min(step, left)
            await clock.sleep_ms(pause)
            left -= pause
            if payload.beat_ms is not None and left > 0:
                answer = await ctx.heartbeat(None)
                if answer.cancel_requested:
                    raise SimCancelledError(f"cancelled with {left} ms of work left")
        if payload.fail == "fatal":
            raise NonRetryableError(f"simulated fatal failure of job {payload.seq}")
        if payload.fail == "retryable":
            raise SimulatedPerformerError(f"simulated retryable failure of job {payload.seq}")
        for i, work_ms in enumerate(payload.spawn):
            ctx.spawn(f"s{i}", type(self).__name__, {"work_ms": work_ms, "seq": payload.seq * 100 - i})
        return payload.seq


class SimNotice(Performer[Any, Any]):
    """Receives a failure or settled notice; answers its state."""

    async def perform(self, payload: Any, ctx: JobContext) -> Any:
        """Nothing to do: the ledger records the notice."""
        notice: dict[str, Any] = payload if isinstance(payload, dict) else {}  # pyright: ignore[reportUnknownVariableType]
        return notice.get("state")
