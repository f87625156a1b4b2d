"""Values the engine takes and answers: outcomes, answers, dispatch messages, feed records, notices."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from tsumugi_core.states import JobState
from tsumugi_core.throttle import Blocked
from tsumugi_scheduler.shard.schema import AttemptRow, JobRow

__all__ = [
    "AttemptRecord",
    "BulkAnswer",
    "BulkFailure",
    "CancelAnswer",
    "DispatchMessage",
    "EnqueueResult",
    "Failed",
    "FailureNotice",
    "HeartbeatAnswer",
    "JobRecord",
    "JobSnapshot",
    "MutationAnswer",
    "NoticeConfig",
    "NoticeRecord",
    "Outcome",
    "RefusalReason",
    "ReportAnswer",
    "RunEventRecord",
    "SettledNotice",
    "ShardDiagnostics",
    "Succeeded",
    "Suspended",
    "TickResult",
]

JobRecord = JobRow
"""A job as stored (the read answer of ``get`` and the body of a snapshot)."""
AttemptRecord = AttemptRow
"""A recorded attempt."""

RefusalReason = Literal["invalid-state", "gone"]


class Succeeded(msgspec.Struct, frozen=True, kw_only=True, tag="succeeded"):
    """The performer returned ``result``."""

    result: Any = None
    spawns: list[Any] | None = None
    """Children the performer spawned (``ctx.spawn``), told to the job's run with its COMPLETED event."""


class Failed(msgspec.Struct, frozen=True, kw_only=True, tag="failed"):
    """The attempt failed with ``error``; ``retryable=False`` ends the job, ``retry_at`` picks the next try."""

    error: str
    retryable: bool = True
    retry_at: int | None = None
    unknown: bool = False
    """The consumer gave up waiting (timeout) or lost the call: the performer may still run (ADR-0051)."""


class Suspended(msgspec.Struct, frozen=True, kw_only=True, tag="suspended"):
    """The performer slept or continues elsewhere: resume at ``until`` without using an attempt (ADR-0145)."""

    until: int
    reason: str = "sleep"
    step: str | None = None
    """The sleep or event-wait step that suspended the job."""


Outcome = Succeeded | Failed | Suspended


class EnqueueResult(msgspec.Struct, frozen=True, kw_only=True):
    """The id an enqueue item got; ``created=False`` when it named an existing job or a live unique_key."""

    id: str
    created: bool


class DispatchMessage(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The queue message body of one dispatched attempt."""

    job_id: str
    binding: str
    attempt: int
    max_attempts: int
    """The job's attempt limit (``maxAttempts`` on the wire), for the performer's JobContext."""
    payload: Any
    timeout_ms: int
    claim_required: bool
    deadline_at: int
    """When the shard stops waiting for this attempt unless a heartbeat extends it."""
    traceparent: str | None = None


class TickResult(msgspec.Struct, frozen=True, kw_only=True):
    """Messages to send once the tick's transaction committed, and when to tick next."""

    dispatches: list[DispatchMessage]
    wake_at: int | None


class ReportAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """Whether the report counted (it names the live attempt) and the job's state after it."""

    accepted: bool
    state: JobState | None


class HeartbeatAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """Whether the heartbeat counted, and whether the job was asked to stop."""

    accepted: bool
    cancel_requested: bool


class CancelAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """``requested`` when a dispatched job was asked to stop rather than cancelled at once."""

    ok: bool
    requested: bool = False
    reason: RefusalReason | None = None


class MutationAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """Result of retry / reschedule (409 = ``invalid-state``, 410 = ``gone``)."""

    ok: bool
    reason: RefusalReason | None = None
    error: str | None = None
    """Why, when the state alone does not say it (a flow node's job is retried by resuming its run)."""


class BulkFailure(msgspec.Struct, frozen=True, kw_only=True):
    """One refused id of a bulk mutation."""

    id: str
    reason: RefusalReason


class BulkAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """Ids that changed, and the refusals."""

    ok: list[str]
    failed: list[BulkFailure]


class JobSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    """The latest state of a changed job with its newest attempts (up to 20, newest first)."""

    job: JobRecord
    attempts: list[AttemptRecord]


class NoticeConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Which notices a shard writes; jobs of the notice bindings themselves are never notified."""

    on_failure: str | None = None
    on_settled_binding: str | None = None
    on_settled_states: frozenset[JobState] = frozenset()


class FailureNotice(msgspec.Struct, frozen=True, kw_only=True, tag="failure"):
    """Payload of an on_failure notice job (docs/reference/additions.md A2)."""

    job_id: str
    binding: str
    state: JobState
    attempts: int
    max_attempts: int
    error: str | None
    run_id: str | None
    node_id: str | None
    failed_at: int


class SettledNotice(msgspec.Struct, frozen=True, kw_only=True, tag="settled"):
    """Payload of an on_settled notice job (docs/reference/additions.md A3)."""

    job_id: str
    binding: str
    state: JobState
    attempts: int
    max_attempts: int
    error: str | None
    result: Any
    run_id: str | None
    node_id: str | None
    settled_at: int


class NoticeRecord(msgspec.Struct, frozen=True, kw_only=True):
    """An outbox notice: enqueue ``notice`` as the payload of a job on ``target``."""

    seq: int
    target: str
    notice: FailureNotice | SettledNotice


class RunEventRecord(msgspec.Struct, frozen=True, kw_only=True):
    """An outbox event telling run ``run_id`` that node ``node_id``'s job reached a terminal state."""

    seq: int
    run_id: str
    node_id: str
    job_id: str
    state: JobState
    result: str | None
    """The stored result as JSON text, or None."""
    error: str | None
    spawns: list[Any] | None = None
    """Children spawned by the completing attempt."""
    hold_until: int | None = None
    """A STALLED at-most-once job's hold: its last attempt may run until then (ADR-0051)."""


class ShardDiagnostics(msgspec.Struct, frozen=True, kw_only=True):
    """What the shard holds and what held dispatch back in the last tick."""

    counts: dict[str, int]
    changes_pending: int
    notices_pending: int
    run_events_pending: int
    blocked: Blocked
