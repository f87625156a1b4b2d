"""The invariants of durable steps, sleeps and events (ADR-0157), read from the seed's `StepLog`.

- ``step_once``: a completed step never runs again: no invocation that began after a step's result was stored
  runs its body, and an at-most-once job runs each step's body at most once.
- ``sleep_wake``: a job resumes after its sleep and only then: the code after ``ctx.sleep`` runs no earlier
  than the wake time, and the shard starts no new attempt of a sleeping job before it (a fault or an operator's
  action aside: a lost report is retried, and the retry sleeps again).
- ``event_once``: an event reaches every job waiting on it exactly once: a wait answers at most one event,
  only one that was sent to its key, and never a timeout when an acknowledged event for its key came in time.
- ``event_timeout``: a timeout fires when no event comes, and not before the wait's deadline.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable
from typing import Final

from tsumugi_simulation._observed import START_MS, Observed, Violation
from tsumugi_simulation._steplog import WaitRecord

__all__ = ["EVENT_MARGIN_MS", "event_once", "event_timeout", "sleep_wake", "step_once"]

EVENT_MARGIN_MS: Final = 2_000
"""An event counts as in time when it was acknowledged this long before the wait's earliest deadline (its
delivery crosses from the event box to the shard), with no fault striking from then to that deadline."""
_FAULT_LEAD_MS: Final = 2_000
"""Faults are noted when the simulator next looks (every second of virtual time): one noted this long after an
instant may have struck before it."""


def _ms(at: int) -> str:
    return f"+{(at - START_MS) / 1000:.3f}s"


def _fault_between(seen: Observed, start: int, end: int) -> bool:
    index = bisect.bisect_left(seen.fault_times, start)
    return index < len(seen.fault_times) and seen.fault_times[index] <= end + _FAULT_LEAD_MS


def step_once(seen: Observed) -> Iterable[Violation]:
    """A completed step's body never runs in a later invocation; an at-most-once job's step body runs once."""
    log = seen.steps
    runs: dict[tuple[str, str], list[int]] = defaultdict(list)
    for body in log.bodies:
        runs[body.job_id, body.step].append(body.seq)
        done = log.completed.get((body.job_id, body.step))
        if done is not None and body.invocation > done:
            yield Violation(
                "step_once",
                f"{body.job_id} step {body.step} ran again in an invocation that began after it completed",
                body.job_id,
            )
    for (job_id, step), seqs in runs.items():
        job = seen.jobs.get(job_id)
        if job is not None and job.guarantee == "at-most-once" and len(seqs) > 1:
            yield Violation("step_once", f"at-most-once {job_id} ran step {step} {len(seqs)} times", job_id)


def sleep_wake(seen: Observed) -> Iterable[Violation]:
    """Past a sleep only at or after the wake time; no new attempt of a sleeping job before it (no fault or
    operator action meanwhile)."""
    first_reach: dict[str, tuple[int, int]] = {}
    suspended: list[tuple[str, int, int]] = []
    for record in seen.steps.sleeps:
        if not record.passed:
            first_reach.setdefault(record.job_id, (record.at, record.sleep_ms))
            suspended.append((record.job_id, record.attempt, record.at))
    for record in seen.steps.sleeps:
        reach = first_reach.get(record.job_id)
        if record.passed and reach is not None and record.at < reach[0] + reach[1]:
            yield Violation(
                "sleep_wake",
                f"{record.job_id} went past its sleep at {_ms(record.at)}, before its wake time "
                f"{_ms(reach[0] + reach[1])}",
                record.job_id,
            )
    for job_id, attempt, at in suspended:
        reach_at, sleep_ms = first_reach[job_id]
        if at != reach_at:
            continue  # a later reach replays the first one's stored wake
        wake = reach_at + sleep_ms
        sub = seen.submitted.get(job_id)
        acted = [] if sub is None else [*sub.retried_at, *sub.cancel_requested_at]
        faulted = any(e.fault is not None for e in seen.executions if e.job_id == job_id)
        for e in seen.executions:
            if e.job_id != job_id or e.attempt <= attempt or not (at <= e.started_at < wake):
                continue
            if (
                faulted
                or seen.shadowed(e.started_at)
                or _fault_between(seen, at - _FAULT_LEAD_MS, e.started_at)
            ):
                continue
            if any(at <= a <= e.started_at for a in acted) or (sub is not None and sub.rescheduled):
                continue
            yield Violation(
                "sleep_wake",
                f"{job_id} attempt {e.attempt} started at {_ms(e.started_at)} while it slept until {_ms(wake)}",
                job_id,
            )


def _waits(seen: Observed) -> dict[str, list[WaitRecord]]:
    by_job: dict[str, list[WaitRecord]] = defaultdict(list)
    for record in seen.steps.waits:
        by_job[record.job_id].append(record)
    return by_job


def event_once(seen: Observed) -> Iterable[Violation]:
    """A wait answers one event at most, one sent to its key, and no timeout when one came in time."""
    sends = seen.steps.sends
    for job_id, records in _waits(seen).items():
        reached = [r for r in records if r.outcome == "reached"]
        got = {r.n for r in records if r.outcome == "event"}
        if len(got) > 1:
            yield Violation("event_once", f"{job_id} got events {sorted(map(str, got))} for one wait", job_id)
        for n in got:
            sent = next((s for s in sends if s.n == n), None)
            if sent is None or sent.key != reached[0].key:
                yield Violation(
                    "event_once", f"{job_id} got event {n}, never sent to key {reached[0].key}", job_id
                )
        timeouts = [r for r in records if r.outcome == "timeout"]
        if not timeouts or not reached:
            continue
        deadline = reached[0].at + reached[0].timeout_ms
        for sent in sends:
            if (
                sent.acknowledged
                and sent.key == reached[0].key
                and sent.at <= deadline - EVENT_MARGIN_MS
                and not _fault_between(seen, sent.at - _FAULT_LEAD_MS, deadline)
            ):
                yield Violation(
                    "event_once",
                    f"{job_id} timed out waiting for {sent.key} although event {sent.n} was acknowledged at "
                    f"{_ms(sent.at)}, before its deadline {_ms(deadline)}",
                    job_id,
                )
                break


def event_timeout(seen: Observed) -> Iterable[Violation]:
    """A wait with no event times out, at its deadline or later; a COMPLETED waiting job had an answer."""
    sent_keys = {s.key for s in seen.steps.sends}
    for job_id, records in _waits(seen).items():
        reached = [r for r in records if r.outcome == "reached"]
        if not reached:
            continue
        deadline = reached[0].at + reached[0].timeout_ms
        for r in records:
            if r.outcome == "timeout" and r.at < deadline:
                yield Violation(
                    "event_timeout",
                    f"{job_id}'s wait timed out at {_ms(r.at)}, before its deadline {_ms(deadline)}",
                    job_id,
                )
        answered = any(r.outcome != "reached" for r in records)
        job = seen.jobs.get(job_id)
        if job is not None and job.state == "COMPLETED" and not answered:
            yield Violation("event_timeout", f"{job_id} COMPLETED but its wait never ended", job_id)
        if reached[0].key not in sent_keys and any(r.outcome == "event" for r in records):
            yield Violation(
                "event_timeout", f"{job_id} got an event on {reached[0].key}, where none was sent", job_id
            )
