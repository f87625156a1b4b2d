"""The simulated system's performers: work for a while (in the runtime's time), heartbeat, maybe fail.

A step job (``steps``, ``sleep_ms`` or ``event_key`` set) first runs ``steps`` durable steps (``s0``, ``s1``,
...; each body works ``step_ms``), then sleeps ``sleep_ms``, then waits for event ``sim``/``event_key`` up to
``event_timeout_ms`` (a timeout is caught: the job goes on), then one more step ``last``; everything it does
is written to the seed's `StepLog` for the step invariants (ADR-0157). Then it works as below.

``SimWork`` payload: ``{"work_ms": int, "beat_ms": int | None, "fail": None | "retryable" | "fatal"}``. It works
``work_ms`` in steps, heartbeating every ``beat_ms`` (never when None; a ``beat_ms`` longer than the timeout is a
performer that heartbeats too slowly, a ``work_ms`` past it one that hangs), stops when a heartbeat says the job
was cancelled, and then fails as ``fail`` says. ``SimNotice`` accepts any notice and returns its state.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import msgspec

from tsumugi_core.exceptions import TsumugiError
from tsumugi_performer import EventTimeoutError, JobContext, NonRetryableError, Performer
from tsumugi_performer.entrypoint import time_source
from tsumugi_simulation._ledger import SimulatedPerformerError
from tsumugi_simulation._steplog import SleepRecord, WaitRecord, current_step_log

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
    steps: int = 0
    """Durable steps run before anything else (0: none)."""
    step_ms: int = 0
    """How long each step's body works."""
    sleep_ms: int | None = None
    """A ``ctx.sleep`` after the steps (None: none)."""
    event_key: str | None = None
    """A ``ctx.wait_for_event("sim", key=event_key)`` after the sleep (None: none)."""
    event_timeout_ms: int = 0
    """The wait's timeout."""

    @property
    def has_steps(self) -> bool:
        """True when the job uses steps, a sleep or an event."""
        return bool(self.steps) or self.sleep_ms is not None or self.event_key is not None


class SimEvent(msgspec.Struct, frozen=True):
    """The payload of the events the simulator sends: which send it was."""

    n: int


class SimCancelledError(TsumugiError):
    """The heartbeat said the job was cancelled; the performer stops."""


class SimWork(Performer[WorkPayload, int]):
    """Works ``work_ms``, heartbeating every ``beat_ms``; answers the payload's ``seq``."""

    async def perform(self, payload: WorkPayload, ctx: JobContext) -> int:
        """Run the payload's steps, sleep and wait; work in virtual time; fail as the payload says."""
        clock = time_source()
        if payload.has_steps:
            await _durable_part(payload, ctx)
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


async def _durable_part(payload: WorkPayload, ctx: JobContext) -> None:
    """The steps, the sleep and the event wait, each written to the seed's `StepLog`."""
    log, clock = current_step_log(), time_source()
    job = ctx.job_id
    invocation = log.tick()

    async def run_step(name: str, work_ms: int) -> str:
        log.body(job, name, invocation)
        if work_ms:
            await clock.sleep_ms(work_ms)
        return name

    async def step(name: str) -> None:
        await ctx.step(name, run_step, name, payload.step_ms, result_type=str)
        log.complete(job, name)

    for i in range(payload.steps):
        await step(f"s{i}")
    if payload.sleep_ms is not None:
        log.sleeps.append(SleepRecord(job, ctx.attempt, clock.now_ms(), payload.sleep_ms, passed=False))
        await ctx.sleep(timedelta(milliseconds=payload.sleep_ms))
        log.sleeps.append(SleepRecord(job, ctx.attempt, clock.now_ms(), payload.sleep_ms, passed=True))
    if payload.event_key is not None:
        key, timeout = payload.event_key, payload.event_timeout_ms
        log.waits.append(WaitRecord(job, key, clock.now_ms(), timeout, "reached"))
        try:
            got = await ctx.wait_for_event(
                "sim", key=key, timeout=timedelta(milliseconds=timeout), result_type=SimEvent
            )
        except EventTimeoutError:
            log.waits.append(WaitRecord(job, key, clock.now_ms(), timeout, "timeout"))
        else:
            log.waits.append(WaitRecord(job, key, clock.now_ms(), timeout, "event", got.n))
    if payload.steps:
        await step("last")
