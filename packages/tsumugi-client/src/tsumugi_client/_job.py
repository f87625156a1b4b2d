"""Job handles: what ``enqueue`` returns from the HTTP clients (``id``, ``state()``, ``wait()``, ``result()``).

Waiting polls ``GET /api/jobs/{id}`` with a growing pause (`PollSchedule`: 10 ms, 20 ms, ... up to 1 s), so a
quick job is seen within milliseconds and a long one costs about one request a second, never a busy loop.
The clock and the sleep are the client's (injectable for tests). `Job` and `AsyncJob` share every decision
(`WaitClock`, `outcome_of`); they differ only in awaiting.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import msgspec

from tsumugi_client._errors import JobFailedError, JobNotFoundError, TsumugiClientError, WaitTimeoutError
from tsumugi_client._retry import grown
from tsumugi_client._views import JobDetail
from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.states import TERMINAL_STATES, JobState
from tsumugi_core.time_values import Seconds, as_seconds, struct_in_seconds

__all__ = ["AsyncJob", "Job", "PollSchedule", "WaitClock", "outcome_of"]

R = TypeVar("R")


class PollSchedule(msgspec.Struct, frozen=True, kw_only=True):
    """Pauses between looks at a job while waiting: ``first_s * factor**n``, at most ``max_s``.

    Example:
        >>> [PollSchedule().delay_s(n) for n in range(8)]
        [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.0]
    """

    first_s: float = 0.01
    factor: float = 2.0
    max_s: float = 1.0

    if TYPE_CHECKING:

        def __init__(self, *, first_s: Seconds = 0.01, factor: float = 2.0, max_s: Seconds = 1.0) -> None:
            """``first_s`` / ``max_s``: seconds or a `timedelta` (ADR-0161)."""

    def __post_init__(self) -> None:
        struct_in_seconds(self, ("first_s", "max_s"))

    def delay_s(self, looks: int) -> float:
        """The pause after look number ``looks`` (0 for the first)."""
        return grown(self.first_s, self.factor, looks, self.max_s)


class WaitClock:
    """One wait's deadline and pauses."""

    def __init__(
        self, job_id: str, timeout: Seconds | None, now: Callable[[], float], poll: PollSchedule
    ) -> None:
        """Start now; ``timeout`` (seconds or a `timedelta`) None waits without end."""
        timeout_s = None if timeout is None else as_seconds(timeout)
        if timeout_s is not None and not timeout_s >= 0:  # NaN too: it would never time out
            raise InvalidFieldError("timeout", f"must be a number of seconds, not negative, got {timeout_s}")
        self._job_id = job_id
        self._timeout_s = timeout_s
        self._now = now
        self._deadline = None if timeout_s is None else now() + timeout_s
        self._poll = poll
        self._looks = 0

    def pause_s(self, detail: JobDetail) -> float:
        """The pause before the next look at a job not finished yet.

        Raises:
            WaitTimeoutError: the deadline has passed.
        """
        pause = self._poll.delay_s(self._looks)
        self._looks += 1
        if self._deadline is None:
            return pause
        left = self._deadline - self._now()
        if left <= 0:
            raise WaitTimeoutError(self._job_id, detail.state.value, self._timeout_s or 0.0)
        return min(pause, left)


def _known(job_id: str, detail: JobDetail | None) -> JobDetail:
    if detail is None:
        raise JobNotFoundError(job_id, 404, "not found")
    return detail


def outcome_of(detail: JobDetail, result_type: Any) -> Any:
    """The result of a finished job decoded into ``result_type`` (None: plain JSON).

    Raises:
        JobFailedError: the job ended FAILED, CANCELLED or STALLED.
        TsumugiClientError: the stored result does not decode into ``result_type`` (status None).
    """
    if detail.state is not JobState.COMPLETED:
        error = detail.attempts_log[0].error if detail.attempts_log else None
        raise JobFailedError(detail.id, detail.state.value, error)
    # A result too large to store is kept as null (docs/reference/original.md §2.4).
    text = detail.result if detail.result is not None else "null"
    try:
        return msgspec.json.decode(text, type=Any if result_type is None else result_type)
    except msgspec.ValidationError as exc:
        raise TsumugiClientError(
            None, f"the result of {detail.id} does not decode as expected: {exc}"
        ) from None


