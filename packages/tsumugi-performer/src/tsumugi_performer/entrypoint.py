"""Expose performers as Worker entrypoints: one named entrypoint per `Performer` class (binding = class name).

The scheduler's queue consumer calls the entrypoint's ``run_attempt(dispatch, heartbeat)`` over a Service
Binding (or the Worker's own export, ``ctx.exports``). Everything crosses as a string or a number, because
a stub in ``ctx.exports`` and a function received over RPC convert nothing on Cloudflare: a ``dict`` would
be a ``DataCloneError`` (ADR-0043). ``dispatch`` is JSON text (the attempt's payload and context fields,
camelCase as on the queue); ``heartbeat`` is a callable stub that forwards ``progress`` (a number or None) to
the shard and answers JSON text ``{"accepted": bool, "cancel_requested": bool}``. The answer is JSON text
of an outcome envelope, because across RPC only an exception's type name and message survive and the retry
controls (`NonRetryableError`, `RetryAfterError`) must reach the shard intact::

    {"ok": true, "result": <JSON value>}
    {"ok": false, "error": "<Type>: <message> then the traceback", "retryable": bool, "retryAt": int | null}

The entrypoint also answers ``describe()`` with JSON text ``{"payloadSchema": <JSON Schema of the payload
type>}``, which the scheduler fetches once per isolate to check enqueued payloads (ADR-0075).

A ``dispatch`` given as a mapping (a scheduler from before ADR-0043) is answered with the envelope as a
``dict``, and a heartbeat answer given as a mapping is read too.

Nothing here imports ``js`` or ``workers``: the Worker's entry module passes its ``WorkerEntrypoint`` class in.

Example (``entry.py`` of a performer Worker)::

    from workers import WorkerEntrypoint
    from tsumugi_performer.entrypoint import performer_entrypoint
    from my_jobs import SendMail as SendMailPerformer

    SendMail = performer_entrypoint(WorkerEntrypoint, SendMailPerformer)
"""

from __future__ import annotations

import asyncio
import functools
import time
import traceback
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, TypeVar, cast

import msgspec

from tsumugi_core.clock import TimeSource
from tsumugi_core.exceptions import InvalidTypeError
from tsumugi_core.liveness import heartbeat_interval_ms
from tsumugi_performer._context import HeartbeatAnswer, HeartbeatError, JobContext
from tsumugi_performer._errors import NonRetryableError, RetryAfterError
from tsumugi_performer._performer import Performer
from tsumugi_performer._steps import StepChannel, SuspendSignal
from tsumugi_performer._trace_paths import relative_trace

__all__ = [
    "DESCRIBE_METHOD",
    "DISPATCH_METHOD",
    "AttemptDispatch",
    "PerformerFactory",
    "PerformerRunner",
    "SystemTime",
    "TimeSource",
    "performer_entrypoint",
    "time_source",
    "use_time_source",
]

DISPATCH_METHOD: Final = "run_attempt"
"""The RPC method of a performer entrypoint the consumer calls."""
DESCRIBE_METHOD: Final = "describe"
"""The RPC method the scheduler calls for the performer's payload schema before checking enqueues (ADR-0075)."""

_B = TypeVar("_B", bound=type)

PerformerFactory = Callable[[Any], Performer[Any, Any]]
"""Builds the performer for one attempt from the Worker's ``env`` (e.g. to pass a URL from its vars)."""


class SystemTime:
    """The wall clock and `asyncio.sleep`."""

    def now_ms(self) -> int:
        """Milliseconds since the epoch."""
        return time.time_ns() // 1_000_000

    async def sleep_ms(self, ms: int) -> None:
        """Sleep on the event loop."""
        await asyncio.sleep(max(0, ms) / 1000)


_time: list[TimeSource] = [SystemTime()]


def time_source() -> TimeSource:
    """The time source performer Workers of this process use (heartbeat throttling, example sleeps)."""
    return _time[0]


def use_time_source(source: TimeSource) -> TimeSource:
    """Make ``source`` the process's performer time source (a host's or a test's clock); returns the old one."""
    previous = _time[0]
    _time[0] = source
    return previous


