"""One job's detail from the read model (``GET /api/jobs/{id}``), attempt log included."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from tsumugi_core.states import JobState
from tsumugi_scheduler.readmodel.d1_port import D1Like, StatementT
from tsumugi_scheduler.readmodel.projection import AttemptLogEntry
from tsumugi_scheduler.readmodel.retry_window import RetryWindow, is_retryable
from tsumugi_scheduler.readmodel.views import JobDetail

__all__ = ["get_job", "parse_attempts_log"]

_DETAIL_COLUMNS: Final = (
    "id, binding, state, priority, attempts, max_attempts, concurrency_key, unique_key, guarantee, created_at, "
    "updated_at, dispatched_at, run_after, progress, payload, result, attempts_log, run_id, node_id, "
    "traceparent, expires_at, cancel_requested_at, last_error, reason, shard"
)
_SELECT: Final = f"SELECT {_DETAIL_COLUMNS} FROM job WHERE id = ?"
_log_decoder: Final = msgspec.json.Decoder(list[AttemptLogEntry])


def parse_attempts_log(text: Any) -> list[AttemptLogEntry]:
    """The stored attempt log; NULL, malformed JSON or a wrong shape all read as no entries.

    Example:
        >>> parse_attempts_log('[{"attempt": 2, "state": "FAILED", "started_at": 5, "finished_at": 9, "error": "x"}]')
        [AttemptLogEntry(attempt=2, state='FAILED', started_at=5, finished_at=9, error='x')]
        >>> parse_attempts_log("{not json")
        []
    """
    if not isinstance(text, str):
        return []
    try:
        return _log_decoder.decode(text)
    except (msgspec.DecodeError, msgspec.ValidationError):
        # A damaged row must not break the detail view; the job itself is still worth showing.
        return []


def _first_try_entry(row: Mapping[str, Any]) -> AttemptLogEntry | None:
    # First-try successes store no attempt row (one write saved per job); the view shows the attempt
    # anyway, as the original does (docs/reference/original.md §3.3).
    if row["state"] != JobState.COMPLETED.value or row["dispatched_at"] is None:
        return None
    return AttemptLogEntry(
        attempt=int(row["attempts"]) or 1,
        state=JobState.COMPLETED.value,
        started_at=int(row["dispatched_at"]),
        finished_at=int(row["updated_at"]),
        error=None,
    )


def _attempts_of(row: Mapping[str, Any]) -> list[AttemptLogEntry]:
    log = parse_attempts_log(row["attempts_log"])
    if log:
        return log
    entry = _first_try_entry(row)
    return [] if entry is None else [entry]


async def get_job(
    d1: D1Like[StatementT], job_id: str, *, retry_window: RetryWindow | None = None
) -> JobDetail | None:
    """The detail of ``job_id``, or None when the read model has no such job.

    Args:
        d1: The read-model database.
        job_id: The job id (exact).
        retry_window: For ``retryable``; see ``list_jobs``.
    """
    row = await d1.prepare(_SELECT).bind(job_id).first()
    if row is None:
        return None
    fields: dict[str, Any] = dict(row)
    fields["attempts_log"] = _attempts_of(row)
    fields["retryable"] = is_retryable(
        str(row["state"]), str(row["binding"]), int(row["updated_at"]), retry_window
    )
    # convert checks every column's type, so a row the projection did not write fails loudly here.
    return msgspec.convert(fields, JobDetail)
