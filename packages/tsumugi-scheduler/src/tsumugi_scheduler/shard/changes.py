"""Building the row changes of state transitions, with their attempt, notice and run-event rows.

Every transition goes through ``transition``: it checks the move against the core table, clears the
previous attempt's heartbeat and progress, and, for terminal states, adds the notices and the run event
that must commit in the same transaction.
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec

from tsumugi_core.liveness import running_until
from tsumugi_core.options import Guarantee
from tsumugi_core.states import TERMINAL_STATES, JobState, assert_transition
from tsumugi_scheduler.shard.port import CompletedJob, JobChange
from tsumugi_scheduler.shard.records import FailureNotice, NoticeConfig, SettledNotice
from tsumugi_scheduler.shard.schema import AttemptRow, JobRow

__all__ = ["JobFacts", "NoticeWriter", "completion", "key_hold", "run_event", "transition"]

_encode = msgspec.json.encode
_FAILED = frozenset({JobState.FAILED, JobState.STALLED})
_MAY_STILL_RUN = frozenset({JobState.STALLED, JobState.CANCELLED})
"""Terminal states an at-most-once job may reach while its claimed attempt still runs (its outcome unknown, or a
cancel request it has not heeded): the run's next job for its node waits for the hold (ADR-0116)."""


class JobFacts(Protocol):
    """What notices and run events tell about a job; a JobRow has it all, so has a CompletedJob."""

    @property
    def id(self) -> str: ...
    @property
    def binding(self) -> str: ...
    @property
    def max_attempts(self) -> int: ...
    @property
    def run_id(self) -> str | None: ...
    @property
    def node_id(self) -> str | None: ...


class NoticeWriter:
    """Decides which notices a terminal transition writes, per the shard's NoticeConfig."""

    def __init__(self, config: NoticeConfig, binding: str) -> None:
        """Apply the seed's exclusions (execution-control, 실패 알림 / 종료 알림) for jobs of ``binding``.

        on_failure hears about every binding's failures except its own; on_settled hears about neither its
        own jobs nor the on_failure binding's. So a failed on_settled job does reach on_failure, and no
        notice binding is ever told about itself (no notice loops).
        """
        self._on_failure = None if binding == config.on_failure else config.on_failure
        quiet = binding in (config.on_failure, config.on_settled_binding)
        self._on_settled = None if quiet else config.on_settled_binding
        self._settled_states = config.on_settled_states

    def rows(
        self, job: JobFacts, state: JobState, attempts: int, error: str | None, result: str | None, now: int
    ) -> list[tuple[str, str]]:
        """Notice outbox rows for ``job`` reaching terminal ``state``."""
        rows: list[tuple[str, str]] = []
        if self._on_failure is not None and state in _FAILED:
            notice = FailureNotice(
                job_id=job.id,
                binding=job.binding,
                state=state,
                attempts=attempts,
                max_attempts=job.max_attempts,
                error=error,
                run_id=job.run_id,
                node_id=job.node_id,
                failed_at=now,
            )
            rows.append((self._on_failure, _encode(notice).decode()))
        if self._on_settled is not None and state in self._settled_states:
            notice = SettledNotice(
                job_id=job.id,
                binding=job.binding,
                state=state,
                attempts=attempts,
                max_attempts=job.max_attempts,
                error=error if state in _FAILED else None,
                result=msgspec.json.decode(result)
                if result is not None and state == JobState.COMPLETED
                else None,
                run_id=job.run_id,
                node_id=job.node_id,
                settled_at=now,
            )
            rows.append((self._on_settled, _encode(notice).decode()))
        return rows