class AttemptDispatch(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """What the consumer sends for one attempt (the queue message's fields a performer needs)."""

    job_id: str
    attempt: int
    max_attempts: int
    deadline_at: int
    payload: Any = None
    traceparent: str | None = None
    timeout_ms: int | None = None
    """The attempt's timeout; absent from an older scheduler (then ``deadline_at`` tells it)."""
    claim_required: bool = False
    """The job is at-most-once (its steps are marked begun before they run, ADR-0144)."""
    invocation_ends_at: int | None = None
    """When the consumer invocation running the attempt stops waiting (ADR-0147)."""


_DISPATCH: Final = msgspec.json.Decoder(AttemptDispatch)
_HEARTBEAT_ANSWER: Final = msgspec.json.Decoder(HeartbeatAnswer)
_ENVELOPE: Final = msgspec.json.Encoder()


def _plain(value: Any) -> Any:
    # A JS object (Cloudflare) offers to_py(); local values are Python already.
    to_py = getattr(value, "to_py", None)
    return to_py() if callable(to_py) else value


def _error_text(error: BaseException) -> str:
    # Name and message first: the shard keeps the first 2000 characters, and the message is what people read.
    # The performer's exception is user code: its str() may raise or answer a non-string, and its text may hold
    # a lone surrogate that no JSON encoder takes; none of that may cost the job its outcome.
    try:
        head = f"{type(error).__name__}: {error}"
        trace = "".join(traceback.format_exception(error)).rstrip()
    except Exception:
        head = f"{type(error).__name__}: <its str() failed>"
        trace = "".join(traceback.format_tb(error.__traceback__)).rstrip()
    return f"{head}\n{relative_trace(trace)}".encode(errors="backslashreplace").decode()


def _failure(error: BaseException, now_ms: int) -> dict[str, Any]:
    retry_at = error.retry_at(now_ms) if isinstance(error, RetryAfterError) else None
    return {
        "ok": False,
        "error": _error_text(error),
        "retryable": not isinstance(error, NonRetryableError),
        "retryAt": retry_at,
    }


def _suspension(signal: SuspendSignal) -> dict[str, Any]:
    # ADR-0145: a failure with retryAt to a scheduler that predates sleeps (it retries at the wake time).
    until = signal.suspension.until
    return {
        "ok": False,
        "error": f"suspended: {signal}",
        "retryable": True,
        "retryAt": until,
        "suspend": {"until": until, "reason": signal.suspension.reason, "step": signal.suspension.step},
    }


def _result_value(result: Any) -> Any:
    try:
        return msgspec.to_builtins(result)
    except (TypeError, ValueError):
        # The shard stores an unserialisable result as null, as the original does.
        return None


class PerformerRunner:
    """Runs one attempt of one performer class and answers the outcome envelope.

    It raises only when an at-most-once step's result was lost (`StepSaveLostError`): the call then fails,
    which the consumer reads as an unknown outcome (ADR-0144).
    """

    def __init__(self, performer: type[Performer[Any, Any]], factory: PerformerFactory | None = None) -> None:
        """Run ``performer``, built by ``factory(env)`` (default: ``performer()``)."""
        self.performer = performer
        self._factory = factory

    def _heartbeat_fn(self, heartbeat: Any) -> Callable[[float | None], Awaitable[HeartbeatAnswer]]:
        async def send(progress: float | None) -> HeartbeatAnswer:
            if heartbeat is None:
                return HeartbeatAnswer(accepted=False, cancel_requested=False)
            answer = await heartbeat(progress)
            try:
                if isinstance(answer, str):
                    return _HEARTBEAT_ANSWER.decode(answer)
                return msgspec.convert(_plain(answer), HeartbeatAnswer, strict=False)
            except (msgspec.DecodeError, msgspec.ValidationError) as error:
                raise HeartbeatError(
                    f"the heartbeat's answer does not decode: {error} ({answer!r:.200})"
                ) from None

        return send

    def _step_fn(self, heartbeat: Any) -> StepChannel | None:
        # A step command is JSON text sent through the heartbeat stub (ADR-0144).
        if heartbeat is None:
            return None

        async def send(command: str) -> Any:
            return _plain(await heartbeat(command))

        return send

    def describe(self) -> str:
        """JSON text ``{"payloadSchema": <JSON Schema of the declared payload type>}`` (``{}`` for ``Any``).

        Made once per class: the scheduler asks once per isolate and binding (ADR-0075).
        """
        return _description(self.performer)

    async def run(self, dispatch: str | Mapping[str, Any], heartbeat: Any, env: Any) -> Any:
        """Decode ``dispatch``, build the context, call ``perform`` and answer the envelope.

        JSON text in, JSON text out; a mapping in (an older scheduler), a ``dict`` out.
        """
        envelope = await self._run(dispatch, heartbeat, env)
        if not isinstance(dispatch, str):
            return envelope
        try:
            return _ENVELOPE.encode(envelope).decode()
        except UnicodeEncodeError:  # a result holding a lone surrogate: not JSON, stored as null (ADR-0016)
            return _ENVELOPE.encode({**envelope, "result": None}).decode()

    async def _run(self, dispatch: str | Mapping[str, Any], heartbeat: Any, env: Any) -> dict[str, Any]:
        clock = time_source()
        try:
            if isinstance(dispatch, str):
                attempt = _DISPATCH.decode(dispatch)
            else:
                attempt = msgspec.convert(_plain(dispatch), AttemptDispatch, strict=False)
            ctx = JobContext(
                job_id=attempt.job_id,
                attempt=attempt.attempt,
                max_attempts=attempt.max_attempts,
                deadline_at=attempt.deadline_at,
                heartbeat=self._heartbeat_fn(heartbeat),
                traceparent=attempt.traceparent,
                clock=clock,
                # Often enough to keep even a short timeout alive (ADR-0053).
                heartbeat_interval_ms=heartbeat_interval_ms(
                    attempt.timeout_ms
                    if attempt.timeout_ms is not None
                    else attempt.deadline_at - clock.now_ms()
                ),
                steps=self._step_fn(heartbeat),
                at_most_once=attempt.claim_required,
                invocation_ends_at=attempt.invocation_ends_at,
            )
        except (msgspec.ValidationError, msgspec.DecodeError, ValueError, RecursionError) as error:
            # A dispatch or payload that does not decode cannot succeed on a retry (RecursionError: nested past
            # the decoder's depth, which no enqueue lets through: payloads hold at most 64 levels).
            failure = NonRetryableError(f"invalid dispatch for {self.performer.__name__}: {error}")
            return _failure(failure, clock.now_ms())
        try:
            # InvalidPayloadError is a NonRetryableError: a payload that does not fit fails the job at once.
            payload = self.performer.decode_payload(attempt.payload)
            instance = self._factory(env) if self._factory is not None else self.performer()
            result = await instance.perform(payload, ctx)
        except SuspendSignal as signal:
            _raise_if_step_lost(ctx)
            return _suspension(signal)
        except Exception as error:
            _raise_if_step_lost(ctx)
            return _failure(error, clock.now_ms())
        except (KeyboardInterrupt, SystemExit, GeneratorExit, asyncio.CancelledError) as error:
            # Raised by the performer's own code, each is its attempt's failure: left to propagate, the first
            # two ended the whole local runtime and a CancelledError left the job to the reaper. A real
            # cancellation of this task still propagates.
            task = asyncio.current_task()
            if isinstance(error, asyncio.CancelledError) and task is not None and task.cancelling():
                raise
            _raise_if_step_lost(ctx)
            return _failure(error, clock.now_ms())
        _raise_if_step_lost(ctx)
        if ctx.spawns:
            return {"ok": True, "result": _result_value(result), "spawns": ctx.spawns}
        return {"ok": True, "result": _result_value(result)}


def _raise_if_step_lost(ctx: JobContext) -> None:
    """A lost step save of an at-most-once job fails the call itself, whatever the performer did after it.

    The consumer reads a failed call as an unknown outcome (the job stalls, its step marks kept), where an
    answered failure would let a later attempt run the step again (ADR-0144).
    """
    lost = ctx.lost_step_save
    if lost is not None:
        raise lost


@functools.cache
def _description(performer: type[Performer[Any, Any]]) -> str:
    try:
        schema: Any = msgspec.json.schema(performer.payload_type())
    except (TypeError, ValueError):
        schema = {}  # a type msgspec cannot describe: the scheduler then accepts any payload for it
    return _ENVELOPE.encode({"payloadSchema": schema}).decode()


def performer_entrypoint(
    base: _B,
    performer: type[Performer[Any, Any]],
    *,
    factory: PerformerFactory | None = None,
    name: str | None = None,
) -> _B:
    """A ``WorkerEntrypoint`` subclass named after ``performer`` whose ``run_attempt`` runs it.

    Args:
        base: The Workers SDK's ``WorkerEntrypoint`` (passed in so this module never imports the SDK).
        performer: The `Performer` subclass to expose.
        factory: Builds the performer from the Worker's ``env``; default ``performer()``.
        name: The entrypoint (binding) name; default the performer class name.

    Raises:
        TypeError: ``performer`` is not a `Performer` subclass.
    """
    if not (isinstance(performer, type) and issubclass(performer, Performer)):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise InvalidTypeError("performer", f"must be a Performer subclass, got {performer!r}")
    runner = PerformerRunner(performer, factory)

    async def run_attempt(self: Any, dispatch: str | Mapping[str, Any], heartbeat: Any = None) -> Any:
        return await runner.run(dispatch, heartbeat, getattr(self, "env", None))

    async def describe(self: Any) -> str:
        return runner.describe()

    namespace: dict[str, Any] = {
        DISPATCH_METHOD: run_attempt,
        DESCRIBE_METHOD: describe,
        "__doc__": f"Tsumugi performer entrypoint for {performer.__name__}.",
        "__module__": performer.__module__,
        "runner": runner,
    }
    return cast(_B, type(name or performer.__name__, (base,), namespace))
