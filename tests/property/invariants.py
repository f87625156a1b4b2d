"""Invariant checkers over what a test observed of a shard: pure functions returning violation messages.

Each checker takes plain data (states read back from the engine, recorded dispatch instants, claim and retry
events), so ``test_invariants.py`` can feed it a deliberately broken history and see it complain, and the
stateful test can run it after every step. An empty list means the invariant holds.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "IN_FLIGHT",
    "RETRYABLE",
    "TERMINAL",
    "JobView",
    "RateTrack",
    "ReadyJob",
    "at_most_once_violations",
    "attempt_violations",
    "concurrency_violations",
    "greedy_choice",
    "idle_slot_violations",
    "lost_job_violations",
    "priority_order_violations",
    "rate_violations",
    "terminal_violations",
    "unchanged_violations",
]

IN_FLIGHT = frozenset({"QUEUED", "RUNNING"})
TERMINAL = frozenset({"COMPLETED", "FAILED", "CANCELLED", "STALLED"})
RETRYABLE = frozenset({"FAILED", "STALLED"})
_EPSILON = 1e-9


@dataclass(frozen=True, kw_only=True)
class JobView:
    """The fields of one job read back from the engine that the invariants look at."""

    state: str
    attempts: int
    concurrency_key: str | None
    updated_at: int


def concurrency_violations(
    views: Mapping[str, JobView | None],
    *,
    concurrency: int,
    per_key_concurrency: int,
    dispatched_keys: Sequence[str | None],
    held: Mapping[str, int] | None = None,
) -> list[str]:
    """After a tick that dispatched jobs with ``dispatched_keys``: no limit it dispatched under is exceeded.

    A limit lowered at runtime may leave more jobs in flight than it allows; that is not a violation until a
    dispatch happens while over it, so only ticks that dispatched are judged, and per key only the keys used.
    ``held``: slots per key still kept by attempts given up that may run on (ADR-0185); they count per key.
    """
    if not dispatched_keys:
        return []
    live = [view for view in views.values() if view is not None and view.state in IN_FLIGHT]
    problems: list[str] = []
    if len(live) > concurrency:
        problems.append(f"{len(live)} jobs in flight after a dispatch, concurrency is {concurrency}")
    for key in sorted({key for key in dispatched_keys if key is not None}):
        count = sum(1 for view in live if view.concurrency_key == key)
        kept = (held or {}).get(key, 0)
        if count + kept > per_key_concurrency:
            also = f" and {kept} given up that may still run" if kept else ""
            problems.append(
                f"{count} jobs of key {key!r} in flight{also}, per_key_concurrency is {per_key_concurrency}"
            )
    return problems


def rate_violations(
    instants: Sequence[int], *, tokens: int, interval_ms: int, label: str = "rate"
) -> list[str]:
    """A bucket of ``tokens`` refilling ``tokens`` per ``interval_ms``: any window of length t holds at most
    ``tokens + tokens * t / interval_ms`` dispatches (brute force over every window bounded by two dispatches).
    """
    ordered = sorted(instants)
    for first in range(len(ordered)):
        for last in range(first, len(ordered)):
            span = ordered[last] - ordered[first]
            count = bisect_right(ordered, ordered[last]) - bisect_left(ordered, ordered[first])
            allowed = tokens + tokens * span / interval_ms
            if count > allowed + _EPSILON:
                return [
                    f"{label}: {count} dispatches within {span} ms "
                    f"(from {ordered[first]}), at most {allowed:g} allowed"
                ]
    return []


def attempt_violations(dispatches: Iterable[tuple[str, int]]) -> list[str]:
    """Attempt numbers dispatched for one job strictly increase: no job ever has two live attempts."""
    last: dict[str, int] = {}
    problems: list[str] = []
    for job, attempt in dispatches:
        if job in last and attempt <= last[job]:
            problems.append(f"{job}: attempt {attempt} dispatched after attempt {last[job]}")
        last[job] = attempt
    return problems


def at_most_once_violations(events: Iterable[tuple[str, str]]) -> list[str]:
    """Events ``("claim", job)`` (a claim answered True), ``("retry", job)`` (a manual retry or a fresh
    enqueue of the id) and ``("failure", job)`` (an accepted failure report that scheduled a retry), in order:
    an at-most-once job starts at most once until a human retries it or its performer reported a failure.
    A reported failure is a known outcome, so retrying it keeps at-most-once (reference 1.3 step 5 retries
    every guarantee); only a silent attempt must never be re-run.
    """
    started: defaultdict[str, int] = defaultdict(int)
    problems: list[str] = []
    for kind, job in events:
        if kind in ("retry", "failure"):
            started[job] = 0
        elif kind == "claim":
            started[job] += 1
            if started[job] == 2:
                problems.append(f"{job}: claimed twice without a manual retry in between")
    return problems


def terminal_violations(
    before: Mapping[str, JobView | None], after: Mapping[str, JobView | None], *, retried: Iterable[str] = ()
) -> list[str]:
    """A terminal job keeps its state, except a manual retry of FAILED/STALLED (to SCHEDULED) and the sweep."""
    allowed_retries = set(retried)
    problems: list[str] = []
    for job, old in before.items():
        new = after.get(job)
        if old is None or old.state not in TERMINAL or new is None or new.state == old.state:
            continue
        if job in allowed_retries and old.state in RETRYABLE and new.state == "SCHEDULED":
            continue
        problems.append(f"{job}: terminal {old.state} became {new.state}")
    return problems


def lost_job_violations(
    last_seen: Mapping[str, JobView],
    now_seen: Mapping[str, JobView | None],
    *,
    now: int,
    sweep_after_ms: int,
    failed_retention_ms: int,
) -> list[str]:
    """Every job is still there, unless it was terminal and past its retention (then the sweep may drop it)."""
    problems: list[str] = []
    for job, old in last_seen.items():
        if now_seen.get(job) is not None:
            continue
        keep = failed_retention_ms if old.state in RETRYABLE else sweep_after_ms
        if old.state not in TERMINAL:
            problems.append(f"{job}: lost while {old.state}")
        elif now - old.updated_at < keep:
            problems.append(
                f"{job}: {old.state} swept {now - old.updated_at} ms after its change, retention {keep}"
            )
    return problems


def unchanged_violations(what: str, before: JobView | None, after: JobView | None) -> list[str]:
    """A refused (late, duplicate or stale) command leaves the job's state and attempts as they were."""
    old = None if before is None else (before.state, before.attempts)
    new = None if after is None else (after.state, after.attempts)
    return [] if old == new else [f"{what} changed the job from {old} to {new}"]


