"""Durable steps and sleeps of one attempt: the performer's side of ADR-0144, ADR-0145 and ADR-0147.

A `StepJournal` belongs to one invocation. It loads the job's stored steps from the shard on first use, answers
a stored step's result without running it, and stores a new step's result in the shard before the performer
goes on. Each command travels as JSON text through the attempt's callback (the heartbeat stub: a string instead
of a number is a step command), so nothing new crosses RPC.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any, Final, TypeAlias, cast

import msgspec

from tsumugi_core.clock import Clock
from tsumugi_core.events import event_problem
from tsumugi_core.exceptions import InvalidFieldError, InvalidTypeError, TsumugiError
from tsumugi_core.steps import (
    MAX_STEP_RESULT_BYTES,
    MAX_STEPS_PER_JOB,
    STEP_COMMANDS_PER_INVOCATION,
    StepAnswer,
    StepCommand,
    StepView,
    Suspension,
    should_continue_elsewhere,
    step_name,
    step_name_problem,
)
from tsumugi_performer._errors import NonRetryableError

__all__ = [
    "EventTimeoutError",
    "StepArgumentError",
    "StepArgumentTypeError",
    "StepChannel",
    "StepFencedError",
    "StepJournal",
    "StepOutcomeUnknownError",
    "StepResultError",
    "StepSaveLostError",
    "StepsUnavailableError",
    "SuspendSignal",
]

StepChannel: TypeAlias = Callable[[str], Awaitable[Any]]
"""Sends one `StepCommand` as JSON text to the shard and answers its `StepAnswer` as JSON text."""

_ANSWER: Final = msgspec.json.Decoder(StepAnswer)
_COMMAND: Final = msgspec.json.Encoder()
_SLEEP: Final = "sleep"


class SuspendSignal(BaseException):
    """Ends the invocation so the job sleeps or continues elsewhere; never an attempt's failure.

    A ``BaseException`` so that ``except Exception`` in a performer cannot swallow it.
    """

    def __init__(self, suspension: Suspension) -> None:
        super().__init__(f"{suspension.reason} until {suspension.until}")
        self.suspension = suspension


class StepFencedError(TsumugiError):
    """The shard refused a step: this invocation is no longer the job's live attempt.

    It was reaped or cancelled, or a later attempt runs, so its results must not be stored.
    """


class StepOutcomeUnknownError(NonRetryableError):
    """An at-most-once job's step began in an attempt whose outcome is unknown.

    It may have run, so it is never run again (ADR-0144), and the job fails.
    """


class StepSaveLostError(TsumugiError):
    """An at-most-once job's step ran but its result could not be stored: its outcome is unknown.

    The attempt does not end as a failure (a failure would let a later attempt run the step again): its call
    fails as a lost call does, so the shard keeps the step's mark and stalls the job (ADR-0144, ADR-0051).
    """


class StepArgumentError(InvalidFieldError, NonRetryableError):
    """A step call's argument breaks its rule (a bad name, a naive datetime): the job fails without a retry.

    A programming error: every attempt makes the same call and would fail the same way, so retrying only
    delays the failure (ADR-0183). ``field`` is the argument's name, ``rule`` what it must satisfy; a
    ``ValueError`` as any `InvalidFieldError` is.
    """


class StepArgumentTypeError(StepArgumentError, InvalidTypeError):
    """A step call's argument has the wrong type (a number for a ``timedelta``); also a ``TypeError``."""


class StepResultError(NonRetryableError):
    """A step's result cannot be stored as JSON or does not fit the type it is read back as."""


class EventTimeoutError(NonRetryableError):
    """No event came before the wait's timeout (ADR-0146): catch it to decide, else the job fails.

    Attributes:
        event: The event's name.
        key: Its key.
        until: When the wait timed out (epoch ms).
    """

    def __init__(self, event: str, key: str, until: int) -> None:
        super().__init__(f"no event {event}/{key} came before the wait's timeout at {until}")
        self.event, self.key, self.until = event, key, until


class StepsUnavailableError(NonRetryableError):
    """The attempt has no way to store steps (a scheduler that predates them): update the scheduler."""


def _result_type(fn: Callable[..., Any]) -> Any:
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # an annotation that does not resolve: read the result back as plain JSON
        return Any
    return hints.get("return", Any)


def _until_of(stored: StepView) -> int:
    value: Any = msgspec.json.decode(stored.result or "null")
    until: object = cast("dict[str, object]", value).get("until") if isinstance(value, dict) else None
    if not isinstance(until, int):
        raise StepResultError(f"step {stored.name} is not a sleep or a wait (its result has no until)")
    return until


