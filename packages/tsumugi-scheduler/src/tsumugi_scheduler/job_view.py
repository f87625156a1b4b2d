"""The JobDetail answer of RPC ``get`` and ``GET /api/jobs/{id}``, as plain values.

Source: docs/design/scheduler-rpc.md §4.2.

Built from the shard's row when the shard still holds the job, else from the read model's row, so both paths
answer the same keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import msgspec

from tsumugi_core.states import RETRYABLE_STATES, JobState, current_attempt
from tsumugi_scheduler.readmodel import JobDetail as ReadModelDetail
from tsumugi_scheduler.shard import AttemptRecord, JobRecord
from tsumugi_scheduler.shard.schema import StepRow

__all__ = ["ATTEMPTS_SHOWN", "detail_from_read_model", "detail_from_shard", "step_details"]

ATTEMPTS_SHOWN: Final = 20
"""Newest attempts a detail shows (the original's cap)."""


def _log_entry(attempt: AttemptRecord) -> dict[str, Any]:
    return {
        "attempt": attempt.attempt,
        "state": attempt.state.value,
        "started_at": attempt.started_at,
        "finished_at": attempt.finished_at,
        "error": attempt.error,
    }


def _attempts_log(job: JobRecord, attempts: Sequence[AttemptRecord]) -> list[dict[str, Any]]:
    newest = sorted(attempts, key=lambda a: a.attempt, reverse=True)[:ATTEMPTS_SHOWN]
    if newest or job.state != JobState.COMPLETED or job.dispatched_at is None:
        return [_log_entry(a) for a in newest]
    # A first-try success records no attempt row; the view shows it anyway (docs/reference/original.md §3.3).
    return [
        {
            "attempt": job.attempts or 1,
            "state": "COMPLETED",
            "started_at": job.dispatched_at,
            "finished_at": job.updated_at,
            "error": None,
        }
    ]


def detail_from_shard(
    job: JobRecord, attempts: Sequence[AttemptRecord], *, now: int, failed_retention_ms: int
) -> dict[str, Any]:
    """The JobDetail of a job the shard holds; ``retryable`` within the failed retention."""
    retryable = job.state in RETRYABLE_STATES and job.updated_at + failed_retention_ms > now
    return {
        "id": job.id,
        "binding": job.binding,
        "state": job.state.value,
        "priority": job.priority,
        "attempts": job.attempts,
        "max_attempts": job.max_attempts,
        "concurrency_key": job.concurrency_key,
        "unique_key": job.unique_key,
        "guarantee": job.guarantee,
        "created_at": job.created_at,
        "updated_at": job.updated_at,
        "run_after": job.run_after,
        "dispatched_at": job.dispatched_at,
        "progress": job.progress,
        "payload": job.payload,
        "result": job.result,
        "retryable": retryable,
        "attempts_log": _attempts_log(job, attempts),
        "timeout_ms": job.timeout_ms,
        "expires_at": job.expires_at,
        "traceparent": job.traceparent,
        "run_id": job.run_id,
        "node_id": job.node_id,
        "cancel_requested": job.cancel_requested_at is not None,
        "current_attempt": current_attempt(job.state, job.attempts),
    }


def detail_from_read_model(row: ReadModelDetail) -> dict[str, Any]:
    """The JobDetail of a job only the read model still holds (swept from its shard)."""
    fields: dict[str, Any] = msgspec.to_builtins(row)
    detail = {
        key: fields[key]
        for key in (
            "id",
            "binding",
            "state",
            "priority",
            "attempts",
            "max_attempts",
            "concurrency_key",
            "unique_key",
            "guarantee",
            "created_at",
            "updated_at",
            "dispatched_at",
            "progress",
            "payload",
            "result",
            "retryable",
            "attempts_log",
            "expires_at",
            "traceparent",
            "run_id",
            "node_id",
        )
    }
    detail["run_after"] = row.run_after if row.run_after is not None else row.created_at
    detail["timeout_ms"] = None
    detail["cancel_requested"] = row.cancel_requested_at is not None
    detail["current_attempt"] = current_attempt(row.state, row.attempts)
    return detail


def step_details(steps: Sequence[StepRow]) -> list[dict[str, Any]]:
    """A job's stored steps for its detail (ADR-0144): name, state, the attempt, times and the result."""
    return [
        {
            "name": step.name,
            "state": step.state,
            "attempt": step.attempt,
            "started_at": step.started_at,
            "finished_at": step.finished_at,
            "result": None if step.result is None else msgspec.json.decode(step.result),
        }
        for step in steps
    ]
