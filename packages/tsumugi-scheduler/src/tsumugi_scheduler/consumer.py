"""The queue consumer: run each dispatched attempt by calling its performer, report the outcome, always ack.

Per message (every message of a batch concurrently, each isolated): claim first for at-most-once jobs (a refused
claim is a duplicate delivery: ack and stop; the claim marks the job RUNNING), or mark an at-least-once job RUNNING
without waiting (marks of attempts still running after 100 ms go to each shard in one ``start_many`` call,
ADR-0052); find the performer (the Worker's own export, then a Service Binding named after the binding; looked up
once a binding a batch); call its ``run_attempt`` with the attempt's timeout, which each heartbeat the shard accepts
restarts, but never past `MAX_TIMEOUT_MS` after the message was taken up (Cloudflare stops a consumer invocation
after 15 minutes of wall time; the last minute is left to report and ack, ADR-0047; a performer's wait for one of
the invocation's six simultaneous connections counts against it, while reports, marks and acks need none, ADR-0102);
report the outcome with the attempt number (a timed-out or lost call is flagged ``outcomeUnknown``: the performer
may still run, which an at-most-once job must never overlap, ADR-0051) (the reports of one step go to each shard in
one ``report_many`` call); ack whatever happened.
The queue's own retries are never used: retries are the shard's decision (docs/reference/original.md §1.4).

Only strings and numbers cross to the performer and back (ADR-0043): the dispatch and the outcome as JSON text,
the heartbeat's progress as a number and its answer as JSON text, because the Worker's own exports
(``ctx.exports``) and the heartbeat stub convert nothing on Cloudflare and would refuse a ``dict``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Mapping
from typing import Any, Final

import msgspec

from tsumugi_core.errors import timeout_error
from tsumugi_core.events import box_name
from tsumugi_core.options import MAX_TIMEOUT_MS
from tsumugi_core.steps import StepAnswer, StepCommand
from tsumugi_scheduler import _runtime
from tsumugi_scheduler.deadlines import deadline_watch
from tsumugi_scheduler.performer_lookup import find_performer
from tsumugi_scheduler.remote_errors import error_text, is_missing_method
from tsumugi_scheduler.report_batch import ReportBatch
from tsumugi_scheduler.start_marks import StartMarks
from tsumugi_scheduler.timing import TimeSource, time_source
from tsumugi_scheduler.wire import integral, integral_shared, shard_of_job

__all__ = ["DISPATCH_METHOD", "QueuedDispatch", "handle_batch", "not_found_error", "run_dispatch"]

DISPATCH_METHOD: Final = "run_attempt"
"""The performer entrypoint's RPC method (tsumugi_performer.entrypoint)."""
_HEARTBEAT_ANSWERS: Final = {
    (accepted, cancel): msgspec.json.encode({"accepted": accepted, "cancel_requested": cancel}).decode()
    for accepted in (False, True)
    for cancel in (False, True)
}
"""The heartbeat's four possible answers, as the JSON text that crosses to the performer."""
_JSON: Final = msgspec.json.Encoder()
_STEP_COMMAND: Final = msgspec.json.Decoder(StepCommand)
_STEP_ANSWER: Final = msgspec.json.Decoder(StepAnswer)
_log = logging.getLogger("tsumugi_scheduler")
_abandoned: set[asyncio.Future[Any]] = set()


