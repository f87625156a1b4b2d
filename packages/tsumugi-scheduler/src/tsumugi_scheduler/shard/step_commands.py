"""The step side of ``JobShardEngine``: step commands of the live attempt, suspensions, and waking sleepers.

A mixin like ``ShardOperations`` (the engine's constructor sets the shared attributes). Rules:

- ADR-0144: a step command counts only for the live attempt (``attempts + 1`` of a QUEUED/RUNNING job), like
  a heartbeat or a report; a saved step is a sign of life (it moves the silence deadline as a heartbeat does);
  the first save of a name wins and every later attempt is answered the stored result.
- ADR-0145: a suspension ends the invocation without using an attempt: ``attempts`` and ``max_attempts`` both
  grow by one, so the invocation number stays the fence for late reports while the attempts left stay the
  same; the job sleeps (SLEEPING, ``run_after`` = its wake time) or, when the time has come already, goes
  straight back to SCHEDULED.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import msgspec

from tsumugi_core.clock import Clock
from tsumugi_core.exceptions import TsumugiError
from tsumugi_core.options import MAX_SAFE_INTEGER, Guarantee
from tsumugi_core.states import ACTIVE_STATES, JobState
from tsumugi_core.steps import MAX_STEP_RESULT_BYTES, MAX_STEPS_PER_JOB, StepAnswer, StepCommand, StepView
from tsumugi_scheduler.shard.changes import NoticeWriter, transition
from tsumugi_scheduler.shard.port import JobChange
from tsumugi_scheduler.shard.records import Suspended
from tsumugi_scheduler.shard.schema import JobRow, StepRow
from tsumugi_scheduler.shard.sql_store import SqlShardStore
from tsumugi_scheduler.shard.step_store import StepStore

__all__ = ["MAX_WAKES_PER_TICK", "StepCommands", "StepLimitError", "suspend_change"]

MAX_WAKES_PER_TICK: Final = 200
_INFLIGHT: Final = (JobState.QUEUED, JobState.RUNNING)


class StepLimitError(TsumugiError, ValueError):
    """A step command breaks a rule (too many steps, a missing name); the message names it."""


_TIMED_OUT: Final = '{"timeout":true}'
"""The result a wait step gets when its timeout comes before its event (ADR-0146)."""


def _view(row: StepRow) -> StepView:
    state = row.state if row.state in ("done", "waiting") else "started"
    return StepView(name=row.name, state=state, result=row.result)


def suspend_change(job: JobRow, suspended: Suspended, now: int, notices: NoticeWriter) -> JobChange:
    """The change a live attempt's suspension makes (ADR-0145)."""
    if job.cancel_requested_at is not None:
        # Asked to stop, and it stopped: nothing runs now, so the cancel is confirmed.
        return transition(
            job,
            JobState.CANCELLED,
            now,
            notices,
            {
                "attempts": job.attempts + 1,
                "silence_at": None,
                "reason": "cancelled: the job was asked to stop and then slept",
            },
        )
    until = min(MAX_SAFE_INTEGER, max(now, int(suspended.until)))
    values: dict[str, Any] = {
        "attempts": job.attempts + 1,
        "max_attempts": min(MAX_SAFE_INTEGER, job.max_attempts + 1),
        "silence_at": None,
        "dispatched_at": None,
        "run_after": until,
        "eligible_at": max(job.created_at, until),
        "reason": None,
    }
    if until <= now:  # a continuation (ADR-0147), or a sleep already over: due at once
        return transition(job, JobState.SCHEDULED, now, notices, values)
    return transition(job, JobState.SLEEPING, now, notices, values)


def wake_change(job: JobRow, now: int, notices: NoticeWriter) -> JobChange:
    """SLEEPING -> SCHEDULED at its wake time; it is ready from then (aging counts from its wake)."""
    values = {"reason": None, "run_after": job.run_after, "eligible_at": max(job.created_at, job.run_after)}
    return transition(job, JobState.SCHEDULED, now, notices, values)


