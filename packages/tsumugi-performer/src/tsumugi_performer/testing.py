"""Test performers without a shard: a recording `JobContext` and `run_performer`, which never raises.

Example:
    >>> import asyncio
    >>> class Double(Performer[int, int]):
    ...     async def perform(self, payload: int, ctx: JobContext) -> int:
    ...         await ctx.heartbeat(0.5)
    ...         return payload * 2
    >>> ctx = create_test_context(deadline_at=60_000)
    >>> asyncio.run(run_performer(Double(), 21, ctx))
    Returned(value=42, ok=True)
    >>> ctx.heartbeats
    [0.5]
"""

from __future__ import annotations

import time
from typing import Any, Generic, Literal, Protocol, TypeAlias, TypeVar

import msgspec

from tsumugi_core.clock import Clock
from tsumugi_core.time_values import Instant
from tsumugi_performer._context import HeartbeatAnswer, JobContext
from tsumugi_performer._performer import Performer
from tsumugi_performer._steps import StepsUnavailableError, SuspendSignal

__all__ = [
    "DEFAULT_TEST_JOB_ID",
    "DEFAULT_TEST_TIMEOUT_MS",
    "Raised",
    "RecordingContext",
    "Returned",
    "RunResult",
    "SupportsPerform",
    "create_test_context",
    "run_performer",
]

DEFAULT_TEST_JOB_ID = "TEST#0:testjob000000000000000000"
"""The job id of a test context unless one is given (the original's default)."""
DEFAULT_TEST_TIMEOUT_MS = 60_000
"""A test context's deadline is this far after its clock's now unless one is given."""

_P_contra = TypeVar("_P_contra", contravariant=True)
_R_co = TypeVar("_R_co", covariant=True)
_R = TypeVar("_R")
_P = TypeVar("_P")


class SupportsPerform(Protocol[_P_contra, _R_co]):
    """Anything with the performer shape: `run_performer` accepts it as well as a `Performer`."""

    async def perform(self, payload: _P_contra, ctx: JobContext, /) -> _R_co:
        """Run one attempt."""
        ...


class Returned(msgspec.Struct, Generic[_R], frozen=True, kw_only=True):
    """`run_performer` outcome: `perform` returned `value`."""

    value: _R
    ok: Literal[True] = True


class Raised(msgspec.Struct, frozen=True, kw_only=True):
    """`run_performer` outcome: `perform` (or payload decoding) raised `error`."""

    error: Exception
    ok: Literal[False] = False


RunResult: TypeAlias = Returned[_R] | Raised
"""What `run_performer` answers. Narrow with ``result.ok is True`` or ``isinstance(result, Returned)``
(type checkers do not narrow on the bare truthiness of ``result.ok``)."""


class _WallClock:
    # Only the default of a user-facing test helper reads the real clock, so a performer comparing
    # deadline_at with its own clock sees a sensible deadline; pass a FixedClock for determinism.
    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


class RecordingContext(JobContext):
    """A `JobContext` whose heartbeats are recorded instead of sent.

    Attributes:
        heartbeats: The progress value of every heartbeat, in order (None when no progress was given).
    """

    def __init__(
        self,
        *,
        job_id: str,
        attempt: int,
        max_attempts: int,
        deadline_at: Instant,
        traceparent: str | None,
        cancel_requested: bool,
        clock: Clock | None = None,
    ) -> None:
        """Build the context; see `create_test_context`."""
        self.heartbeats: list[float | None] = []
        self._cancel = cancel_requested
        super().__init__(
            job_id=job_id,
            attempt=attempt,
            max_attempts=max_attempts,
            deadline_at=deadline_at,
            heartbeat=self._record,
            traceparent=traceparent,
            # The clock dates sleeps and event waits (so they suspend as in production, and `run_performer`
            # says so); no interval, so every heartbeat is recorded rather than throttled.
            clock=clock,
            heartbeat_interval_ms=0,
        )

    def request_cancel(self) -> None:
        """Make the following heartbeats answer ``cancel_requested=True``, as after a cancel of the job."""
        self._cancel = True

    async def _record(self, progress: float | None) -> HeartbeatAnswer:
        self.heartbeats.append(progress)
        return HeartbeatAnswer(accepted=True, cancel_requested=self._cancel)


def create_test_context(
    *,
    job_id: str = DEFAULT_TEST_JOB_ID,
    attempt: int = 1,
    max_attempts: int = 3,
    deadline_at: Instant | None = None,
    traceparent: str | None = None,
    cancel_requested: bool = False,
    clock: Clock | None = None,
) -> RecordingContext:
    """A context for calling a performer directly in a test.

    Args:
        job_id: The job id (its binding part becomes `ctx.binding`).
        attempt: This attempt's number.
        max_attempts: Total attempts allowed.
        deadline_at: The deadline (epoch ms or an aware `datetime`); default `clock` now + `DEFAULT_TEST_TIMEOUT_MS`.
        traceparent: The trace context, if any.
        cancel_requested: Whether heartbeats answer that the job should stop.
        clock: Where "now" comes from for the default deadline and for sleeps and event waits; the wall clock
            unless given.

    Raises:
        InvalidJobIdError: `job_id` is not a job id.
        ValueError: A number breaks its rule.
    """
    clock = clock or _WallClock()
    if deadline_at is None:
        deadline_at = clock.now_ms() + DEFAULT_TEST_TIMEOUT_MS
    return RecordingContext(
        job_id=job_id,
        attempt=attempt,
        max_attempts=max_attempts,
        deadline_at=deadline_at,
        traceparent=traceparent,
        cancel_requested=cancel_requested,
        clock=clock,
    )


async def run_performer(
    performer: SupportsPerform[_P, _R], payload: _P, ctx: JobContext | None = None
) -> RunResult[_R]:
    """Run one attempt and return its outcome as a value; never raises for a failing performer.

    A `Performer`'s payload goes through `Performer.decode_payload` first, as it does in production, so a
    payload that does not fit the declared type comes back as ``Raised(InvalidPayloadError(...))``.

    Returns:
        ``Returned(value=...)`` or ``Raised(error=...)``.
    """
    context = ctx if ctx is not None else create_test_context()
    try:
        if isinstance(performer, Performer):
            typed: Performer[Any, Any] = performer
            payload = typed.decode_payload(payload)
        return Returned(value=await performer.perform(payload, context))
    except SuspendSignal as signal:
        # A sleep or an event wait ends the invocation; only a shard can resume the job (ADR-0145).
        return Raised(
            error=StepsUnavailableError(
                f"perform suspended ({signal}): sleeps and event waits resume only in a shard; "
                "run the job under tsumugi dev (or LocalRuntime) to see it continue"
            )
        )
    except Exception as error:
        return Raised(error=error)
