"""The JSON shapes the API answers, as msgspec Structs: the OpenAPI document's response schemas.

Handlers build plain values; these Structs describe them, and the schemathesis run in ``tests/api`` checks
every answer against the document, so a handler and its Struct cannot drift apart unnoticed. Views that the
read model already defines (`JobStats`, `JobSummary`), the explain answer and the metrics report are reused;
the list answer is `tsumugi_scheduler.api.job_list.JobListBody`.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from tsumugi_scheduler.explain import Explanation

__all__ = [
    "BindingDiagnostics",
    "BindingList",
    "BlockedFlags",
    "BulkRefusal",
    "BulkResult",
    "CancelOk",
    "Created",
    "CreatedMany",
    "Diagnostics",
    "ErrorBody",
    "ExplainBody",
    "JobDetailBody",
    "JobDetailView",
    "LogEntry",
    "MutationOk",
    "PolicyResult",
    "Refusal",
    "RunControlOk",
    "RunCreated",
    "SettingsView",
    "ShardDiagnosticsView",
    "ShardSettings",
]


class ErrorBody(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Any refusal: ``error`` always; ``field`` / ``rule`` for validation; ``pending`` for migrations."""

    error: str
    field: str | None = None
    rule: str | None = None
    pending: list[str] | None = None
    missing: list[dict[str, str]] | None = None
    reason: str | None = None
    """403: which role the operation needs and which the caller has, in words."""
    needs: str | None = None
    """403: the role the operation needs."""
    role: str | None = None
    """403: the caller's role (absent: none)."""


class Refusal(msgspec.Struct, frozen=True, kw_only=True):
    """409 / 410 of a mutation."""

    ok: bool
    reason: Literal["invalid-state", "gone"]
    error: str


class RunCreated(msgspec.Struct, frozen=True, kw_only=True):
    """201 of ``POST /api/runs``."""

    id: str


class RunControlOk(msgspec.Struct, frozen=True, kw_only=True):
    """200 of a run's retry / cancel."""

    ok: bool


class MutationOk(msgspec.Struct, frozen=True, kw_only=True):
    """200 of retry / reschedule."""

    ok: bool


class CancelOk(msgspec.Struct, frozen=True, kw_only=True):
    """200 of cancel: ``requested`` when a dispatched job was asked to stop."""

    ok: bool
    requested: bool
    cancelled: bool
    """+ True when the job is CANCELLED already (it was SCHEDULED): the opposite of ``requested``."""


class Created(msgspec.Struct, frozen=True, kw_only=True):
    """201 of ``POST /api/jobs``."""

    id: str


class CreatedMany(msgspec.Struct, frozen=True, kw_only=True):
    """201 of ``POST /api/jobs/bulk-enqueue``: ids in input order."""

    ids: list[str]


class LogEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One finished attempt, newest first in ``attempts_log``."""

    attempt: int
    state: str
    started_at: int | None
    finished_at: int
    error: str | None


class StepEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One stored step of a job (ADR-0144), in the order they started."""

    name: str
    state: Literal["done", "started", "waiting"]
    attempt: int
    started_at: int
    finished_at: int | None
    result: Any = None


class EventSent(msgspec.Struct, frozen=True, kw_only=True):
    """202 of ``POST /api/events`` (ADR-0146)."""

    id: str
    delivered: int
    """How many waiting jobs the event goes to."""
    kept_until: int
    """Until when jobs that start waiting later still get it."""
    duplicate: bool = False
    """The ``id`` was sent before: nothing happened again."""


class JobDetailView(msgspec.Struct, frozen=True, kw_only=True):
    """A job's detail (docs/design/scheduler-rpc.md §4.2): the original's keys plus ours."""

    id: str
    binding: str
    state: str
    priority: int
    attempts: int
    max_attempts: int
    concurrency_key: str | None
    unique_key: str | None
    guarantee: str
    created_at: int
    updated_at: int
    run_after: int | None
    dispatched_at: int | None
    progress: float | None
    payload: str
    result: str | None
    retryable: bool
    attempts_log: list[LogEntry]
    timeout_ms: int | None
    expires_at: int | None
    traceparent: str | None
    run_id: str | None
    node_id: str | None
    cancel_requested: bool
    current_attempt: int | None
    """+ The attempt in progress (``attempts + 1``) while QUEUED or RUNNING, else null (``attempts`` counts
    finished attempts only)."""
    steps: list[StepEntry] = []
    """The job's durable steps while its shard holds it (empty once swept or for a job without steps)."""


