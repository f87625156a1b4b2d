"""A stored schedule as the API answers it: the original's fields plus timing words and next occurrences."""

from __future__ import annotations

from typing import Any, Final

import msgspec

from tsumugi_core.schedule_spec import ALLOWED_JOB_OPTIONS
from tsumugi_core.schedule_timing import next_occurrences
from tsumugi_core.schedule_words import describe
from tsumugi_scheduler.schedules.fields import CAMEL
from tsumugi_scheduler.schedules.store import ScheduleRow

__all__ = ["NEXT_OCCURRENCES", "schedule_view"]

NEXT_OCCURRENCES: Final = 5
"""How many upcoming occurrences a view lists."""


def schedule_view(row: ScheduleRow, count: int = NEXT_OCCURRENCES) -> dict[str, Any]:
    """``row`` in the original's shape (docs/reference/original.md §4.4) plus ``timezone``, ``source``,
    ``paused``, ``description``, ``next_occurrences``, ``binding``, ``payload`` and ``options`` (camelCase
    job options)."""
    spec = row.spec
    options = {
        CAMEL.get(k, k): msgspec.to_builtins(getattr(spec, k))
        for k in ALLOWED_JOB_OPTIONS
        if getattr(spec, k) is not None
    }
    return {
        "name": row.name,
        "kind": "job" if spec.flow is None else "flow",
        "target": spec.binding if spec.flow is None else spec.flow,
        "every_ms": spec.timing.every_ms,
        "cron": spec.timing.cron,
        "timezone": spec.timing.timezone,
        "overlap": spec.overlap.value,
        "next_run_at": row.next_run_at,
        "last_run_at": row.last_run_at,
        "last_fired_at": row.last_fired_at,
        "last_job_id": row.last_job_id,
        "last_run_id": row.last_run_id,
        "last_skipped_at": row.last_skipped_at,
        "skipped_count": row.skipped_count,
        "last_error": row.last_error,
        "source": row.source.value,
        "paused": row.paused,
        "description": describe(spec.timing),
        "next_occurrences": [] if row.paused else next_occurrences(spec.timing, row.next_run_at, count),
        "binding": spec.binding if spec.flow is None else None,
        "flow": spec.flow,
        "input": None if spec.flow is None or spec.payload_from_code else spec.payload,
        "deadline_ms": spec.deadline_ms,
        "payload": None if spec.payload_from_code or spec.flow is not None else spec.payload,
        "payload_from_code": spec.payload_from_code,
        "options": options,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }
