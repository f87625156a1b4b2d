"""The JobShard Durable Object's application shell: decode -> engine command -> encode, then one alarm.

`JobShardHost` wraps a `JobShardEngine` over the object's SQL storage. After every command it arms exactly
one alarm at the engine's ``next_wake_at`` (or none). ``alarm()`` reads the change feed, ticks, sends the
dispatch messages (``sendBatch`` chunks within Cloudflare's 100 messages and 256,000 bytes of JSON, ADR-0044
and ADR-0106),
projects the changes read before the tick into D1 and acks them (at most `D1_QUERIES_PER_ALARM` statements,
ADR-0046), writes Analytics Engine points for terminal snapshots after the ack (metrics are at-most-once; at
most `POINTS_PER_ALARM`: the projection stops before a change whose point would not fit and the next alarm,
armed at once, goes on, ADR-0045), and
enqueues notice jobs with ids derived from the notice's feed position so a repeat after a crash is absorbed
as a re-enqueue of the same id. A tick that raises re-arms in 5 s (workerd retries a failing alarm only a few
times). Each dispatch and each projected change is also logged as one line (``job <id> <STATE> attempt <n>``
with progress and the error's first line when present; a QUEUED change without progress only at dispatch)
on the ``tsumugi.jobs`` logger: ``tsumugi dev`` shows them, and on Cloudflare they land in the Worker's logs.

The object learns its name (``<binding>#<shard>``) from the first call, which always carries it, and keeps
it in its storage for alarms.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any, Final, cast

import msgspec

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.ids import format_job_id, shard_name
from tsumugi_core.options import CheckedJob, EnqueueItem, EnqueueValidationError
from tsumugi_core.policy import ShardSettings
from tsumugi_core.queue_size import MAX_BATCH_BYTES, MAX_BATCH_MESSAGES
from tsumugi_core.sharding import resolve_shard
from tsumugi_core.states import TERMINAL_STATES, JobState
from tsumugi_core.steps import StepCommand
from tsumugi_scheduler import _runtime
from tsumugi_scheduler.definition import TsumugiDefinition
from tsumugi_scheduler.dispatch_send import send_dispatches
from tsumugi_scheduler.event_box import EventBoxHost, is_box_name
from tsumugi_scheduler.job_view import detail_from_shard, step_details
from tsumugi_scheduler.readmodel import project
from tsumugi_scheduler.shard import (
    DispatchMessage,
    Failed,
    JobShardEngine,
    JobSnapshot,
    NoticeRecord,
    Outcome,
    ReportAnswer,
    SqlLike,
    Succeeded,
    Suspended,
)
from tsumugi_scheduler.timing import entropy, time_source
from tsumugi_scheduler.wire import convert_plain, integral_shared, snake_path

__all__ = [
    "ALARM_RETRY_MS",
    "D1_QUERIES_PER_ALARM",
    "FEED_BATCH",
    "FEED_ROUNDS",
    "JOB_LOGGER",
    "POINTS_PER_ALARM",
    "SEND_BATCH",
    "SEND_BATCH_BYTES",
    "JobShardHost",
    "job_event_line",
    "metrics_point",
]

ALARM_RETRY_MS: Final = 5_000
"""A tick that raised runs again this much later."""
SEND_BATCH: Final = MAX_BATCH_MESSAGES
"""Queues accept at most 100 messages per ``sendBatch``."""
SEND_BATCH_BYTES: Final = MAX_BATCH_BYTES - MAX_BATCH_MESSAGES * 100
"""Bytes of JSON per ``sendBatch``: Cloudflare's 256,000 less the ~100 bytes of metadata per message the
Queues docs say count towards the limits (ADR-0044, ADR-0106)."""
_DISPATCH_JSON: Final = msgspec.json.Encoder()
"""Encodes a dispatch message's body (ADR-0166)."""
_JSON_ENCODE: Final = msgspec.json.Encoder().encode
_JSON_DECODE: Final = msgspec.json.Decoder().decode
_ITEMS_DECODE: Final = msgspec.json.Decoder(list[EnqueueItem]).decode
_CHECKED_DECODE: Final = msgspec.json.Decoder(list[CheckedJob]).decode


_STEPS_FROM_DECODE: Final = msgspec.json.Decoder(dict[str, str]).decode


def _steps_from(text: str) -> dict[str, str]:
    """The ``steps_from`` of `JobShardHost.enqueue_checked`: new job id -> the job whose steps it takes.

    Raises:
        EnqueueValidationError: ``text`` is not a JSON object of strings.
    """
    try:
        return _STEPS_FROM_DECODE(text)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise EnqueueValidationError("steps_from", f"must be a JSON object of job ids: {exc}") from None


_CHECKED_AT: Final = re.compile(r" - at `\$\[(\d+)\]\[(\d+)\]([^`]*)`$")


def checked_refusal(exc: msgspec.ValidationError | msgspec.DecodeError) -> EnqueueValidationError:
    """Why a text is not a list of `CheckedJob` arrays, naming the item and field as `check_enqueue` would.

    msgspec names a value of an array by position (``$[2][3]``); the field is `CheckedJob`'s at that position.

    Example:
        >>> str(checked_refusal(msgspec.ValidationError("Expected `int` >= 1 - at `$[2][3]`")))
        'items[2].max_attempts Expected `int` >= 1'
    """
    text = str(exc)
    found = _CHECKED_AT.search(text)
    if found is None:
        return EnqueueValidationError("items", f"must be checked jobs: {text}")
    field = f"items[{found[1]}].{CheckedJob.__struct_fields__[int(found[2])].removesuffix('_json')}"
    inner = snake_path(found[3])  # within a field (the backoff's)
    if inner:
        field += inner if inner.startswith("[") else f".{inner}"
    return EnqueueValidationError(field, text[: found.start()])


def _integral_item(item: EnqueueItem) -> EnqueueItem:
    """``item`` with its payload's integral floats as integers (what `convert_plain` does to a whole item)."""
    payload = integral_shared(item.payload)
    return item if payload is item.payload else msgspec.structs.replace(item, payload=payload)


FEED_BATCH: Final = 200
"""Snapshots per D1 projection batch, notices per round."""
D1_QUERIES_PER_ALARM: Final = 800
"""D1 statements one alarm may run: Cloudflare allows 1,000 per invocation (each statement of a batch
counts); 200 stay free for what else the invocation may query (ADR-0046)."""
FEED_ROUNDS: Final = D1_QUERIES_PER_ALARM // FEED_BATCH
"""Feed batches drained per alarm; more wait for the next alarm (armed at once while the feed is pending)."""
POINTS_PER_ALARM: Final = 200
"""Analytics Engine points one alarm writes: Cloudflare keeps 250 per invocation and drops the rest silently
(ADR-0045)."""

_IDENTITY_DDL: Final = (
    "CREATE TABLE IF NOT EXISTS shard_identity (id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL)"
)
JOB_LOGGER: Final = "tsumugi.jobs"
"""The logger of the one-line job events (under ``tsumugi``)."""

_log = logging.getLogger("tsumugi_scheduler")
_STEP_COMMAND: Final = msgspec.json.Decoder(StepCommand)
_PendingReport = tuple[str, int, Outcome, "asyncio.Future[ReportAnswer]"]
_job_log = logging.getLogger(JOB_LOGGER)
_LIVE_ATTEMPT_STATES: Final = frozenset({JobState.QUEUED, JobState.RUNNING})


def job_event_line(snapshot: JobSnapshot) -> str:
    """One log line for a projected change: ``job <id> <STATE> attempt <n>`` [``progress <p>``] [``error: ...``].

    The attempt is the live one while the job is QUEUED or RUNNING, else the number made so far. The error
    is that of the last finished attempt, so a live attempt's line leaves it out (it is not this attempt's).
    """
    job = snapshot.job
    live = job.state in _LIVE_ATTEMPT_STATES
    attempt = job.attempts + 1 if live else job.attempts
    line = f"job {job.id} {job.state.value} attempt {attempt}"
    if job.progress is not None:
        line += f" progress {job.progress:.3g}"
    if job.error and not live:
        # Errors carry a traceback after their first line; one event is one line.
        line += f" error: {job.error.splitlines()[0]}"
    return line


def metrics_point(snapshot: JobSnapshot) -> dict[str, Any]:
    """The Analytics Engine data point of a terminal snapshot (docs/reference/original.md §5.4)."""
    job = snapshot.job
    duration = 0 if job.dispatched_at is None else max(0, job.updated_at - job.dispatched_at)
    return {
        "indexes": [job.binding],
        "blobs": [job.state.value, job.binding, job.guarantee],
        "doubles": [float(job.attempts), float(duration)],
    }