class StepCommands:
    """The engine's step commands; ``_store``, ``_steps``, ``_clock`` and ``_notices`` come from the engine."""

    _store: SqlShardStore
    _steps: StepStore
    _clock: Clock
    _notices: NoticeWriter

    def _step_live(self, job_id: str, attempt: int) -> JobRow | None:
        job = self._store.job(job_id)
        if job is None or job.state not in _INFLIGHT or attempt != job.attempts + 1:
            return None
        return job

    def step(self, job_id: str, attempt: int, command: StepCommand) -> StepAnswer:
        """Answer a step command of the live attempt; any other attempt is refused without a write.

        Raises:
            StepLimitError: ``begin``/``save`` without a name, ``save`` without a result, or a job past
                `MAX_STEPS_PER_JOB`; nothing is stored.
        """
        if command.op != "load" and not command.name:
            raise StepLimitError(f"name is required for {command.op}")
        if command.op == "save" and command.result is None:
            raise StepLimitError("result is required for save (JSON text)")
        if command.op == "save" and len(str(command.result).encode()) > MAX_STEP_RESULT_BYTES:
            raise StepLimitError(f"result must be at most {MAX_STEP_RESULT_BYTES} bytes as JSON")
        if command.op == "wait" and (command.event is None or command.key is None or command.until is None):
            raise StepLimitError("event, key and until are required for wait")

        def run() -> StepAnswer:
            job = self._step_live(job_id, attempt)
            if job is None:
                return StepAnswer(op=command.op, accepted=False)
            cancel = job.cancel_requested_at is not None
            if command.op == "load":
                return StepAnswer(
                    op=command.op,
                    accepted=True,
                    cancel_requested=cancel,
                    steps=[_view(r) for r in self._steps.steps(job_id)],
                )
            name = str(command.name)
            stored = self._steps.step(job_id, name)
            if stored is None and self._steps.count(job_id) >= MAX_STEPS_PER_JOB:
                raise StepLimitError(
                    f"a job stores at most {MAX_STEPS_PER_JOB} steps; {name} would be one more"
                )
            now = self._clock.now_ms()
            if command.op == "begin":
                row = stored or self._steps.begin(job_id, name, attempt, now)
                return StepAnswer(op=command.op, accepted=True, cancel_requested=cancel, steps=[_view(row)])
            if command.op == "wait":
                waiting = msgspec.json.encode(
                    {"event": command.event, "key": command.key, "until": command.until}
                )
                if stored is not None and stored.state == "waiting" and command.result is not None:
                    # A kept event the box answered this replayed wait with: the wait left open by an earlier
                    # attempt (its report lost) takes it now, or nobody would (the box registered no waiter).
                    self._steps.deliver(job_id, name, attempt, now, command.result)
                    stored = self._steps.step(job_id, name)
                row = stored or self._steps.wait(job_id, name, attempt, now, waiting.decode(), command.result)
                return StepAnswer(op=command.op, accepted=True, cancel_requested=cancel, steps=[_view(row)])
            row = self._steps.save(job_id, name, attempt, now, str(command.result))
            self._sign_of_life(job, now)
            return StepAnswer(op=command.op, accepted=True, cancel_requested=cancel, steps=[_view(row)])

        return self._store.atomically(run)

    def _sign_of_life(self, job: JobRow, now: int) -> None:
        silence = now + job.timeout_ms
        if job.cancel_requested_at is not None:
            silence = min(silence, job.cancel_requested_at)  # a step never postpones a cancel
        values: dict[str, Any] = {"heartbeat_at": now, "silence_at": silence}
        self._store.write(JobChange(job_id=job.id, expect_state=job.state, values=values))

    def _take_steps(self, job_id: str, from_job_id: str) -> int:
        """Give the job ``job_id``, being stored in this transaction, the steps ``from_job_id`` began or finished.

        A resumed run node's new job (ADR-0176): as under a retry of the old job, a step that began is never run
        again (StepOutcomeUnknownError) and a finished one answers its stored result. Only an at-most-once
        ``from_job_id`` of this shard passes its steps on; its waits stay its own. Called by the enqueue that
        creates ``job_id``, inside its transaction, so the steps exist exactly when the job does (ADR-0184).
        Answers how many steps ``job_id`` holds.
        """
        old = self._store.job(from_job_id)
        if old is None or old.guarantee != Guarantee.AT_MOST_ONCE:
            return 0
        return self._steps.inherit(job_id, from_job_id)

    def steps_of(self, job_id: str) -> list[StepRow]:
        """The stored steps of a job (for its detail), in the order they started."""
        return self._steps.steps(job_id)

    def _wake_sleepers(self, now: int) -> int:
        """Move up to `MAX_WAKES_PER_TICK` due sleepers to SCHEDULED (inside the tick's transaction).

        A job waiting for an event whose timeout came first has its wait step ended as timed out, so an event
        arriving later finds it done and changes nothing (ADR-0146).
        """
        woken = 0
        for job in self._steps.due_sleepers(now, MAX_WAKES_PER_TICK):
            self._steps.time_out_waits(job.id, now, _TIMED_OUT)
            woken += self._store.write(wake_change(job, now, self._notices))
        return woken

    def _suspension(self, job_id: str, outcome: Suspended, now: int) -> Suspended:
        # An event that reached the wait step before the suspension was reported: due at once (ADR-0146).
        if outcome.reason == "event" and outcome.step is not None:
            row = self._steps.step(job_id, outcome.step)
            if row is not None and row.state == "done":
                return Suspended(until=now, reason="event", step=outcome.step)
            if row is not None and row.state == "waiting" and outcome.until <= now:
                self._steps.time_out_waits(job_id, now, _TIMED_OUT)  # its timeout passed while it ran
                return Suspended(until=now, reason="event", step=outcome.step)
        return outcome

    def deliver_events(self, deliveries: Sequence[tuple[str, str, str]]) -> list[bool]:
        """Store each ``(job_id, wait step, event JSON)`` as the wait step's result and wake a sleeping job.

        One transaction; a job that is gone or finished, or whose wait is already done (timed out, or
        delivered before), changes nothing and answers False. Each event reaches each wait at most once.
        """

        def run() -> list[bool]:
            now = self._clock.now_ms()
            answers: list[bool] = []
            for job_id, name, event in deliveries:
                job = self._store.job(job_id)
                if job is None or job.state not in ACTIVE_STATES:
                    answers.append(False)
                    continue
                stored = self._steps.deliver(job_id, name, job.attempts + 1, now, event)
                if stored and job.state == JobState.SLEEPING:
                    self._store.write(
                        wake_change(msgspec.structs.replace(job, run_after=now), now, self._notices)
                    )
                answers.append(stored)
            return answers

        return self._store.atomically(run)
