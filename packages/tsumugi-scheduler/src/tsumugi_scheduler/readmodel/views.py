"""What the read model answers: list rows, job details, stats, bulk selections.

Field names are the REST API's (snake_case, docs/reference/original.md §4.3 / §4.4), so
``msgspec.json.encode`` of a view is the response body; ``JobStats`` keeps the original's camelCase keys.
"""

from __future__ import annotations

import msgspec

from tsumugi_scheduler.readmodel.projection import AttemptLogEntry

__all__ = ["BulkSelection", "JobDetail", "JobList", "JobStats", "JobSummary"]


class JobSummary(msgspec.Struct, frozen=True, kw_only=True):
    """A job as lists show it (attempt logs are never included in lists)."""

    id: str
    binding: str
    state: str
    priority: int
    attempts: int
    max_attempts: int
    created_at: int
    updated_at: int
    dispatched_at: int | None
    retryable: bool
    current_attempt: int | None = None
    """+ The attempt in progress (``attempts + 1``) while QUEUED or RUNNING, else null: ``attempts`` counts
    finished attempts only, so a first attempt runs with ``attempts`` 0."""


class JobList(msgspec.Struct, frozen=True, kw_only=True):
    """One page of a job list and the number of jobs matching its filters."""

    jobs: list[JobSummary]
    total: int


class JobDetail(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the read model knows about one job.

    The original's keys (docs/reference/original.md §4.3), plus ``run_id`` / ``node_id`` (gap 34: link a job
    to its run) and what this project adds to the job row: ``traceparent``, ``expires_at``,
    ``cancel_requested_at``, ``last_error``, ``reason`` (why the shard ended or requeued the job itself) and
    ``shard``.
    """

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
    dispatched_at: int | None
    run_after: int | None
    progress: float | None
    payload: str
    """JSON text."""
    result: str | None
    """JSON text of the performer's return value (success only)."""
    retryable: bool
    attempts_log: list[AttemptLogEntry]
    """Newest first."""
    run_id: str | None
    node_id: str | None
    traceparent: str | None
    expires_at: int | None
    cancel_requested_at: int | None
    last_error: str | None
    reason: str | None
    shard: int | None


class JobStats(msgspec.Struct, frozen=True, kw_only=True):
    """Counts per state (only states present) and how long the oldest SCHEDULED job has been due."""

    by_state: dict[str, int] = msgspec.field(name="byState")
    oldest_scheduled_ms: int | None = msgspec.field(name="oldestScheduledMs")


class BulkSelection(msgspec.Struct, frozen=True, kw_only=True):
    """Ids a bulk action targets (oldest first) and how many more match (an estimate: the model lags)."""

    ids: list[str]
    remaining: int