def _log_changes(snapshots: list[JobSnapshot]) -> None:
    if not _job_log.isEnabledFor(logging.INFO):  # one line per change: build them only when shown
        return
    for snapshot in snapshots:
        if snapshot.job.state is not JobState.QUEUED or snapshot.job.progress is not None:
            _job_log.info("%s", job_event_line(snapshot))  # a bare QUEUED was logged at dispatch


def _answer(answer: ReportAnswer) -> dict[str, Any]:
    return {"accepted": answer.accepted, "state": None if answer.state is None else answer.state.value}


def _outcome(value: Mapping[str, Any]) -> Outcome:
    suspend = value.get("suspend")
    if value.get("ok") is False and isinstance(suspend, Mapping):  # ADR-0145
        until: Any = cast("Mapping[str, Any]", suspend).get("until")
        reason: Any = cast("Mapping[str, Any]", suspend).get("reason")
        if isinstance(until, int | float) and not isinstance(until, bool):
            step: Any = cast("Mapping[str, Any]", suspend).get("step")
            return Suspended(
                until=int(until), reason=str(reason or "sleep"), step=step if isinstance(step, str) else None
            )
    if value.get("ok") is True:
        spawns: Any = value.get("spawns")
        listed: list[Any] | None = (
            list(cast("list[Any]", spawns)) if isinstance(spawns, list) and spawns else None
        )
        return Succeeded(result=value.get("result"), spawns=listed)
    retry_at = value.get("retryAt")
    return Failed(
        error=str(value.get("error") or "the attempt failed"),
        retryable=value.get("retryable") is not False,
        retry_at=int(retry_at) if isinstance(retry_at, int | float) else None,
        unknown=value.get("outcomeUnknown") is True,
    )


def send_chunks(encoded: list[bytes]) -> list[list[dict[str, str]]]:
    """``sendBatch`` chunks of dispatch messages in order: at most `SEND_BATCH` messages and `SEND_BATCH_BYTES`.

    Each message is its dispatch's JSON text with ``contentType: "text"`` (ADR-0166): the queue carries the
    text's UTF-8 bytes, so ``encoded`` (msgspec's JSON of each dispatch) measures every message exactly. A
    message alone always goes out alone, whatever its size: enqueue validation keeps every payload under the
    message limit.
    """
    messages = [{"body": data.decode(), "contentType": "text"} for data in encoded]
    if sum(map(len, encoded)) <= SEND_BATCH_BYTES:
        return [messages[start : start + SEND_BATCH] for start in range(0, len(messages), SEND_BATCH)]
    chunks: list[list[dict[str, str]]] = []
    chunk: list[dict[str, str]] = []
    used = 0
    for message, data in zip(messages, encoded, strict=True):
        size = len(data)
        if chunk and (len(chunk) == SEND_BATCH or used + size > SEND_BATCH_BYTES):
            chunks.append(chunk)
            chunk, used = [], 0
        chunk.append(message)
        used += size
    if chunk:
        chunks.append(chunk)
    return chunks


def within_points(snapshots: list[JobSnapshot], points: int) -> tuple[list[JobSnapshot], list[JobSnapshot]]:
    """The longest prefix of ``snapshots`` (in feed order) holding at most ``points`` terminal ones, and those."""
    terminal: list[JobSnapshot] = []
    for i, snapshot in enumerate(snapshots):
        if snapshot.job.state in TERMINAL_STATES:
            if len(terminal) == points:
                return snapshots[:i], terminal
            terminal.append(snapshot)
    return snapshots, terminal


