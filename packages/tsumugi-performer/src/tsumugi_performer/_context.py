"""What a performer knows about the attempt it runs: `JobContext` and its heartbeat."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any, Final, TypeAlias, TypeVar, cast

import msgspec

from tsumugi_core import time_values
from tsumugi_core.clock import Clock
from tsumugi_core.exceptions import InvalidFieldError, InvalidTypeError, NotConfiguredError, TsumugiError
from tsumugi_core.flow_spec import node_key_problem
from tsumugi_core.ids import parse_job_id
from tsumugi_core.options import OPTION_DURATIONS, OPTION_INSTANTS, later_instant
from tsumugi_core.time_values import Duration, Instant, instant_ms, with_milliseconds
from tsumugi_performer._steps import StepChannel, StepJournal, StepSaveLostError, duration_ms, instant_of

__all__ = [
    "DEFAULT_HEARTBEAT_INTERVAL_MS",
    "SPAWN_OPTIONS",
    "HeartbeatAnswer",
    "HeartbeatError",
    "HeartbeatFn",
    "JobContext",
]

_log = logging.getLogger("tsumugi_performer")
_T = TypeVar("_T")

DEFAULT_HEARTBEAT_INTERVAL_MS: Final = 5_000
"""Heartbeats closer together than this are dropped before they leave the performer (the original's 5 s); the
entrypoint gives each attempt `tsumugi_core.liveness.heartbeat_interval_ms` of its timeout, at most this (ADR-0053)."""


class HeartbeatAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """The shard's answer to a heartbeat.

    Attributes:
        accepted: The shard took the heartbeat (the attempt is still live); False when it was refused, could
            not be delivered, or was dropped by the client-side throttle before any was accepted.
        cancel_requested: Someone asked this job to stop; the performer should wind down and raise.
    """

    accepted: bool
    cancel_requested: bool


HeartbeatFn: TypeAlias = Callable[[float | None], Awaitable[HeartbeatAnswer]]
"""Sends one heartbeat (with optional progress in [0, 1]) for the running attempt and returns the answer."""

_NOT_SENT: Final = HeartbeatAnswer(accepted=False, cancel_requested=False)
SPAWN_OPTIONS: Final = frozenset(
    {
        "max_attempts",
        "backoff",
        "delay_ms",
        "run_at",
        "timeout_ms",
        "priority",
        "guarantee",
        "concurrency_key",
    }
)
"""Options a spawned child may take: a node's job options and ``concurrency_key`` (no ``unique_key``)."""
_REFUSED_CROSSING: Final = "DataCloneError"
"""The JS error name of a value workerd refuses to send over RPC: the two sides disagree on the protocol."""


class HeartbeatError(TsumugiError):
    """The heartbeat's answer cannot reach the performer: the scheduler and performer disagree on its shape.

    Raised by `JobContext.heartbeat` (ADR-0043) instead of answering "not accepted" forever, because a
    performer that never hears ``cancel_requested`` would run blind to cancellation; the attempt fails with
    this error and the job's log names the cause (usually a scheduler and performers of different versions).
    """


def _positive_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidFieldError(name, f"must be an integer of at least {minimum}, got {value!r}")
    return value


class JobContext:
    """The second argument of `Performer.perform`: who this attempt is and how to talk back.

    Args:
        job_id: ``<binding>#<shard>:<local_id>``.
        attempt: 1-based number of this attempt.
        max_attempts: How many attempts the job may have in total.
        deadline_at: Epoch ms by which the attempt should finish (start + timeout; heartbeats do not move it).
        heartbeat: Sends a heartbeat to the shard (injected by the consumer glue or a test).
        traceparent: W3C trace context given at enqueue, if any.
        clock: Used to throttle heartbeats; without one every heartbeat is sent.
        heartbeat_interval_ms: Minimum time between two sent heartbeats.
        steps: Sends step commands to the job's shard (injected by the entrypoint); None keeps steps in
            memory for this context only.
        at_most_once: The job is at-most-once: a step whose outcome is unknown is never run again.
        invocation_ends_at: When the invocation running this attempt is stopped (epoch ms), if known.

    Raises:
        InvalidJobIdError: `job_id` is not a job id.
        ValueError: A number breaks its rule; the message names it.
    """

    def __init__(
        self,
        *,
        job_id: str,
        attempt: int,
        max_attempts: int,
        deadline_at: Instant,
        heartbeat: HeartbeatFn,
        traceparent: str | None = None,
        clock: Clock | None = None,
        heartbeat_interval_ms: Duration = DEFAULT_HEARTBEAT_INTERVAL_MS,
        steps: StepChannel | None = None,
        at_most_once: bool = False,
        invocation_ends_at: Instant | None = None,
    ) -> None:
        self._job = parse_job_id(job_id)
        self._job_id = job_id
        self._attempt = _positive_int("attempt", attempt, 1)
        self._max_attempts = _positive_int("max_attempts", max_attempts, 1)
        self._deadline_at = _positive_int("deadline_at", instant_ms("deadline_at", deadline_at), 0)
        self._heartbeat = heartbeat
        self._traceparent = traceparent
        self._clock = clock
        self._interval_ms = _positive_int(
            "heartbeat_interval_ms",
            time_values.duration_ms("heartbeat_interval_ms", heartbeat_interval_ms),
            0,
        )
        self._last_sent_at: int | None = None
        self._last_answer = _NOT_SENT
        self._spawns: list[dict[str, Any]] = []
        self._journal = StepJournal(
            steps,
            job_id=job_id,
            at_most_once=at_most_once,
            clock=clock,
            invocation_ends_at=cast("int | None", instant_ms("invocation_ends_at", invocation_ends_at)),
        )

    @property
    def job_id(self) -> str:
        """The job id, ``<binding>#<shard>:<local_id>``."""
        return self._job_id

    @property
    def binding(self) -> str:
        """The performer binding name (the first part of the job id)."""
        return self._job.binding

    @property
    def attempt(self) -> int:
        """This attempt's number, starting at 1."""
        return self._attempt

    @property
    def max_attempts(self) -> int:
        """The total number of attempts the job may have."""
        return self._max_attempts

    @property
    def is_last_attempt(self) -> bool:
        """Whether a failure of this attempt ends the job."""
        return self._attempt >= self._max_attempts

    @property
    def deadline_at(self) -> int:
        """Epoch ms by which this attempt should be done."""
        return self._deadline_at

    @property
    def traceparent(self) -> str | None:
        """The W3C ``traceparent`` given at enqueue, if any."""
        return self._traceparent

    @property
    def idempotency_key(self) -> str:
        """A key that is the same on every attempt of this job (the job id): use it to make side effects safe."""
        return self._job_id

    @property
    def lost_step_save(self) -> StepSaveLostError | None:
        """Set when an at-most-once step ran and its result could not be stored (the outcome is unknown)."""
        return self._journal.lost_save

    @property
    def cancel_requested(self) -> bool:
        """Whether the latest heartbeat (or step) answer said the job should stop."""
        return self._last_answer.cancel_requested or self._journal.cancel_requested

    async def heartbeat(self, progress: float | None = None) -> HeartbeatAnswer:
        """Tell the shard this attempt is alive, optionally with progress in [0, 1].

        Heartbeats within `heartbeat_interval_ms` of the last sent one are dropped (progress included) and
        answer the previous answer. A heartbeat that fails on its way (the shard unreachable, reset or
        failing) is logged as a warning and answers ``accepted=False`` with the last known cancel flag, as the
        original's never-failing heartbeat does (ADR-0043).

        Returns:
            The shard's answer; check ``cancel_requested`` to stop cooperatively.

        Raises:
            HeartbeatError: the answer cannot cross to the performer or does not decode (a protocol
                mismatch that would hide every cancel request); logged as an error too.
            InvalidTypeError: ``progress`` is not a number (text would be read as a step command, an object
                could not cross RPC); a number out of [0, 1] is clamped by the shard.
        """
        given = cast(object, progress)  # callers may bypass typing
        if given is not None and (isinstance(given, bool) or not isinstance(given, int | float)):
            raise InvalidTypeError(
                "progress", f"must be a number from 0 to 1 or None, got {type(given).__name__}"
            )
        now = self._clock.now_ms() if self._clock is not None else None
        if (
            now is not None
            and self._last_sent_at is not None
            and now - self._last_sent_at < self._interval_ms
        ):
            return self._last_answer
        self._last_sent_at = now
        try:
            answer = await self._heartbeat(progress)
        except HeartbeatError:
            _log.error(
                "heartbeat for %s attempt %d has no usable answer", self._job_id, self._attempt, exc_info=True
            )
            raise
        except Exception as error:
            if getattr(error, "name", None) == _REFUSED_CROSSING:
                _log.error(
                    "heartbeat for %s attempt %d: its answer cannot cross RPC",
                    self._job_id,
                    self._attempt,
                    exc_info=True,
                )
                raise HeartbeatError(f"the heartbeat's answer cannot cross RPC ({error})") from error
            # A lost heartbeat must not fail a healthy attempt (the original's heartbeat never throws).
            _log.warning("heartbeat for %s attempt %d failed", self._job_id, self._attempt, exc_info=True)
            return HeartbeatAnswer(accepted=False, cancel_requested=self._last_answer.cancel_requested)
        # A cancel request is never withdrawn, so a later answer cannot clear it.
        if self._last_answer.cancel_requested and not answer.cancel_requested:
            answer = HeartbeatAnswer(accepted=answer.accepted, cancel_requested=True)
        self._last_answer = answer
        return answer

    def spawn(self, spawn_id: str, binding: str | type, payload: Any = None, **options: Any) -> None:
        """Add a child node to this job's node in its flow run, run once this attempt succeeds.

        The child is ``<node>:<spawn_id>``; the node counts as settled (for its downstream) only when its
        children are, and a failed child fails it. Spawning the same id twice makes one child. Spawns of an
        attempt that fails are discarded; a job outside a flow run ignores them. ``binding`` is a binding
        name or a Performer class; ``options`` are job options and ``concurrency_key``.

        Raises:
            ValueError: a bad id, binding or option (no ``unique_key``), naming it.
        """
        problem = node_key_problem(spawn_id)
        if problem is not None:
            raise InvalidFieldError("id", problem, message=f"spawn id {problem}")
        name = binding if isinstance(binding, str) else getattr(binding, "__name__", "")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            rule = f"must be a binding name or a Performer class, got {binding!r}"
            raise InvalidFieldError("binding", rule, message=f"spawn binding {rule}")
        for option in options:
            if option not in SPAWN_OPTIONS:
                rule = (
                    "is not allowed on a spawned child" if option == "unique_key" else "is not a spawn option"
                )
                raise InvalidFieldError(option, rule)
        options = with_milliseconds(options, OPTION_DURATIONS, OPTION_INSTANTS)  # ADR-0161
        self._spawns.append(
            {
                "id": spawn_id,
                "binding": name,
                "payload": msgspec.to_builtins(payload),
                "options": msgspec.to_builtins(options),
            }
        )

    @property
    def spawns(self) -> list[dict[str, Any]]:
        """The children this attempt asked for, in order (``{"id", "binding", "payload", "options"}``)."""
        return list(self._spawns)

    async def step(
        self,
        name: str,
        fn: Callable[..., Awaitable[_T]] | Callable[..., _T],
        *args: Any,
        result_type: Any = None,
    ) -> _T:
        """Run ``fn(*args)`` once per job, across attempts (ADR-0144).

        The result is stored in the job's shard before this returns, and every later attempt gets the stored
        result instead of running ``fn`` again. The n-th call with the same ``name`` in one run of ``perform`` is stored as ``name#n``, so a loop may
        reuse a name. The result is stored as JSON and read back as ``result_type`` (default: ``fn``'s return
        annotation), so the first run and every replay see the same value. A step that raises fails the
        attempt, which the job's retry rules retry; an at-most-once job's step that began in an attempt whose
        outcome is unknown is never run again (`StepOutcomeUnknownError`). Between steps, near the end of the
        invocation's wall time, the job continues in a new invocation on its own (ADR-0147).

        Raises:
            StepArgumentError: ``name`` breaks the naming rule, or ``fn`` is not callable (a ``ValueError`` or
                ``TypeError`` naming the argument and the rule; the job fails without a retry, ADR-0183).
            StepResultError: the result is not JSON-serialisable or does not fit ``result_type``.
            StepFencedError: this invocation is no longer the job's live attempt.
        """
        return await self._journal.step(name, fn, args, result_type)

    async def sleep(self, duration: timedelta, *, name: str | None = None) -> None:
        """Sleep for ``duration`` without holding an invocation or using an attempt (ADR-0145).

        The first time, the wake instant is stored as a step and the invocation ends; the job waits SLEEPING
        in its shard and runs again from its stored steps once the time comes, under its binding's limits. Each
        call is a step (named ``sleep``, ``sleep#2``, ... unless ``name`` is given). A zero or negative
        ``duration`` returns at once, as ``asyncio.sleep`` does (the step is still stored, ADR-0183); a replay
        answers the stored wake, whatever ``duration`` it is given. A wake past the latest instant JavaScript
        holds exactly (year 287396) is that instant, as every computed instant is.

        Raises:
            StepArgumentError: ``duration`` is not a ``timedelta`` (a ``TypeError``) or ``name`` breaks the
                naming rule; the job fails without a retry (ADR-0183).
        """
        await self._journal.sleep_until(later_instant(self._journal_now(), duration_ms(duration)), name)

    async def sleep_until(self, at: datetime, *, name: str | None = None) -> None:
        """Sleep until the aware ``datetime`` ``at`` (see `sleep`); a time already past returns at once.

        Raises:
            StepArgumentError: ``at`` is naive, or not a ``datetime`` (a ``TypeError``); the job fails without
                a retry (ADR-0183).
        """
        await self._journal.sleep_until(instant_of(at), name)

    async def wait_for_event(self, name: str, *, key: str, timeout: timedelta, result_type: Any = Any) -> Any:
        """Wait for the event ``name``/``key`` without holding an invocation; answer its payload (ADR-0146).

        The job sleeps (SLEEPING) until the event arrives (``POST /api/events``, RPC or a client's
        ``send_event``) or ``timeout`` passes, then runs again from its stored steps. An event sent before the
        wait began is kept for a day and answers at once. Each wait is a step (``event:<name>``, indexed when
        repeated); a job gets each event at most once. A zero or negative ``timeout`` gets only an event that
        has come already (ADR-0183).

        Raises:
            EventTimeoutError: no event came in time (not retried unless caught: the performer decides).
            StepArgumentError: ``name`` or ``key`` breaks its rule, or ``timeout`` is not a ``timedelta`` (a
                ``TypeError``); the job fails without a retry (ADR-0183).
        """
        until = later_instant(self._journal_now(), duration_ms(timeout, "timeout", "wait_for_event"))
        return await self._journal.wait_for_event(name, key, until, result_type)

    def _journal_now(self) -> int:
        if self._clock is None:
            raise NotConfiguredError("sleep needs the context's clock")
        return self._clock.now_ms()

    @property
    def step_names(self) -> list[str]:
        """The step names this run of ``perform`` reached so far, in order (replayed steps included)."""
        return list(self._journal.names)
