"""What the Scheduler Durable Object does with its rows: reconcile with the code, fire or skip (ADR-0079).

Pure decisions over stored schedules; the object applies them in one transaction each.

* `reconcile`: code-defined schedules against the stored rows. A new one is inserted with its first
  occurrence; a changed timing recomputes the next run, any other change (target, payload, options,
  overlap) keeps the phase; a code schedule no longer in the code is deleted. Run-time rows are left alone,
  except that a code schedule of the same name takes its row over. Pause state is never touched.
* `plan_fire`: one due row becomes a `Fire` (enqueue the occurrence's job) or, with overlap ``skip`` while
  the previous occurrence's job is still active, a `Skip`; either way the next run is the next boundary after
  now (the missed-period rule).

Example:
    >>> from tsumugi_core.schedule_timing import Timing
    >>> spec = ScheduleSpec(name="t", binding="Hello", timing=Timing(every_ms=60_000))
    >>> reconcile({"t": spec}, [], now=1_000)
    [Insert(name='t', spec=ScheduleSpec(name='t', binding='Hello', ...), next_run_at=61000)]
    >>> plan_fire(StoredSchedule(name="t", source=ScheduleSource.CODE, spec=spec, next_run_at=61_000),
    ...           now=241_000, previous_active=False, shards=1, id_key="k3y")
    Fire(name='t', occurrence=61000, next_run_at=301000, job_id='Hello#0:t-61000-4b24ed98aab7')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec

from tsumugi_core.schedule_spec import Overlap, ScheduleSource, ScheduleSpec, occurrence_job_id
from tsumugi_core.schedule_timing import first_occurrence, next_after

__all__ = [
    "Delete",
    "Fire",
    "Insert",
    "ReconcileChange",
    "Skip",
    "StoredSchedule",
    "Update",
    "plan_fire",
    "reconcile",
    "resumed_next_run",
]


class StoredSchedule(msgspec.Struct, frozen=True, kw_only=True):
    """The part of a stored row the decisions read."""

    name: str
    source: ScheduleSource
    spec: ScheduleSpec
    next_run_at: int


class Insert(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """A code schedule the store lacks."""

    name: str
    spec: ScheduleSpec
    next_run_at: int


class Update(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """A stored row whose code definition changed (``next_run_at`` recomputed or kept)."""

    name: str
    spec: ScheduleSpec
    next_run_at: int


class Delete(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """A code schedule no longer in the code."""

    name: str


ReconcileChange = Insert | Update | Delete


def reconcile(
    code: Mapping[str, ScheduleSpec], stored: Iterable[StoredSchedule], now: int
) -> list[ReconcileChange]:
    """The changes that make the stored rows match the code's schedules (sorted by name)."""
    changes: list[ReconcileChange] = []
    seen: set[str] = set()
    for row in stored:
        seen.add(row.name)
        spec = code.get(row.name)
        if spec is None:
            if row.source is ScheduleSource.CODE:
                changes.append(Delete(name=row.name))
            continue
        if row.source is ScheduleSource.CODE and spec == row.spec:
            continue
        keep = spec.timing == row.spec.timing
        changes.append(
            Update(
                name=row.name,
                spec=spec,
                next_run_at=row.next_run_at if keep else first_occurrence(spec.timing, now),
            )
        )
    changes.extend(
        Insert(name=name, spec=spec, next_run_at=first_occurrence(spec.timing, now))
        for name, spec in code.items()
        if name not in seen
    )
    return sorted(changes, key=lambda change: change.name)


class Fire(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Enqueue the occurrence at ``occurrence`` as ``job_id``; the row's next run becomes ``next_run_at``."""

    name: str
    occurrence: int
    next_run_at: int
    job_id: str


class Skip(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """The previous occurrence is still active and overlap is ``skip``: count it, move on."""

    name: str
    occurrence: int
    next_run_at: int


def plan_fire(
    row: StoredSchedule, *, now: int, previous_active: bool, shards: int, id_key: str
) -> Fire | Skip:
    """What to do with a due row.

    Args:
        row: A row whose ``next_run_at`` is at or before ``now``.
        now: The present (a late alarm fires the oldest missed occurrence only).
        previous_active: The last fired job is still SCHEDULED, QUEUED or RUNNING.
        shards: How many shards the target binding has (for the job id).
        id_key: The Scheduler object's secret part of every occurrence id (ADR-0177).
    """
    occurrence = row.next_run_at
    following = next_after(row.spec.timing, occurrence, now)
    if previous_active and row.spec.overlap is Overlap.SKIP:
        return Skip(name=row.name, occurrence=occurrence, next_run_at=following)
    job_id = occurrence_job_id(row.spec, shards, occurrence, id_key)
    return Fire(name=row.name, occurrence=occurrence, next_run_at=following, job_id=job_id)


def resumed_next_run(row: StoredSchedule, now: int) -> int:
    """The next run of a schedule resumed at ``now``: its stored one if still ahead, else the next boundary."""
    if row.next_run_at > now:
        return row.next_run_at
    return next_after(row.spec.timing, row.next_run_at, now)