class JobShardHost:
    """One JobShard object: its engine (opened on first use), its bindings and its alarm."""

    def __init__(self, storage: Any, sql: SqlLike, env: Any, definition: TsumugiDefinition) -> None:
        """Serve the object whose ``ctx.storage`` is ``storage`` (``sql`` is the engine's view of it)."""
        self._storage = storage
        self._sql = sql
        self._env = env
        self._definition = definition
        self._engine: JobShardEngine | None = None
        self._name: str | None = None
        self._reports: list[_PendingReport] = []
        self._event_box: EventBoxHost | None = None

    # -- opening --------------------------------------------------------------------------------------------

    def stored_name(self) -> str | None:
        """The name this object was first used under, if any."""
        return self._stored_name()

    def _stored_name(self) -> str | None:
        self._sql.exec(_IDENTITY_DDL)
        rows = self._sql.exec("SELECT name FROM shard_identity WHERE id = 1").toArray()
        return str(rows[0]["name"]) if rows else None

    def is_event_box(self) -> bool:
        """Whether this object is an event box (ADR-0146) rather than a shard."""
        return self._engine is None and is_box_name(self._stored_name())

    def remember(self, name: str) -> None:
        """Record this object's name on its first use (an event box's; a shard's engine records its own)."""
        self._sql.exec(_IDENTITY_DDL)
        self._sql.exec("INSERT OR IGNORE INTO shard_identity (id, name) VALUES (1, ?)", name)

    def engine(self, name: str | None = None) -> JobShardEngine | None:
        """The engine of this object; ``name`` is required the first time the object is ever used."""
        if self._engine is not None:
            return self._engine
        stored = self._stored_name()
        if (stored is None and name is None) or is_box_name(stored):
            return None
        if stored is None and name is not None:
            self._sql.exec("INSERT INTO shard_identity (id, name) VALUES (1, ?)", name)
        resolved = stored or name or ""
        binding, _, shard = resolved.rpartition("#")
        self._name = resolved
        self._engine = JobShardEngine(
            self._sql,
            binding=binding,
            shard=int(shard) if shard.isascii() and shard.isdigit() else 0,
            clock=time_source(),
            ids=entropy()[0],
            rand=entropy()[1],
            notices=self._definition.notices,
        )
        return self._engine

    def code_settings(self, binding: str) -> ShardSettings | None:
        """The scheduler definition's settings for ``binding``; None when it configures none."""
        return self._definition.settings_of(binding)

    def _open(self, name: str) -> JobShardEngine:
        engine = self.engine(name)
        assert engine is not None  # a name was given
        return engine

    async def _arm(self) -> None:
        engine = self._engine
        if engine is None:
            return
        current = await _runtime.current_alarm(self._storage)
        if current is not None and current <= time_source().now_ms():
            # An alarm is already due: it ticks soon and arms exactly after it, so a burst of reports
            # coalesces into one tick without computing the wake instant once per report.
            return
        at = engine.next_wake_at()
        if at is None:
            return  # an alarm already armed only costs one idle tick, which then arms exactly
        # Earlier-only: an armed alarm may be for a delayed job that is due now but not dispatched yet,
        # which next_wake_at does not count after the due instant; pushing it back would strand the job.
        if current is None or current > at:
            await _runtime.set_alarm(self._storage, at)

    async def _command(self, name: str, run: Callable[[JobShardEngine], Any]) -> Any:
        answer = run(self._open(name))
        await self._arm()
        return answer

    # -- commands -------------------------------------------------------------------------------------------

    async def enqueue_many(self, name: str, items: Any, settings: Any = None) -> list[str]:
        """Store items (camelCase enqueue items) with the code's settings; answers ids in input order."""
        decoded = convert_plain(items, list[EnqueueItem], "items")
        code = None if settings is None else convert_plain(settings, ShardSettings, "settings")
        results = await self._command(name, lambda e: e.enqueue_many(decoded, code))
        return [r.id for r in results]

    async def enqueue_json(self, name: str, items: str, settings: str | None = None) -> str:
        """`enqueue_many` with the items, the settings and the ids as JSON text (ADR-0166).

        Items are decoded straight into `EnqueueItem` (one msgspec pass, payloads' integral numbers read as
        integers as `convert_plain` reads them); text that does not decode so takes `enqueue_many`'s path,
        which names the field at fault.
        """
        code = None if settings is None else _JSON_DECODE(settings)
        try:
            decoded = [_integral_item(item) for item in _ITEMS_DECODE(items)]
        except (msgspec.ValidationError, msgspec.DecodeError):
            return _JSON_ENCODE(await self.enqueue_many(name, _JSON_DECODE(items), code)).decode()
        decoded_code = None if code is None else convert_plain(code, ShardSettings, "settings")
        results = await self._command(name, lambda e: e.enqueue_many(decoded, decoded_code))
        return _JSON_ENCODE([r.id for r in results]).decode()

    async def enqueue_checked(
        self, name: str, jobs: str, settings: str | None = None, steps_from: str | None = None
    ) -> str:
        """Store jobs the scheduler's service has checked: `CheckedJob` arrays in one JSON text, stored without
        checking their options again (ADR-0172); the settings and the ids as JSON text, as `enqueue_json`.
        ``steps_from``: JSON text ``{"<new job id>": "<job whose steps it takes>"}`` for resumed run nodes,
        applied in the enqueue's transaction (ADR-0184).

        Raises:
            EnqueueValidationError: the text is not a list of checked jobs, one belongs to another shard, or
                ``steps_from`` is not an object of job ids.
        """
        try:
            decoded = _CHECKED_DECODE(jobs)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise checked_refusal(exc) from None
        code = None if settings is None else convert_plain(_JSON_DECODE(settings), ShardSettings, "settings")
        sources = None if steps_from is None else _steps_from(steps_from)
        results = await self._command(name, lambda e: e.enqueue_checked(decoded, code, sources))
        return _JSON_ENCODE([r.id for r in results]).decode()

    async def claim(self, name: str, job_id: str, attempt: int) -> bool:
        """At-most-once start of the live attempt."""
        return bool(await self._command(name, lambda e: e.claim(job_id, int(attempt))))

    async def start_many(self, name: str, attempts: Any) -> list[bool]:
        """Mark started attempts (``{"jobId", "attempt"}`` each) RUNNING in one statement; one answer each."""
        items = [(str(a["jobId"]), int(a["attempt"])) for a in attempts]
        return await self._command(name, lambda e: e.start_many(items))

    async def report(
        self, name: str, job_id: str, attempt: int, outcome: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Record an attempt's outcome envelope; answers ``accepted`` and the state after it.

        Reports that arrive together are applied as a group: one transaction (each report still its own
        nested one, so a refused or failing report affects no other) and one alarm check, and every call
        returns only once the group is committed and the alarm armed.
        """
        (waiter,) = await self._submit(name, [(job_id, attempt, outcome)])
        return _answer(await waiter)

    async def report_many(self, name: str, reports: Any) -> list[dict[str, Any]]:
        """Record several outcomes (``{"jobId", "attempt", "outcome"}`` each) as one group, in order.

        Answers one entry per report: ``accepted`` and ``state`` as `report` does, or ``error`` (the
        exception's type and message) for a report that failed on its own; the others still apply.
        """
        items = [(str(r["jobId"]), int(r["attempt"]), r["outcome"]) for r in reports]
        answers: list[dict[str, Any]] = []
        for waiter in await self._submit(name, items):
            try:
                answers.append(_answer(await waiter))
            except Exception as exc:
                answers.append({"error": f"{type(exc).__name__}: {exc}"})
        return answers

    async def report_json(self, name: str, reports: str) -> str:
        """`report_many` with the reports and the answers as JSON text (ADR-0166)."""
        return _JSON_ENCODE(await self.report_many(name, _JSON_DECODE(reports))).decode()

    async def _submit(
        self, name: str, items: list[tuple[str, int, Mapping[str, Any]]]
    ) -> list[asyncio.Future[ReportAnswer]]:
        engine = self._open(name)
        loop = asyncio.get_running_loop()
        waiters: list[asyncio.Future[ReportAnswer]] = [loop.create_future() for _ in items]
        lead = not self._reports  # the first report of a group applies it
        for (job_id, attempt, outcome), waiter in zip(items, waiters, strict=True):
            self._reports.append((job_id, int(attempt), _outcome(outcome), waiter))
        if lead:
            try:
                await asyncio.sleep(0)  # reports already on their way join the group
            finally:  # even when this call is cancelled, the group is applied: the others wait for it
                group, self._reports = self._reports, []
                self._apply_reports(engine, group)
            try:
                await self._arm()
            finally:
                for waiter in waiters:
                    if waiter.done() and not waiter.cancelled():
                        waiter.exception()  # retrieved: if arming fails, that is what this call raises
        return waiters

    def _apply_reports(self, engine: JobShardEngine, group: list[_PendingReport]) -> None:
        results: list[ReportAnswer | BaseException] = []

        def apply_all() -> None:
            results.extend(
                engine.report_many([(job_id, attempt, outcome) for job_id, attempt, outcome, _ in group])
            )

        try:
            engine.report_batch(apply_all)
        except Exception as exc:  # the group did not commit: every report fails as it would alone
            results = [exc] * len(group)
        for (*_, waiter), result in zip(group, results, strict=True):
            if isinstance(result, BaseException):
                waiter.set_exception(result)
            else:
                waiter.set_result(result)

    async def heartbeat(self, name: str, job_id: str, attempt: int, progress: Any) -> dict[str, Any]:
        """Extend the live attempt; answers ``accepted`` and ``cancel_requested``."""
        value = progress if isinstance(progress, int | float) and not isinstance(progress, bool) else None
        answer = await self._command(name, lambda e: e.heartbeat(job_id, int(attempt), value))
        return {"accepted": answer.accepted, "cancel_requested": answer.cancel_requested}

    async def step(self, name: str, job_id: str, attempt: int, command: str) -> str:
        """A step command of the live attempt (`tsumugi_core.steps.StepCommand` as JSON text); answers
        `StepAnswer` as JSON text (ADR-0144). A command that does not decode or breaks a rule raises."""
        decoded = _STEP_COMMAND.decode(command)
        answer = await self._command(name, lambda e: e.step(job_id, int(attempt), decoded))
        return msgspec.json.encode(answer).decode()

    async def deliver_events(self, name: str, deliveries: Any) -> list[bool]:
        """Store events for waiting jobs (``{"jobId", "step", "event"}`` each, event as JSON text); one answer
        each: whether it reached a wait that was still open (ADR-0146)."""
        items = [(str(d["jobId"]), str(d["step"]), str(d["event"])) for d in deliveries]
        return await self._command(name, lambda e: e.deliver_events(items))

    # -- an event box (ADR-0146): an object of this namespace named event:<digest>, never a shard ------------

    def _box(self, box: str) -> EventBoxHost:
        if self._event_box is None:
            if not is_box_name(box):
                raise InvalidFieldError("box", f"must be an event box name (event:...), got {box!r}")
            self.remember(box)
            self._event_box = EventBoxHost(self._storage, self._sql, self._env, time_source(), entropy()[0])
        return self._event_box

    async def event_send(
        self, box: str, name: str, key: str, payload: str, event_id: str | None
    ) -> dict[str, Any]:
        """Keep an event in this box and deliver it to the jobs waiting for it."""
        return await self._box(box).send(name, key, payload, event_id)

    async def event_wait(
        self, box: str, name: str, key: str, job_id: str, step: str, shard: str, until: int, seen: Any = None
    ) -> str | None:
        """A kept event for a job that starts waiting (JSON text), or None once it waits in this box."""
        listed = [str(item) for item in cast("list[object]", seen or [])]
        return await self._box(box).wait(name, key, job_id, step, shard, int(until), listed)

    async def cancel(self, name: str, job_id: str) -> dict[str, Any]:
        """Cancel, or ask a dispatched job to stop (A6)."""
        answer = await self._command(name, lambda e: e.cancel(job_id))
        if answer.ok:
            return {"ok": True, "requested": answer.requested}
        return {"ok": False, "reason": answer.reason}

    async def retry(self, name: str, job_id: str) -> dict[str, Any]:
        """FAILED / STALLED -> SCHEDULED now."""
        answer = await self._command(name, lambda e: e.retry(job_id))
        if answer.ok:
            return {"ok": True}
        refused: dict[str, Any] = {"ok": False, "reason": answer.reason}
        if answer.error is not None:
            refused["error"] = answer.error
        return refused

    async def reschedule(self, name: str, job_id: str, run_at: int, priority: int | None) -> dict[str, Any]:
        """Move a SCHEDULED job's run_after (and priority)."""
        answer = await self._command(name, lambda e: e.reschedule(job_id, run_at, priority))
        return {"ok": True} if answer.ok else {"ok": False, "reason": answer.reason}

    async def now(self, name: str) -> int:
        """The shard's current instant (for relative reschedules)."""
        self._open(name)
        return time_source().now_ms()

    async def get(self, name: str, job_id: str) -> dict[str, Any] | None:
        """The job's detail (docs/design/scheduler-rpc.md §4.2), or None when the shard does not hold it."""
        engine = self._open(name)
        job = engine.get(job_id)
        if job is None:
            return None
        detail = detail_from_shard(
            job,
            engine.attempts_of(job_id),
            now=time_source().now_ms(),
            failed_retention_ms=engine.settings.retention.failed_retention_ms,
        )
        detail["steps"] = step_details(engine.steps_of(job_id))
        return detail

    async def states_of(self, name: str, job_ids: list[str]) -> list[str | None]:
        """Each job's state, None for a job the shard does not hold (the Scheduler's overlap check)."""
        engine = self._open(name)
        return [None if (job := engine.get(job_id)) is None else job.state.value for job_id in job_ids]

    # -- the alarm ------------------------------------------------------------------------------------------

    async def alarm(self) -> None:
        """Tick, send, project, notify; then arm the next alarm (or retry in 5 s after a failure).

        An event box retries its deliveries and drops what expired instead (ADR-0146).
        """
        if self.is_event_box():
            await self._box(str(self._stored_name())).alarm()
            return
        engine = self.engine()
        if engine is None:
            await self._storage.deleteAlarm()
            return
        try:
            # The feed is read before the tick and projected after it: the tick's own changes (dispatches)
            # wait for the next alarm, by which time most short jobs have finished and are projected once
            # (engine.PROJECTION_HOLD_MS), and the dispatches go out before D1 is awaited, so the consumer
            # works while D1 does.
            head = engine.feed_head()
            first = engine.changes(FEED_BATCH)
            _log_changes(first)  # before the dispatch lines, in the order the changes happened
            result = engine.tick()
            if _job_log.isEnabledFor(logging.INFO):  # dispatches are logged now, not when projected
                for message in result.dispatches:
                    _job_log.info("job %s QUEUED attempt %d", message.job_id, message.attempt)
            await self._send(result.dispatches)
            await self._project(engine, _not_dispatched(first, result.dispatches), head)
            await self._notify(engine)
            await self._notify_runs(engine)
        except Exception:
            _log.exception("tick of shard %s failed; retrying in %d ms", self._name, ALARM_RETRY_MS)
            await self._storage.setAlarm(time_source().now_ms() + ALARM_RETRY_MS)
            return
        await self._arm()  # getAlarm answers None during alarm() unless an interleaved call armed one

    async def _send(self, dispatches: list[DispatchMessage]) -> None:
        # Each DispatchMessage already carries what the consumer decodes (QueuedDispatch), max_attempts
        # included; it crosses as its JSON text (ADR-0166), one C call each, and the consumer decodes it with
        # one: no JS object is built on the way. A failed send leaves the jobs QUEUED (the reaper requeues or
        # stalls them), except a message that can never be sent: its job alone fails (ADR-0077).
        queue = _runtime.JsonCalls(self._env.TSUMUGI_QUEUE, nulls=False)  # texts and "text": no None
        encode = _DISPATCH_JSON.encode
        await send_dispatches(queue, send_chunks([encode(d) for d in dispatches]), self._fail_unsendable)

    async def _fail_unsendable(self, job_id: str, attempt: int, error: str) -> None:
        assert self._name is not None  # set before any tick
        await self.report(self._name, job_id, attempt, {"ok": False, "error": error, "retryable": False})

    async def _project(self, engine: JobShardEngine, snapshots: list[JobSnapshot], up_to_seq: int) -> None:
        # The first batch may have lost the jobs the tick dispatched (`_not_dispatched`): their rows moved past
        # ``up_to_seq`` and go out with the next alarm, so the rounds here stop before them either way.
        points_left = POINTS_PER_ALARM
        for _ in range(FEED_ROUNDS):
            if not snapshots:
                return
            taken, terminal = within_points(snapshots, points_left)
            if not taken:
                return  # the next change needs a point this alarm has no room for: the next alarm goes on
            await project(self._env.TSUMUGI_DB, taken)
            engine.ack_changes(max(s.job.seq for s in taken))
            self._write_metrics(terminal)
            points_left -= len(terminal)
            if len(taken) < len(snapshots):
                return  # the rest is still in the feed: the next alarm (armed at once) projects it
            if len(snapshots) < FEED_BATCH:
                return
            snapshots = engine.changes(FEED_BATCH, up_to_seq)
            _log_changes(snapshots)

    def _write_metrics(self, snapshots: list[JobSnapshot]) -> None:
        binding = getattr(self._env, "TSUMUGI_METRICS", None)
        if binding is None:
            return
        if not snapshots:
            return
        # Plain data points without None (ADR-0129); the method is looked up once for the whole batch.
        write = _runtime.JsonCalls(binding, nulls=False).writeDataPoint
        for snapshot in snapshots:
            try:
                write(metrics_point(snapshot))
            except Exception:
                # Metrics must never hold coordination back.
                _log.warning("metrics point for %s failed", snapshot.job.id, exc_info=True)

    async def _notify(self, engine: JobShardEngine) -> None:
        for _ in range(FEED_ROUNDS):
            records = engine.notices(FEED_BATCH)
            if not records:
                return
            by_target: dict[str, list[dict[str, Any]]] = {}
            for record in records:
                target_shard, item = self._notice_item(engine, record)
                by_target.setdefault(target_shard, []).append(item)
            for target_shard, items in by_target.items():
                await self._enqueue_on(target_shard, items)
            engine.ack_notices(max(r.seq for r in records))
            if len(records) < FEED_BATCH:
                return

    async def _notify_runs(self, engine: JobShardEngine) -> None:
        """Deliver job -> run events, grouped by run, acked only once all are delivered.

        Source: docs/reference/original.md §1.9.

        Without a ``RUN`` binding they stay in the outbox, to flow once it is configured.
        """
        runs = getattr(self._env, "RUN", None)
        if runs is None:
            return
        for _ in range(FEED_ROUNDS):
            records = engine.run_events(FEED_BATCH)
            if not records:
                return
            by_run: dict[str, list[dict[str, Any]]] = {}
            for r in records:
                event: dict[str, Any] = {
                    "nodeId": r.node_id,
                    "jobId": r.job_id,
                    "state": r.state.value,
                    "result": r.result,
                    "error": r.error,
                }
                if r.spawns:
                    event["spawns"] = r.spawns
                if r.hold_until is not None:
                    event["holdUntil"] = r.hold_until
                by_run.setdefault(r.run_id, []).append(event)
            # One JSON text per run: a string crosses RPC as it is, where a list of dicts is converted value by
            # value on both sides (ADR-0133).
            texts = {run_id: msgspec.json.encode(events).decode() for run_id, events in by_run.items()}
            await asyncio.gather(*(runs.getByName(run_id).notify(text) for run_id, text in texts.items()))
            engine.ack_run_events(max(r.seq for r in records))
            if len(records) < FEED_BATCH:
                return

    def _notice_item(self, engine: JobShardEngine, record: NoticeRecord) -> tuple[str, dict[str, Any]]:
        target = record.target
        shards = self._definition.shards_of(target)
        shard = resolve_shard(target, shards, record.notice.job_id) if shards > 1 else 0
        kind = "failure" if type(record.notice).__name__ == "FailureNotice" else "settled"
        # Derived from the notice's feed position: a re-send after a crash re-enqueues the same id (ADR-0177).
        local_id = engine.notice_local_id(kind, record.seq)
        # asdict drops the union's tag ("type"): the payload is exactly A2's / A3's fields.
        payload = msgspec.to_builtins(msgspec.structs.asdict(record.notice))
        item = {"binding": target, "payload": payload, "id": format_job_id(target, shard, local_id)}
        return shard_name(target, shard), item

    async def _enqueue_on(self, target_shard: str, items: list[dict[str, Any]]) -> None:
        binding = target_shard.rpartition("#")[0]
        settings = self._definition.settings_of(binding)
        wire_settings = None if settings is None else msgspec.to_builtins(settings)
        stub = self._env.JOB_SHARD.getByName(target_shard)
        await stub.enqueue_many(target_shard, items, wire_settings)


def _not_dispatched(snapshots: list[JobSnapshot], dispatches: list[DispatchMessage]) -> list[JobSnapshot]:
    """The snapshots read before the tick, less those of jobs the tick dispatched (ADR-0132).

    Such a snapshot (mostly the SCHEDULED one of a job enqueued just before) is already stale: the job's row
    moved on with a later seq, held like every change of a tick (`PROJECTION_HOLD_MS`), and is projected by a
    later alarm in whatever state it has reached by then, for a short job COMPLETED. Writing it to D1 would
    cost one upsert (a query and a row plus its index entries) that the next one overwrites.
    """
    if not dispatches:
        return snapshots
    moved = {message.job_id for message in dispatches}
    return [snapshot for snapshot in snapshots if snapshot.job.id not in moved]