class QueuedDispatch(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A queue message body: the engine's DispatchMessage plus ``max_attempts``."""

    job_id: str
    binding: str
    attempt: int
    timeout_ms: int
    claim_required: bool
    payload: Any = None
    max_attempts: int | None = None
    deadline_at: int | None = None
    traceparent: str | None = None


_DISPATCH: Final = msgspec.json.Decoder(QueuedDispatch)


def not_found_error(binding: str) -> str:
    """The failure of an attempt whose performer cannot be found."""
    return f"performer not found: {binding} (export it, or add a service binding)"


def _failed(error: str, *, retryable: bool = True, unknown: bool = False) -> dict[str, Any]:
    failure: dict[str, Any] = {"ok": False, "error": error, "retryable": retryable, "retryAt": None}
    if unknown:  # the performer may still be running, or may have done its work
        failure["outcomeUnknown"] = True
    return failure


class _Attempt:
    """One running attempt: its shard stub, its deadline and its heartbeat forwarder."""

    def __init__(self, dispatch: QueuedDispatch, env: Any, clock: TimeSource) -> None:
        self.dispatch = dispatch
        self.name = shard_of_job(dispatch.job_id)
        self.env = env
        self.clock = clock
        self.started_at = clock.now_ms()
        self.latest = self.started_at + MAX_TIMEOUT_MS
        """The invocation ends 15 minutes after it began: no heartbeat extends the attempt past this."""
        self.deadline = min(self.started_at + dispatch.timeout_ms, self.latest)

    @functools.cached_property
    def shard(self) -> Any:
        """The job's shard stub, made when first used: most attempts report through the batch's `ReportBatch`
        and never call their shard themselves."""
        return self.env.JOB_SHARD.getByName(self.name)

    async def heartbeat(self, progress: Any = None) -> str:
        """The performer's heartbeat stub: forwards to the shard and answers JSON text (ADR-0043).

        JSON text instead of a number is a step command, forwarded to the shard's ``step`` (ADR-0144).
        """
        d = self.dispatch
        if isinstance(progress, str):
            return await self.step(progress)
        value = progress if isinstance(progress, int | float) and not isinstance(progress, bool) else None
        answer = await self.shard.heartbeat(self.name, d.job_id, d.attempt, value)
        accepted = bool(answer["accepted"])
        if accepted:  # an accepted heartbeat restarts the timer, within the invocation's time
            self.deadline = min(self.clock.now_ms() + d.timeout_ms, self.latest)
        return _HEARTBEAT_ANSWERS[accepted, bool(answer["cancel_requested"])]

    async def step(self, command: str) -> str:
        """Forward a step command; an accepted ``save`` is a sign of life, as a heartbeat is (ADR-0144)."""
        d = self.dispatch
        decoded = _STEP_COMMAND.decode(command)  # a malformed command fails here, in the performer's step
        op = decoded.op
        if op == "wait":
            command = await self._register_wait(decoded, command)
        answer = str(await self.shard.step(self.name, d.job_id, d.attempt, command))
        if op == "save" and _STEP_ANSWER.decode(answer).accepted:
            self.deadline = min(self.clock.now_ms() + d.timeout_ms, self.latest)
        return answer

    async def _register_wait(self, wait: StepCommand, command: str) -> str:
        # The event's box first: a kept event comes back at once, else the job waits there; then its shard
        # records the wait (or the event), so no event sent in between is lost (ADR-0146).
        d = self.dispatch
        event, key, step = str(wait.event), str(wait.key), str(wait.name)
        box = box_name(event, key)
        kept = await self.env.JOB_SHARD.getByName(box).event_wait(
            box, event, key, d.job_id, step, self.name, int(wait.until or 0), list(wait.seen)
        )
        if isinstance(kept, str):
            return _JSON.encode(msgspec.structs.replace(wait, result=kept)).decode()
        return command

    def request(self) -> str:
        d = self.dispatch
        return _JSON.encode(
            {
                "jobId": d.job_id,
                "attempt": d.attempt,
                "maxAttempts": d.max_attempts or d.attempt,
                "deadlineAt": min(self.started_at + d.timeout_ms, self.latest),
                "payload": d.payload,
                "traceparent": d.traceparent,
                "timeoutMs": d.timeout_ms,
                "claimRequired": d.claim_required,
                "invocationEndsAt": self.latest,
            }
        ).decode()

    async def call(self, performer: Any) -> dict[str, Any]:
        """Run the performer, waiting at most until the (heartbeat-extended) deadline."""
        heartbeat = _runtime.LentCallable(self.heartbeat)  # the performer calls it back while it runs
        # On the JS object itself: a string and a proxy cross as themselves, the answer is read below (ADR-0169).
        call: asyncio.Future[Any] = asyncio.ensure_future(
            _answered(
                getattr(_runtime.unwrapped(performer), DISPATCH_METHOD)(self.request(), heartbeat.value)
            )
        )
        call.add_done_callback(lambda _: heartbeat.release())
        if not call.done():
            woken: asyncio.Future[None] = call.get_loop().create_future()
            call.add_done_callback(lambda _: woken.done() or woken.set_result(None))
            watch = deadline_watch(self.clock)
            watch.add(self, woken)
            try:
                await woken
            finally:
                if not woken.done():
                    woken.cancel()  # this wait itself was cancelled
                watch.done()
            if not call.done():
                # The wait is abandoned; the performer is not stopped (it can watch deadline_at or heartbeats).
                _abandoned.add(call)
                call.add_done_callback(_forget)
                return _failed(self._timeout_text(), unknown=True)
        return _envelope(call, self.dispatch.binding)

    def _timeout_text(self) -> str:
        d = self.dispatch
        text = f"TsumugiTimeoutError: {timeout_error(d.job_id, d.timeout_ms)}"
        if self.deadline >= self.latest:
            text += f"; stopped at {MAX_TIMEOUT_MS} ms, the longest an attempt may run in a queue consumer invocation"
        return text


async def _answered(call: Any) -> Any:
    return _runtime.from_rpc(await call)


def _forget(future: asyncio.Future[Any]) -> None:
    _abandoned.discard(future)
    if not future.cancelled():
        future.exception()  # retrieved, so asyncio does not log it as never retrieved


def _envelope(call: asyncio.Future[Any], binding: str) -> dict[str, Any]:
    error = call.exception()
    if error is not None:
        if is_missing_method(error, DISPATCH_METHOD):
            return _failed(not_found_error(binding))
        return _failed(error_text(error), unknown=True)  # the call failed, not (knowingly) the performer
    answer = _outcome(call.result())
    if not isinstance(answer, Mapping) or not isinstance(answer.get("ok"), bool):  # pyright: ignore[reportUnknownMemberType]
        return _failed(f"performer {binding} answered a malformed outcome: {answer!r}", retryable=False)
    return dict(answer)  # pyright: ignore[reportUnknownArgumentType]


def _plain(value: Any) -> Any:
    to_py = getattr(value, "to_py", None)
    return to_py() if callable(to_py) else value


def _outcome(answer: Any) -> Any:
    # JSON text (ADR-0043); a mapping, or a JS object to convert, from a performer predating it.
    if isinstance(answer, str):
        try:
            return msgspec.json.decode(answer)
        except msgspec.DecodeError:
            return answer
    return integral(_plain(answer))


class _Performers:
    """The performers of one queue batch, each binding looked up once (its export, else its Service Binding):
    a lookup crosses to the platform's objects twice when the binding is not exported."""

    def __init__(self, env: Any, exports: Any) -> None:
        self._env = env
        self._exports = exports
        self._found: dict[str, Any] = {}

    def get(self, binding: str) -> Any:
        found = self._found
        if binding not in found:
            found[binding] = find_performer(binding, self._env, self._exports)
        return found[binding]


async def run_dispatch(
    dispatch: QueuedDispatch,
    env: Any,
    exports: Any,
    reports: ReportBatch | None = None,
    starts: StartMarks | None = None,
    performers: _Performers | None = None,
) -> None:
    """Claim (at-most-once) or mark RUNNING, perform with the timeout, and report one attempt.

    Reports and marks go through ``reports`` and ``starts`` when given (the batch handler's); without
    ``starts`` the mark is sent on its own and awaited before this returns. ``performers``: the batch's lookups.
    """
    attempt = _Attempt(dispatch, env, time_source())
    if dispatch.claim_required:
        claimed = await attempt.shard.claim(attempt.name, dispatch.job_id, dispatch.attempt)
        if not claimed:
            return  # a duplicate delivery, or the job moved on: someone else runs (or ran) it
    performer = (performers or _Performers(env, exports)).get(dispatch.binding)
    if performer is None:
        outcome = _failed(not_found_error(dispatch.binding))
    else:
        own = starts is None
        marks = StartMarks(env, attempt.clock) if starts is None else starts
        if not dispatch.claim_required:  # the claim already marked an at-most-once job RUNNING
            marks.mark(attempt.name, dispatch.job_id, dispatch.attempt)
        try:
            outcome = await attempt.call(performer)
        finally:
            marks.answered(attempt.name, dispatch.job_id, dispatch.attempt)
            if own:
                await marks.drain()
    if reports is None:
        await attempt.shard.report(attempt.name, dispatch.job_id, dispatch.attempt, outcome)
    else:
        await reports.report(attempt.name, dispatch.job_id, dispatch.attempt, outcome)


def _dispatch(body: Any) -> QueuedDispatch:
    """A message's dispatch: its JSON text (ADR-0166), or the object a shard predating it sent."""
    if isinstance(body, str):
        return _DISPATCH.decode(body)
    return msgspec.convert(integral_shared(body), QueuedDispatch)


async def _handle_message(
    message: Any, env: Any, exports: Any, reports: ReportBatch, starts: StartMarks, performers: _Performers
) -> None:
    try:
        dispatch = _dispatch(_runtime.from_rpc(message.body))  # JS null as None in a body predating ADR-0166
    except (msgspec.DecodeError, TypeError) as exc:
        # Without a job id there is nobody to report to: the reaper recovers the job, if any.
        _log.error("malformed dispatch message dropped: %s", exc)
        message.ack()
        return
    try:
        await run_dispatch(dispatch, env, exports, reports, starts, performers)
    except Exception:
        # The job stays QUEUED/RUNNING and the reaper recovers it; the queue must not retry on its own.
        _log.exception("attempt %d of %s could not be reported", dispatch.attempt, dispatch.job_id)
    finally:
        message.ack()


async def handle_batch(batch: Any, env: Any, ctx: Any) -> None:
    """The ``queue(batch, env, ctx)`` handler: every message concurrently, each acked.

    Reports made in the same step go to their shard together (`ReportBatch`), and so do the RUNNING marks of
    attempts still running after `MARK_DELAY_MS` (`StartMarks`), all sent before the handler returns.
    """
    exports = getattr(ctx, "exports", None)
    # The JS batch and messages themselves: bodies are JSON text and ack takes nothing (ADR-0169).
    messages = list(_runtime.unwrapped(batch).messages)
    reports = ReportBatch(env)
    starts = StartMarks(env, time_source())
    performers = _Performers(env, exports)
    try:
        await asyncio.gather(
            *(_handle_message(m, env, exports, reports, starts, performers) for m in messages)
        )
    finally:
        await starts.drain()
