"""What a simulation saw: the shards' jobs, what the simulator asked for and when, policies, faults, the read model."""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass, field
from typing import Any, Final

from tsumugi_simulation._ledger import Execution
from tsumugi_simulation._steplog import StepLog
from tsumugi_simulation._system import Scenario

__all__ = [
    "START_MS",
    "JobTruth",
    "NodeTruth",
    "Observed",
    "PolicyView",
    "RunObjectTruth",
    "RunTruth",
    "Submitted",
    "Violation",
]


START_MS: Final = 1_767_225_600_000
"""2026-01-01T00:00:00Z: every simulation starts here (instants in messages are relative to it)."""


@dataclass(frozen=True)
class Violation:
    """One broken invariant: its name, what happened, and the job concerned (when one is)."""

    invariant: str
    message: str
    job_id: str | None = None

    def __str__(self) -> str:
        return f"[{self.invariant}] {self.message}"


@dataclass(frozen=True)
class JobTruth:
    """A job as its shard holds it at the end."""

    id: str
    binding: str
    state: str
    attempts: int
    guarantee: str
    concurrency_key: str | None
    payload: str
    timeout_ms: int = 60_000
    expires_at: int | None = None
    run_id: str | None = None
    node_id: str | None = None

    @property
    def shard(self) -> str:
        """``<binding>#<n>``: the shard part of the id."""
        return self.id.split(":", 1)[0]


@dataclass
class Submitted:
    """A job the simulator enqueued, and what it did to it."""

    job_id: str
    enqueued_at: int
    ready_at: int
    rescheduled: bool = False
    deduplicated: bool = False
    retried_at: list[int] = field(default_factory=list[int])
    retries_applied: list[int] = field(default_factory=list[int])
    """The instants in `retried_at` whose answer said the retry applied (so the job had ended before it)."""
    cancel_requested_at: list[int] = field(default_factory=list[int])


@dataclass(frozen=True)
class NodeTruth:
    """A run's node as the read model holds it at the end."""

    id: str
    state: str
    parent: str | None
    origin: str
    container: bool
    after: tuple[str, ...]
    job_id: str | None
    result: str | None
    error: str | None


@dataclass(frozen=True)
class RunTruth:
    """A run as the read model holds it at the end (``state`` None: never projected)."""

    id: str
    state: str | None
    nodes: tuple[NodeTruth, ...] = ()


@dataclass(frozen=True)
class RunObjectTruth:
    """A Run Durable Object's storage at the end: its tables, and its run's state and last change when it holds
    one."""

    name: str
    tables: tuple[str, ...]
    state: str | None
    updated_at: int | None


@dataclass(frozen=True)
class PolicyView:
    """The limits in force for a binding from an instant on (None fields: unknown after a failed change)."""

    concurrency: int | None
    per_key_concurrency: int | None
    paused: bool | None