@dataclass
class RateTrack:
    """Dispatch instants under one rate setting (a change of setting starts a new track).

    ``instants`` holds every dispatch; ``by_key`` those of each concurrency key. The track is judged as the
    binding rate when it has ``instants`` and as the per-key rate when it has ``by_key``.
    """

    rate: tuple[int, int] | None
    """``(tokens, interval_ms)``, or None when unlimited."""
    instants: list[int] = field(default_factory=list[int])
    by_key: dict[str, list[int]] = field(default_factory=dict[str, list[int]])

    def violations(self) -> list[str]:
        """Rate violations over the binding's and every key's dispatch instants."""
        if self.rate is None:
            return []
        tokens, interval_ms = self.rate
        problems = rate_violations(self.instants, tokens=tokens, interval_ms=interval_ms)
        for key, instants in sorted(self.by_key.items()):
            problems += rate_violations(
                instants, tokens=tokens, interval_ms=interval_ms, label=f"per-key rate {key}"
            )
        return problems


@dataclass(frozen=True, kw_only=True)
class ReadyJob:
    """A job that was ready when a tick began, as the dispatch invariants see it."""

    id: str
    score: int
    """Effective priority (with aging) at the tick."""
    eligible_at: int
    created_at: int
    key: str | None


def _rank(job: ReadyJob) -> tuple[int, int, int, str]:
    return (-job.score, job.eligible_at, job.created_at, job.id)


def greedy_choice(ready: Iterable[ReadyJob], *, slots: int, room: Mapping[str, int]) -> set[str]:
    """The reference batch over the whole backlog: best first, skipping jobs whose key has no room left.

    ``room`` is how many more jobs each key may start (absent = the caller's per-key limit was not reached and
    the key is not listed: treated as 0, so list every key that appears).
    """
    left = dict(room)
    chosen: set[str] = set()
    for job in sorted(ready, key=_rank):
        if len(chosen) >= slots:
            break
        if job.key is not None:
            if left.get(job.key, 0) <= 0:
                continue
            left[job.key] -= 1
        chosen.add(job.id)
    return chosen


def idle_slot_violations(
    left_ready: Iterable[ReadyJob], *, free_slots: int, blocked_keys: Iterable[str]
) -> list[str]:
    """No dispatchable job waits while a slot is free: after a tick, a job left ready whose key is not blocked
    means the tick stopped early, unless every slot is taken."""
    if free_slots <= 0:
        return []
    blocked = set(blocked_keys)
    return [
        f"{job.id} (key {job.key!r}) left waiting with {free_slots} free slots"
        for job in left_ready
        if job.key is None or job.key not in blocked
    ]


def priority_order_violations(
    left_ready: Iterable[ReadyJob], dispatched: Iterable[ReadyJob], *, blocked_keys: Iterable[str]
) -> list[str]:
    """The dispatched set respects effective priority over the whole backlog: no job left ready that its key
    would have let go ranks above a job the tick dispatched."""
    blocked = set(blocked_keys)
    sent = list(dispatched)
    problems: list[str] = []
    for job in left_ready:
        if job.key is not None and job.key in blocked:
            continue
        worse = [d.id for d in sent if d.score < job.score]
        if worse:
            problems.append(
                f"{job.id} (effective priority {job.score}) left behind {', '.join(sorted(worse))}"
            )
    return problems