def transition(
    job: JobRow,
    to: JobState,
    now: int,
    notices: NoticeWriter,
    values: dict[str, Any] | None = None,
    attempt: AttemptRow | None = None,
) -> JobChange:
    """The change moving ``job`` to ``to`` at ``now`` with extra column ``values``.

    Raises:
        InvalidTransitionError: the move is not legal.
    """
    assert_transition(job.state, to)
    row: dict[str, Any] = {"state": to.value, "updated_at": now, "heartbeat_at": None, "progress": None}
    if values:
        row.update(values)
    if to not in TERMINAL_STATES:
        return JobChange(job_id=job.id, expect_state=job.state, values=row, attempt=attempt)
    attempts = int(row.get("attempts", job.attempts))
    error = row.get("error", job.error) if to in _FAILED else None
    result = row.get("result", job.result) if to == JobState.COMPLETED else None
    hold = None
    if to in _MAY_STILL_RUN and job.guarantee == Guarantee.AT_MOST_ONCE and job.dispatched_at is not None:
        hold = int(row.get("run_after", job.run_after))  # its last attempt may run until then (ADR-0051)
    return JobChange(
        job_id=job.id,
        expect_state=job.state,
        values=row,
        attempt=attempt,
        notices=notices.rows(job, to, attempts, error, result, now),
        run_event=run_event(job, to, result, error, hold_until=hold),
    )


def key_hold(job: JobRow, now: int, *, abandoned: bool) -> tuple[int, int] | None:
    """``(attempt, until)`` when in-flight ``job`` has a concurrency_key and its live attempt may still run.

    The shard stops waiting for that attempt now; the key keeps the attempt's slot until ``until`` (ADR-0185).
    ``abandoned``: the consumer reports that it stopped waiting for the performer (an outcome flagged unknown);
    False when the reaper gives the attempt up. A claimed at-most-once attempt runs until its claim's hard end
    (``run_after`` since the claim, ADR-0051); any other until the hard end after its last sign of life.
    """
    if job.concurrency_key is None:
        return None
    claimed = job.guarantee == Guarantee.AT_MOST_ONCE and job.state == JobState.RUNNING
    until = running_until(
        claim_hard_end=job.run_after if claimed else None,
        last_sign_at=job.heartbeat_at,
        now=now,
        abandoned=abandoned,
    )
    return None if until is None or until <= now else (job.attempts + 1, until)


def run_event(
    job: JobFacts,
    to: JobState,
    result: str | None,
    error: str | None,
    spawns: list[Any] | None = None,
    hold_until: int | None = None,
) -> tuple[str, str] | None:
    """The ``(run_id, event JSON)`` outbox row of a job of a flow run reaching terminal ``to``, else None.

    A COMPLETED event carries the children the attempt spawned (a failed attempt's spawns never get here); a
    STALLED or CANCELLED at-most-once one that was dispatched carries ``holdUntil``, when its last attempt can no
    longer run: the run starts the node's next job no earlier, as a manual retry would (ADR-0116).
    """
    if job.run_id is None or job.node_id is None:
        return None
    event: dict[str, Any] = {
        "nodeId": job.node_id,
        "jobId": job.id,
        "state": to.value,
        "result": result,
        "error": error,
    }
    if spawns:
        event["spawns"] = spawns
    if hold_until is not None:
        event["holdUntil"] = hold_until
    return (job.run_id, _encode(event).decode())


def completion(
    job: CompletedJob, now: int, notices: NoticeWriter, spawns: list[Any] | None = None
) -> JobChange:
    """The bookkeeping rows of a success already applied by ``ShardStore.complete`` (values stay empty).

    The same rows ``transition`` adds for COMPLETED: the attempt log (later attempts only: a first-try
    success is derivable from the row), notices and the run event.
    """
    log = None
    if job.attempts > 1:
        log = AttemptRow(
            job_id=job.id,
            attempt=job.attempts,
            state=JobState.COMPLETED,
            started_at=job.dispatched_at,
            finished_at=now,
            error=None,
        )
    return JobChange(
        job_id=job.id,
        expect_state=JobState.COMPLETED,
        values={},
        attempt=log,
        notices=notices.rows(job, JobState.COMPLETED, job.attempts, None, job.result, now),
        run_event=run_event(job, JobState.COMPLETED, job.result, None, spawns),
    )