class StepJournal:
    """The steps of one job as one invocation sees them."""

    def __init__(
        self,
        channel: StepChannel | None,
        *,
        job_id: str,
        at_most_once: bool,
        clock: Clock | None,
        invocation_ends_at: int | None = None,
    ) -> None:
        """Talk to the shard through ``channel`` (None: no shard, e.g. a bare test context)."""
        self._channel = channel
        self._job_id = job_id
        self._at_most_once = at_most_once
        self._clock = clock
        self._ends_at = invocation_ends_at
        self._stored: dict[str, StepView] | None = None
        self._seen: dict[str, int] = {}
        self._longest_ms = 0
        self._ran = 0
        self._commands = 0
        """Step commands this invocation sent (each one a subrequest)."""
        self.cancel_requested = False
        self.lost_save: StepSaveLostError | None = None
        """Set when an at-most-once step ran and its save failed: the attempt's outcome is then unknown."""
        self.names: list[str] = []
        """Every step name this invocation reached, in order (replayed ones included)."""

    def _now(self) -> int:
        if self._clock is None:
            raise StepsUnavailableError("sleeping needs a clock; this context was built without one")
        return self._clock.now_ms()

    async def _send(self, command: StepCommand) -> StepAnswer:
        if self._channel is None:
            raise StepsUnavailableError(f"job {self._job_id} has no step store in this context")
        self._commands += 1
        answer = await self._channel(_COMMAND.encode(command).decode())
        try:
            decoded = _ANSWER.decode(answer) if isinstance(answer, str | bytes) else None
        except (msgspec.DecodeError, msgspec.ValidationError):
            decoded = None
        if decoded is None or decoded.op != command.op:
            raise StepsUnavailableError(
                f"the scheduler did not answer the step command {command.op!r} ({answer!r:.120}); "
                "it predates durable steps: deploy the scheduler of this version"
            )
        if not decoded.accepted:
            raise StepFencedError(
                f"job {self._job_id}: the shard refused step {command.name or command.op}; this invocation is "
                "no longer the job's live attempt"
            )
        self.cancel_requested = self.cancel_requested or decoded.cancel_requested
        return decoded

    async def _steps(self) -> dict[str, StepView]:
        if self._stored is None:
            if self._channel is None:
                self._stored = {}
            else:
                answer = await self._send(StepCommand(op="load"))
                self._stored = {s.name: s for s in answer.steps}
        return self._stored

    def _name(self, name: str) -> str:
        problem = step_name_problem(name)
        if problem is not None:
            raise StepArgumentError("name", problem, message=f"step name {problem}")
        occurrence = self._seen.get(name, 0) + 1
        self._seen[name] = occurrence
        full = step_name(name, occurrence)
        self.names.append(full)
        return full

    async def _save(self, name: str, text: str) -> StepView:
        if self._channel is None:
            view = StepView(name=name, state="done", result=text)
        else:
            (view,) = (await self._send(StepCommand(op="save", name=name, result=text))).steps
        (await self._steps())[name] = view
        return view

    async def step(self, name: str, fn: Callable[..., Any], args: tuple[Any, ...], result_type: Any) -> Any:
        """Run ``fn(*args)`` once per job under ``name`` and answer its result as stored."""
        if not callable(fn):
            rule = f"must be a function, got {type(fn).__name__}"
            raise StepArgumentTypeError("fn", rule, message=f"step {name!r}: fn {rule}")
        full = self._name(name)
        kind = _result_type(fn) if result_type is None else result_type
        stored = (await self._steps()).get(full)
        if stored is None or stored.state != "done":
            stored = await self._run(full, fn, args, stored)
        try:
            return msgspec.json.decode(stored.result or "null", type=kind)
        except msgspec.ValidationError as error:
            raise StepResultError(f"step {full}: the stored result does not fit {kind!r}: {error}") from None

    async def _run(
        self, full: str, fn: Callable[..., Any], args: tuple[Any, ...], stored: StepView | None
    ) -> StepView:
        self._continue_if_short(full)
        if stored is None and len(await self._steps()) >= MAX_STEPS_PER_JOB:
            # Checked before the function runs: the shard would refuse to store its result.
            raise StepResultError(f"step {full}: a job stores at most {MAX_STEPS_PER_JOB} steps")
        if self._at_most_once:
            if stored is not None:  # a mark left by an earlier attempt: it may have run (ADR-0144)
                raise StepOutcomeUnknownError(
                    f"step {full} of at-most-once job {self._job_id} began in an earlier attempt whose outcome "
                    "is unknown; it is never run again"
                )
            if self._channel is not None:
                (begun,) = (await self._send(StepCommand(op="begin", name=full))).steps
                if begun.state == "done":
                    return begun
        started = self._clock.now_ms() if self._clock is not None else 0
        value = fn(*args)
        if inspect.isawaitable(value):
            value = await value
        if self._clock is not None:
            self._longest_ms = max(self._longest_ms, self._clock.now_ms() - started)
        self._ran += 1
        try:
            text = _COMMAND.encode(value).decode()
        except (TypeError, ValueError, OverflowError) as error:
            raise StepResultError(f"step {full}: its result cannot be stored as JSON: {error}") from None
        size = len(text) if text.isascii() else len(text.encode())
        if size > MAX_STEP_RESULT_BYTES:
            # Not retried: the same result would be refused again, after the function ran again.
            raise StepResultError(
                f"step {full}: its result must be at most {MAX_STEP_RESULT_BYTES} bytes as JSON, got {size}"
            )
        try:
            return await self._save(full, text)
        except Exception as error:
            if not self._at_most_once:
                raise  # the step runs again in the retry, as a failed step does
            self.lost_save = StepSaveLostError(
                f"step {full} of at-most-once job {self._job_id} ran, but its result was not stored: {error}"
            )
            raise self.lost_save from error

    def _continue_if_short(self, full: str) -> None:
        # ADR-0147: between steps, a new invocation when this one may not fit the next step, in time or in
        # subrequests (a step sends two commands at most: begin and save; ADR-0174).
        if (
            self._ran
            and self._clock is not None
            and (
                self._commands + 2 > STEP_COMMANDS_PER_INVOCATION
                or should_continue_elsewhere(
                    now=self._clock.now_ms(),
                    invocation_ends_at=self._ends_at,
                    longest_step_ms=self._longest_ms,
                )
            )
        ):
            raise SuspendSignal(Suspension(until=self._clock.now_ms(), reason="continue", step=full))

    async def sleep_until(self, until: int, name: str | None) -> None:
        """Sleep until ``until`` (epoch ms) as a durable step: suspend the job unless the time has come."""
        full = self._name(_SLEEP if name is None else name)
        stored = (await self._steps()).get(full)
        if stored is None:
            stored = await self._save(full, _COMMAND.encode({"until": until}).decode())
        wake = _until_of(stored)
        if self._now() < wake:
            raise SuspendSignal(Suspension(until=wake, reason="sleep", step=full))

    async def wait_for_event(self, event: str, key: str, until: int, result_type: Any) -> Any:
        """The payload of the first event ``event``/``key`` this job gets, once; suspend until it comes."""
        problem = event_problem(event, key)
        if problem is not None:  # "name ..." or "key ...": the argument first
            field, _, rule = problem.partition(" ")
            raise StepArgumentError(field, rule, message=f"event {problem}")
        full = self._name(f"event:{event}")
        stored = (await self._steps()).get(full)
        if stored is None or stored.state != "done":
            seen = self._seen_events(event, key)
            command = StepCommand(op="wait", name=full, event=event, key=key, until=until, seen=seen)
            (stored,) = (await self._send(command)).steps
            (await self._steps())[full] = stored
        if stored.state != "done":  # the first wait's timeout holds on every replay
            raise SuspendSignal(Suspension(until=_until_of(stored), reason="event", step=full))
        value: Any = msgspec.json.decode(stored.result or "null")
        if isinstance(value, dict) and cast("dict[str, object]", value).get("timeout") is True:
            waited = cast("dict[str, object]", value).get("until")  # the first wait's, not this replay's
            raise EventTimeoutError(event, key, waited if isinstance(waited, int) else until)
        try:
            return msgspec.convert(cast("dict[str, Any]", value).get("payload"), type=result_type)
        except (msgspec.ValidationError, AttributeError) as error:
            raise StepResultError(
                f"event {event}/{key}: its payload does not fit {result_type!r}: {error}"
            ) from None

    def _seen_events(self, event: str, key: str) -> list[str]:
        # Events this job already had for (event, key): a later wait must not get them again from the box.
        seen: list[str] = []
        for view in (self._stored or {}).values():
            if view.state != "done" or not view.name.startswith("event:"):
                continue
            value: Any = msgspec.json.decode(view.result or "null")
            if isinstance(value, dict):
                fields = cast("dict[str, object]", value)
                if (
                    fields.get("name") == event
                    and fields.get("key") == key
                    and isinstance(fields.get("id"), str)
                ):
                    seen.append(str(fields["id"]))
        return seen