class ActionView(msgspec.Struct, frozen=True, kw_only=True):
    """One change made through the API (ADR-0151): when, by whom (an email or a token's name), with which role."""

    at: int
    by: str
    role: Literal["viewer", "operator", "admin"] | None
    action: str
    """The operation id: ``cancelJob``, ``retryJob``, ``rescheduleJob``, ``bulkCancelJobs``, ``setBindingPolicy``, ..."""
    target: str | None
    """The job id, or ``binding:<name>`` for a change of the job's binding's policy."""


class JobDetailBody(msgspec.Struct, frozen=True, kw_only=True):
    """200 of ``GET /api/jobs/{id}``."""

    job: JobDetailView
    actions: list[ActionView]
    """Who changed the job through the API, and its binding's policy, newest first (at most 20 of each)."""


class BulkRefusal(msgspec.Struct, frozen=True, kw_only=True):
    """One id a bulk action did not change."""

    id: str
    reason: Literal["invalid-state", "gone", "invalid-id"]


class BulkResult(msgspec.Struct, frozen=True, kw_only=True):
    """200 of bulk-retry / bulk-cancel; ``remaining`` estimates what a filter still matches."""

    ok: list[str]
    failed: list[BulkRefusal]
    remaining: int


class BindingList(msgspec.Struct, frozen=True, kw_only=True):
    """200 of ``GET /api/bindings``."""

    bindings: list[str]
    shards: dict[str, int]
    """+ How many shards each listed binding is split into, so an HTTP client can make job ids (ADR-0063)."""
    notices: list[str]
    """The bindings that receive failure and settled notices (``on_failure``, ``on_settled``), sorted."""


class RateView(msgspec.Struct, frozen=True, kw_only=True):
    """A token bucket: ``tokens`` per ``interval_ms``."""

    tokens: int
    interval_ms: int


class SettingsView(msgspec.Struct, frozen=True, kw_only=True):
    """A shard's effective settings: the pinned ones after a runtime change, else the code's (ADR-0058)."""

    concurrency: int
    rate: RateView | None
    per_key_concurrency: int
    per_key_rate: RateView | None
    aging_interval_ms: int | None
    reaper_grace_ms: int
    paused: bool
    sweep_after_ms: int
    failed_retention_ms: int


class ShardSettings(msgspec.Struct, frozen=True, kw_only=True):
    """One shard's settings after a policy change."""

    shard: int
    pinned: bool
    """True from a runtime change until reset: the code's settings do not apply."""
    settings: SettingsView


class PolicyResult(msgspec.Struct, frozen=True, kw_only=True):
    """200 of the policy endpoints: every shard of the binding."""

    binding: str
    shards: list[ShardSettings]


class BlockedFlags(msgspec.Struct, frozen=True, kw_only=True, rename={"per_key": "perKey"}):
    """The original's booleans (shard 0): what held dispatch back in the last tick."""

    capacity: bool
    tokens: bool
    per_key: bool


class AxisCounts(msgspec.Struct, frozen=True, kw_only=True):
    """Ready jobs each axis held back in the shard's last tick."""

    paused: int
    capacity: int
    rate: int
    per_key_concurrency: int
    per_key_rate: int


class ShardDiagnosticsView(msgspec.Struct, frozen=True, kw_only=True):
    """One shard, current (asked directly, not the read model)."""

    shard: int
    active: int
    outbox: int
    counts: dict[str, int]
    notices_pending: int
    run_events_pending: int
    blocked: AxisCounts
    held_back_by: list[Literal["paused", "capacity", "rate", "per_key_concurrency", "per_key_rate"]]
    settings: SettingsView
    pinned: bool
    """True from a runtime change until reset: the code's settings do not apply."""


class BindingDiagnostics(msgspec.Struct, frozen=True, kw_only=True):
    """A binding: the original's shard-0 figures, what holds it back, and every shard."""

    active: int
    outbox: int
    blocked: BlockedFlags
    held_back_by: list[str]
    pinned: bool
    """True when a runtime change pinned the settings of any shard of the binding."""
    shards: list[ShardDiagnosticsView]


class Diagnostics(msgspec.Struct, frozen=True, kw_only=True):
    """200 of ``GET /api/diagnostics``."""

    shard: int
    bindings: dict[str, BindingDiagnostics]


class ExplainBody(msgspec.Struct, frozen=True, kw_only=True):
    """200 of ``GET /api/jobs/{id}/explain`` (see tsumugi_scheduler.explain.Explanation)."""

    explain: Explanation