@dataclass
class Observed:
    """Everything the invariants read."""

    scenario: Scenario
    executions: list[Execution]
    end_ms: int
    jobs: dict[str, JobTruth] = field(default_factory=dict[str, JobTruth])
    submitted: dict[str, Submitted] = field(default_factory=dict[str, Submitted])
    states_seen: dict[str, list[tuple[int, str]]] = field(default_factory=dict[str, list[tuple[int, str]]])
    """Each job's state whenever it was seen to change: ``(instant, state)``."""
    policies: dict[str, list[tuple[int, PolicyView]]] = field(
        default_factory=dict[str, list[tuple[int, PolicyView]]]
    )
    fault_times: list[int] = field(default_factory=list[int])
    """Instants at which an infrastructure fault struck (sorted)."""
    read_model: dict[str, tuple[str, int]] = field(default_factory=dict[str, tuple[str, int]])
    dispatched: dict[tuple[str, int], int] = field(default_factory=dict[tuple[str, int], int])
    """When the shard dispatched each (job, attempt), from its attempt log."""
    finished: dict[tuple[str, int], int] = field(default_factory=dict[tuple[str, int], int])
    """When the shard finished each (job, attempt), from its attempt log."""
    key_holds: dict[tuple[str, int], tuple[str, int]] = field(
        default_factory=dict[tuple[str, int], tuple[str, int]]
    )
    """``(key, until)`` of each (job, attempt) whose concurrency_key slot its shard kept after giving the attempt
    up (ADR-0185), as the simulator saw the shards' ``key_hold`` rows."""
    runs: dict[str, RunTruth] = field(default_factory=dict[str, RunTruth])
    """Every run of the read model, and every run the simulator started (its state None when missing)."""
    run_objects: list[RunObjectTruth] = field(default_factory=list[RunObjectTruth])
    deadline_runs: set[str] = field(default_factory=set[str])
    """Runs started with a deadline (one that expires fails the run whatever its nodes did)."""
    run_keep_ms: tuple[int, int] = (0, 0)
    """How long a settled run's object is kept: ``(sweep_after_ms, failed_retention_ms)``."""
    steps: StepLog = field(default_factory=StepLog)
    """What the step jobs did and which events the simulator sent (ADR-0157)."""
    shadow_ms: int = 70_000
    """How long after a fault the system may legitimately hold a slot the performers cannot see in use."""

    def policy_at(self, binding: str, at: int) -> PolicyView:
        """The policy of ``binding`` in force at ``at``."""
        timeline = self.policies.get(binding, [])
        index = bisect.bisect_right(timeline, at, key=_instant) - 1
        return timeline[index][1] if index >= 0 else self.code_policy(binding)

    def code_policy(self, binding: str) -> PolicyView:
        """The binding's settings as its code sets them."""
        spec = self.scenario.spec(binding)
        return PolicyView(spec.concurrency, spec.per_key_concurrency, False)

    def policies_between(self, binding: str, start: int, end: int) -> list[PolicyView]:
        """Every policy of ``binding`` in force at some instant of ``[start, end]``."""
        views = [self.policy_at(binding, start)]
        views += [v for t, v in self.policies.get(binding, []) if start < t <= end]
        return views

    def slot_end(self, execution: Execution) -> int:
        """When the execution stops holding a slot, as the rules say (ADR-0060): its real end, its deadline when
        it ran on past it (abandoned), the reaper's grace after a cancel request (a performer that ignores the
        request is given up then; expiry requests one, so does a node's run: then the shard's end of the attempt),
        or the reaper's deadline of its attempt. An execution
        that starts after the shard finished its attempt (a late or duplicate delivery, which at-least-once
        permits) holds none."""
        over = self.finished.get((execution.job_id, execution.attempt))
        if over is not None and execution.started_at >= over:
            return execution.started_at  # a late or repeated delivery of an attempt already over
        end = execution.accounted_end(self.end_ms)
        grace = self.scenario.spec(execution.binding).reaper_grace_ms
        sub = self.submitted.get(execution.job_id)
        if sub is not None and sub.cancel_requested_at:
            end = min(end, min(sub.cancel_requested_at) + grace)
        job = self.jobs.get(execution.job_id)
        if job is not None and job.expires_at is not None:  # expiry requests the cancel itself
            end = min(end, job.expires_at + grace)
        if job is not None and job.run_id is not None and job.state == "CANCELLED" and over is not None:
            # Its run asked the cancel (a run cancel or deadline, ADR-0118): the shard gave the slot up when it
            # ended the attempt, the reaper's grace after that request.
            end = min(end, over)
        dispatched = self.dispatched.get((execution.job_id, execution.attempt))
        if dispatched is not None and job is not None:
            # The reaper gives an attempt up timeout_ms + grace after its dispatch or last heartbeat (a
            # delivery that arrives late runs on an attempt the shard has already retried).
            silent_from = max(dispatched, execution.last_beat_at or dispatched)
            end = min(end, silent_from + job.timeout_ms + grace)
        return max(end, execution.started_at)

    def key_slot_end(self, execution: Execution) -> int:
        """When the execution stops holding its concurrency_key's slot: its real end, since a shard keeps the key
        of an attempt it gives up until that attempt can no longer run (ADR-0185), whatever `slot_end` says of
        the binding's slot. A late or repeated delivery of an attempt already over holds none, nor one starting
        after its attempt's reaper deadline with no sign of life before it (the shard gave it up as never
        started)."""
        over = self.finished.get((execution.job_id, execution.attempt))
        if over is not None and execution.started_at >= over:
            return execution.started_at
        dispatched = self.dispatched.get((execution.job_id, execution.attempt))
        job = self.jobs.get(execution.job_id)
        if dispatched is not None and job is not None:
            grace = self.scenario.spec(execution.binding).reaper_grace_ms
            if execution.started_at >= dispatched + job.timeout_ms + grace:
                return execution.started_at
        return max(execution.end_or(self.end_ms), execution.started_at)

    def first_executions(self) -> list[Execution]:
        """The first execution of each (job, attempt): a repeat is a duplicate delivery of an at-least-once
        attempt, which at-least-once permits and no limit counts (ADR-0060)."""
        seen: set[tuple[str, int]] = set()
        firsts: list[Execution] = []
        for e in self.executions:
            if (e.job_id, e.attempt) not in seen:
                seen.add((e.job_id, e.attempt))
                firsts.append(e)
        return firsts

    def shadowed(self, at: int) -> bool:
        """True when a fault struck within ``shadow_ms`` before ``at``."""
        index = bisect.bisect_right(self.fault_times, at) - 1
        return index >= 0 and at - self.fault_times[index] < self.shadow_ms

    def payload_of(self, job: JobTruth) -> Any:
        """The job's payload, decoded."""
        return json.loads(job.payload)


def _instant(change: tuple[int, PolicyView]) -> int:
    return change[0]