class Job(Generic[R]):
    """A job enqueued (or looked up) by `TsumugiClient`.

    Attributes:
        id: The job id ``<binding>#<shard>:<local>``.
    """

    def __init__(
        self,
        job_id: str,
        result_type: Any,
        *,
        get: Callable[[str], JobDetail | None],
        now: Callable[[], float],
        sleep: Callable[[float], None],
        poll: PollSchedule,
    ) -> None:
        """Made by the client; ``result_type`` None keeps results as plain JSON."""
        self.id = job_id
        self._result_type = result_type
        self._get, self._now, self._sleep, self._poll = get, now, sleep, poll

    def __repr__(self) -> str:
        return f"Job({self.id!r})"

    def detail(self) -> JobDetail:
        """The job as the scheduler describes it now.

        Raises:
            JobNotFoundError: the scheduler does not know the job (swept after its retention).
        """
        return _known(self.id, self._get(self.id))

    def state(self) -> JobState:
        """The job's state now."""
        return self.detail().state

    def wait(self, timeout: Seconds | None = None) -> JobDetail:
        """Wait until the job is finished (COMPLETED, FAILED, CANCELLED or STALLED) and return its detail.

        Raises:
            WaitTimeoutError: still not finished after ``timeout`` seconds (the job goes on).
        """
        clock = WaitClock(self.id, timeout, self._now, self._poll)
        while (detail := self.detail()).state not in TERMINAL_STATES:
            self._sleep(clock.pause_s(detail))
        return detail

    def result(self, timeout: Seconds | None = None) -> R:
        """Wait for the job (see `wait`) and return its result, decoded into the performer's result type.

        Raises:
            JobFailedError: the job ended without a result (FAILED, CANCELLED, STALLED).
            WaitTimeoutError: still not finished after ``timeout`` seconds.
        """
        value: R = outcome_of(self.wait(timeout), self._result_type)
        return value


class AsyncJob(Generic[R]):
    """A job enqueued (or looked up) by `AsyncTsumugiClient`; the methods of `Job`, awaited.

    Attributes:
        id: The job id ``<binding>#<shard>:<local>``.
    """

    def __init__(
        self,
        job_id: str,
        result_type: Any,
        *,
        get: Callable[[str], Awaitable[JobDetail | None]],
        now: Callable[[], float],
        sleep: Callable[[float], Awaitable[None]],
        poll: PollSchedule,
    ) -> None:
        """Made by the client; ``result_type`` None keeps results as plain JSON."""
        self.id = job_id
        self._result_type = result_type
        self._get, self._now, self._sleep, self._poll = get, now, sleep, poll

    def __repr__(self) -> str:
        return f"AsyncJob({self.id!r})"

    async def detail(self) -> JobDetail:
        """The job as the scheduler describes it now (`JobNotFoundError` when it does not know it)."""
        return _known(self.id, await self._get(self.id))

    async def state(self) -> JobState:
        """The job's state now."""
        return (await self.detail()).state

    async def wait(self, timeout: Seconds | None = None) -> JobDetail:
        """Wait until the job is finished and return its detail (`WaitTimeoutError` after ``timeout`` s)."""
        clock = WaitClock(self.id, timeout, self._now, self._poll)
        while (detail := await self.detail()).state not in TERMINAL_STATES:
            await self._sleep(clock.pause_s(detail))
        return detail

    async def result(self, timeout: Seconds | None = None) -> R:
        """Wait for the job and return its decoded result (`JobFailedError` when it ended without one)."""
        value: R = outcome_of(await self.wait(timeout), self._result_type)
        return value