def instant_of(at: datetime) -> int:
    """Epoch milliseconds of an aware ``datetime`` (a past one is no error: a sleep until it returns at once).

    Raises:
        StepArgumentTypeError: ``at`` is not a datetime.
        StepArgumentError: ``at`` is naive (its instant would depend on the machine's time zone).
    """
    if not isinstance(at, datetime):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise StepArgumentTypeError(
            "at",
            f"must be a datetime, got {type(at).__name__}",
            message=f"sleep_until: at must be a datetime, got {type(at).__name__}",
        )
    if at.tzinfo is None or at.utcoffset() is None:
        raise StepArgumentError(
            "at",
            f"must be an aware datetime (with tzinfo), got naive {at.isoformat()}",
            message=f"sleep_until: at must be an aware datetime (with tzinfo), got naive {at.isoformat()}",
        )
    return int(at.timestamp() * 1000)


def duration_ms(duration: timedelta, field: str = "duration", call: str = "sleep") -> int:
    """Whole milliseconds of ``duration``; a negative one is 0 (ADR-0183).

    A negative duration is a time already past, as for ``asyncio.sleep``: a sleep of one returns at once and
    a wait with one gets only what has come already. A duration computed from the clock (``target - now``)
    is negative on a replay after its wake, and the replay must go on.

    Raises:
        StepArgumentTypeError: ``duration`` is not a ``timedelta``; ``field`` and ``call`` name it.
    """
    if not isinstance(duration, timedelta):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise StepArgumentTypeError(
            field,
            f"must be a timedelta, got {type(duration).__name__}",
            message=f"{call}: {field} must be a timedelta, got {type(duration).__name__}",
        )
    return max(0, duration // timedelta(milliseconds=1))
