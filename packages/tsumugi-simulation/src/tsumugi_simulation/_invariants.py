"""The invariants a simulation checks, each a function from what was observed to the violations found.

They are checked from the performer's side where the property is about execution (the ledger of real
executions), and against the shards' truth where it is about state. ADR-0060 gives the rule of each.
"""

from __future__ import annotations

import bisect
import itertools
import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any, Final, cast

from tsumugi_core.flow_advance import NodeOrigin, NodeView, run_state
from tsumugi_core.liveness import MAX_INVOCATION_MS
from tsumugi_simulation._ledger import Execution
from tsumugi_simulation._observed import START_MS, JobTruth, NodeTruth, Observed, Submitted, Violation
from tsumugi_simulation._step_invariants import event_once, event_timeout, sleep_wake, step_once

__all__ = ["INVARIANTS", "check"]

_TERMINAL: Final = frozenset({"COMPLETED", "FAILED", "CANCELLED", "STALLED"})
_LOGGED_FINAL: Final = frozenset({"COMPLETED", "CANCELLED", "STALLED"})
"""Attempt-log states that end a job for good (a requeued attempt logs FAILED, so FAILED is not among them)."""
_FAILURE_STATES: Final = frozenset({"FAILED", "STALLED"})
FAIRNESS_WAIT_MS: Final = 2_000
"""How long a dispatchable job may wait while its binding has a free slot and its key is free."""


def _ms(at: int, origin: int = START_MS) -> str:
    return f"+{(at - origin) / 1000:.3f}s"


def at_most_once(seen: Observed) -> Iterable[Violation]:
    """An at-most-once job never executes twice at once, and never runs the same attempt twice."""
    origin = START_MS
    by_job: dict[str, list[Execution]] = defaultdict(list)
    for e in seen.executions:
        job = seen.jobs.get(e.job_id)
        if job is not None and job.guarantee == "at-most-once":
            by_job[e.job_id].append(e)
    for job_id, runs in by_job.items():
        attempts = [e.attempt for e in runs]
        if len(set(attempts)) < len(attempts):
            yield Violation(
                "at_most_once", f"{job_id} ran attempt(s) {sorted(attempts)}: one attempt twice", job_id
            )
        for earlier, later in itertools.pairwise(runs):
            if later.started_at < earlier.end_or(seen.end_ms):
                yield Violation(
                    "at_most_once",
                    f"{job_id}: attempt {later.attempt} started at {_ms(later.started_at, origin)} while attempt "
                    f"{earlier.attempt} (started {_ms(earlier.started_at, origin)}) was still executing until "
                    f"{_ms(earlier.end_or(seen.end_ms), origin)}",
                    job_id,
                )


def _overlaps(
    runs: list[Execution], slot_end: Callable[[Execution], int]
) -> Iterable[tuple[Execution, list[Execution]]]:
    """For each execution's start, the executions holding a slot at that instant (until ``slot_end``)."""
    ordered = sorted(runs, key=lambda e: e.started_at)
    ends = {id(e): slot_end(e) for e in ordered}
    for i, e in enumerate(ordered):
        if ends[id(e)] <= e.started_at:
            continue  # it holds no slot (an instant execution, or a late delivery of a finished attempt)
        yield e, [o for o in ordered[: i + 1] if o.started_at <= e.started_at < ends[id(o)]]


def concurrency(seen: Observed) -> Iterable[Violation]:
    """Per shard and per concurrency key, executions at once never exceed the limit in force meanwhile.

    A binding's slot ends as `Observed.slot_end` says; a key's only with the execution (`Observed.key_slot_end`).
    """
    by_shard: dict[str, list[Execution]] = defaultdict(list)
    by_key: dict[tuple[str, str], list[Execution]] = defaultdict(list)
    for e in seen.first_executions():
        job = seen.jobs.get(e.job_id)
        if job is None:
            continue
        by_shard[job.shard].append(e)
        if job.concurrency_key is not None:
            by_key[job.shard, job.concurrency_key].append(e)
    for shard, runs in by_shard.items():
        yield from _limit(seen, shard.split("#")[0], runs, "concurrency", shard, seen.slot_end)
    for (shard, key), runs in by_key.items():
        where = f"{shard} key {key}"
        yield from _limit(seen, shard.split("#")[0], runs, "per_key_concurrency", where, seen.key_slot_end)


def _limit(
    seen: Observed,
    binding: str,
    runs: list[Execution],
    field: str,
    where: str,
    slot_end: Callable[[Execution], int],
) -> Iterable[Violation]:
    for e, running in _overlaps(runs, slot_end):
        since = min(o.started_at for o in running)
        limits = [getattr(v, field) for v in seen.policies_between(binding, since, e.started_at)]
        if any(limit is None for limit in limits):
            continue  # a failed policy change left the limit unknown
        allowed = max(limits)
        if len(running) > allowed:
            jobs = ", ".join(sorted({f"{o.job_id}#{o.attempt}" for o in running}))
            yield Violation(
                "concurrency",
                f"{where}: {len(running)} executions at {_ms(e.started_at)} > {field} {allowed} ({jobs})",
                e.job_id,
            )


def rate(seen: Observed) -> Iterable[Violation]:
    """Dispatches of a rate-limited shard: in any window of one interval at most twice the bucket's tokens
    (a full bucket plus one interval's refill), counted where no fault can have bunched deliveries."""
    starts: dict[str, list[int]] = defaultdict(list)
    seen_attempts: set[tuple[str, int]] = set()
    for e in seen.executions:
        job = seen.jobs.get(e.job_id)
        if job is None or (e.job_id, e.attempt) in seen_attempts:
            continue
        seen_attempts.add((e.job_id, e.attempt))
        starts[job.shard].append(e.started_at)
    for shard, instants in starts.items():
        spec = seen.scenario.spec(shard.split("#")[0])
        if spec.rate is None:
            continue
        tokens, interval = spec.rate
        instants.sort()
        for i, start in enumerate(instants):
            if seen.shadowed(start) or seen.shadowed(start + interval):
                continue
            count = bisect.bisect_left(instants, start + interval) - i
            if count > 2 * tokens:
                yield Violation(
                    "rate",
                    f"{shard}: {count} dispatches within {interval} ms from "
                    f"{_ms(start)}; rate {tokens}/{interval} ms",
                )
                break


def no_lost_jobs(seen: Observed) -> Iterable[Violation]:
    """Every job (submitted or notice) is in its shard and terminal at the end."""
    for job_id in seen.submitted:
        if job_id not in seen.jobs:
            yield Violation("no_lost_jobs", f"{job_id} was enqueued but is not in its shard", job_id)
    for job in seen.jobs.values():
        if job.state not in _TERMINAL:
            yield Violation("no_lost_jobs", f"{job.id} is still {job.state} at the end", job.id)


def terminal_final(seen: Observed) -> Iterable[Violation]:
    """A terminal state changes only through a manual retry, and no execution starts after it otherwise."""
    for job_id, changes in seen.states_seen.items():
        retries = seen.submitted[job_id].retried_at if job_id in seen.submitted else []
        for (at, state), (later_at, later_state) in itertools.pairwise(changes):
            if state in _TERMINAL and not any(at <= r <= later_at for r in retries):
                yield Violation(
                    "terminal_final",
                    f"{job_id} went {state} -> {later_state} at {_ms(later_at)} with no retry",
                    job_id,
                )
    first_terminal: dict[str, int] = {}
    for job_id, changes in seen.states_seen.items():
        for at, state in changes:
            if state in _TERMINAL:
                first_terminal[job_id] = at
                break
    for e in seen.first_executions():  # a repeat of an attempt is a duplicate delivery (at-least-once)
        if _late_delivery(seen, e):
            continue
        at = first_terminal.get(e.job_id)
        retries = seen.submitted[e.job_id].retried_at if e.job_id in seen.submitted else []
        if at is not None and e.started_at > at and not any(r <= e.started_at for r in retries):
            yield Violation(
                "terminal_final",
                f"{e.job_id} attempt {e.attempt} started at {_ms(e.started_at)} after it was seen "
                f"terminal at {_ms(at)}",
                e.job_id,
            )


def _late_delivery(seen: Observed, e: Execution) -> bool:
    """An at-least-once attempt delivered after its shard had ended it: at-least-once has no claim, so the
    consumer runs it anyway (ADR-0060); an at-most-once one would be refused by its claim."""
    job = seen.jobs.get(e.job_id)
    over = seen.finished.get((e.job_id, e.attempt))
    return job is not None and job.guarantee == "at-least-once" and over is not None and over <= e.started_at


def notices(seen: Observed) -> Iterable[Violation]:
    """Each terminal transition the rules name yields exactly one notice job to each notice binding."""
    scenario = seen.scenario
    counts: dict[tuple[str, str, str], int] = defaultdict(int)
    for job in seen.jobs.values():
        if job.binding in scenario.notice_bindings:
            payload: Any = seen.payload_of(job)
            if isinstance(payload, dict) and "job_id" in payload:
                about: dict[str, Any] = payload  # pyright: ignore[reportUnknownVariableType]
                counts[job.binding, str(about["job_id"]), str(about.get("state"))] += 1
    for job in seen.jobs.values():
        if job.state not in _TERMINAL:
            continue
        retried = len(seen.submitted[job.id].retried_at) if job.id in seen.submitted else 0
        for target, wanted in _expected_notices(seen, job):
            got = counts.get((target, job.id, job.state), 0)
            ok = got == wanted if retried == 0 else wanted <= got <= retried + 1
            if not ok:
                yield Violation(
                    "notices",
                    f"{job.id} ended {job.state}: {got} notice(s) to {target}, expected "
                    f"{wanted}{'' if retried == 0 else f' (+ up to {retried} for retries)'}",
                    job.id,
                )


def _expected_notices(seen: Observed, job: JobTruth) -> list[tuple[str, int]]:
    scenario = seen.scenario
    expected: list[tuple[str, int]] = []
    if scenario.on_failure is not None and job.binding != scenario.on_failure:
        expected.append((scenario.on_failure, 1 if job.state in _FAILURE_STATES else 0))
    if scenario.on_settled is not None and job.binding not in scenario.notice_bindings:
        expected.append((scenario.on_settled, 1 if job.state in scenario.settled_states else 0))
    return expected


def completed_ran(seen: Observed) -> Iterable[Violation]:
    """A COMPLETED job's last attempt executed and answered success."""
    done = {(e.job_id, e.attempt) for e in seen.executions if e.outcome == "ok"}
    for job in seen.jobs.values():
        if job.state == "COMPLETED" and (job.id, job.attempts) not in done:
            yield Violation(
                "completed_ran", f"{job.id} is COMPLETED but attempt {job.attempts} never succeeded", job.id
            )


def read_model(seen: Observed) -> Iterable[Violation]:
    """The D1 read model holds every job with the state and attempts its shard holds."""
    for job in seen.jobs.values():
        row = seen.read_model.get(job.id)
        if row != (job.state, job.attempts):
            yield Violation(
                "read_model", f"{job.id}: read model {row}, shard ({job.state!r}, {job.attempts})", job.id
            )
    for job_id in seen.read_model.keys() - seen.jobs.keys():
        yield Violation("read_model", f"{job_id} is in the read model but in no shard", job_id)


def fairness(seen: Observed) -> Iterable[Violation]:
    """No dispatchable job waits more than `FAIRNESS_WAIT_MS` while its shard has a free slot and its key a free
    one (instants shortly after a fault, under a pause or an unknown policy, while held by a rule
    (`_held_by_rule`), and rate-limited bindings aside)."""
    busy = _Occupancy(seen)
    first_start: dict[str, int] = {}
    for e in seen.executions:
        first_start.setdefault(e.job_id, e.started_at)
    for job_id, sub in seen.submitted.items():
        job = seen.jobs.get(job_id)
        if job is None or sub.rescheduled or sub.deduplicated:
            continue
        spec = seen.scenario.spec(job.binding)
        if spec.rate is not None or spec.per_key_rate is not None:
            continue
        until = first_start.get(job_id) or _wait_end(seen, job, sub)
        held = _held_by_rule(seen, job, sub)
        starved = 0
        step = 100
        for at in range(sub.ready_at + step, until, step):
            if any(start <= at < end for start, end in held):
                continue
            if busy.free(job, at) and not seen.shadowed(at):
                starved += step
        if starved > FAIRNESS_WAIT_MS:
            yield Violation(
                "fairness",
                f"{job_id} (key {job.concurrency_key}) waited {starved / 1000:.1f}s while {job.shard} had a free "
                f"slot and its key was free (ready {_ms(sub.ready_at)}, started "
                f"{_ms(until) if job_id in first_start else 'never'})",
                job_id,
            )


def _held_by_rule(seen: Observed, job: JobTruth, sub: Submitted) -> list[tuple[int, int]]:
    """The intervals in which the rules keep a job from dispatch although it waits: ended, until a manual retry
    brings it back, and for an at-most-once job until the hard end of the attempt that ended (ADR-0051).

    A retry counts only when the job had ended before it (a retry of a live job changes nothing): it was last
    seen terminal before it, or the answer said the retry applied (the simulator polls states, and a job can end
    and be retried between two polls). The job is held from the end of the attempt that ended it (from the
    attempt log, else when it was seen terminal). An at-most-once retry is scheduled at ``max(now, run_after)``,
    ``run_after`` being the claim plus `MAX_INVOCATION_MS`; the claim falls between the attempt's dispatch and its
    end, so the end bounds it.
    """
    changes = seen.states_seen.get(job.id, [])
    held: list[tuple[int, int]] = []
    for retry in sorted(sub.retried_at):
        before = [(at, state) for at, state in changes if at <= retry]
        seen_ended = bool(before) and before[-1][1] in _TERMINAL
        if not seen_ended and retry not in sub.retries_applied:
            continue
        ended = [(at, key) for key, at in seen.finished.items() if key[0] == job.id and at <= retry]
        last = max(ended, default=None)
        start = before[-1][0] if seen_ended else retry
        if last is not None:
            start = min(start, last[0])
        until = retry
        if job.guarantee == "at-most-once" and last is not None and last[1] in seen.dispatched:
            until = max(retry, last[0] + MAX_INVOCATION_MS)  # the attempt may have been claimed
        held.append((start, until))
    return held


def _wait_end(seen: Observed, job: JobTruth, sub: Submitted) -> int:
    """When a job that never started stopped waiting: expired, cancelled, or seen terminal (else the end)."""
    ends = [seen.end_ms, *sub.cancel_requested_at]
    if job.expires_at is not None:
        ends.append(job.expires_at)
    ends += [at for at, state in seen.states_seen.get(job.id, []) if state in _TERMINAL][:1]
    return min(ends)


class _Occupancy:
    """Executions at an instant, per shard and per (shard, key) with the key slots shards kept (ADR-0185), by
    bisecting sorted starts and ends."""

    def __init__(self, seen: Observed) -> None:
        self.seen = seen
        shard: dict[str, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
        key: dict[tuple[str, str | None], tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
        for e in seen.first_executions():
            job = seen.jobs.get(e.job_id)
            if job is None:
                continue
            shard[job.shard][0].append(e.started_at)
            shard[job.shard][1].append(seen.slot_end(e))
            key[job.shard, job.concurrency_key][0].append(e.started_at)
            key[job.shard, job.concurrency_key][1].append(seen.key_slot_end(e))
        for (job_id, _), (held_key, until) in seen.key_holds.items():
            # A kept slot (ADR-0185) began when the shard gave the attempt up, at least its last sign of life, so
            # no later than until - MAX_INVOCATION_MS: counting it from then never reads a held key as free.
            bucket = key[job_id.split(":", 1)[0], held_key]
            bucket[0].append(until - MAX_INVOCATION_MS)
            bucket[1].append(until)
        for bucket in [*shard.values(), *key.values()]:
            bucket[0].sort()
            bucket[1].sort()
        self.shard, self.key = shard, key

    @staticmethod
    def _count(bucket: tuple[list[int], list[int]], at: int) -> int:
        return bisect.bisect_right(bucket[0], at) - bisect.bisect_right(bucket[1], at)

    def free(self, job: JobTruth, at: int) -> bool:
        policy = self.seen.policy_at(job.binding, at)
        if policy.paused is not False or policy.concurrency is None or policy.per_key_concurrency is None:
            return False
        if self._count(self.shard[job.shard], at) >= policy.concurrency:
            return False
        if job.concurrency_key is None:
            return True
        return self._count(self.key[job.shard, job.concurrency_key], at) < policy.per_key_concurrency


_NODE_TERMINAL: Final = frozenset({"COMPLETED", "FAILED", "CANCELLED", "STALLED", "SKIPPED"})
_DEADLINE: Final = "run deadline exceeded:"


def runs(seen: Observed) -> Iterable[Violation]:
    """Every run ends: each run the simulator started and each run of the read model (child runs and runs a
    schedule started too) settled with every node terminal, in the state its nodes imply (the production
    `run_state`), and no Run object still holds a RUNNING run."""
    for run_id, run in sorted(seen.runs.items()):
        if run.state is None:
            yield Violation("runs", f"run {run_id} never reached the read model")
            continue
        open_nodes = [f"{n.id} {n.state}" for n in run.nodes if n.state not in _NODE_TERMINAL]
        if open_nodes:
            yield Violation("runs", f"run {run_id} ({run.state}) has unfinished nodes: {open_nodes[:5]}")
        views = [
            NodeView(
                id=n.id,
                state=n.state,
                parent=n.parent,
                origin=cast(NodeOrigin, n.origin),
                container=n.container,
                after=n.after,
            )
            for n in run.nodes
        ]
        expected = run_state(views)
        # A deadline fails a run whatever its nodes did; a cancel (of the run, or of its parent) cancels it.
        excused = run.state == "CANCELLED" or (run.state == "FAILED" and run_id in seen.deadline_runs)
        if run.state == "RUNNING" or (not open_nodes and run.state != expected and not excused):
            yield Violation("runs", f"run {run_id} is {run.state}, its nodes say {expected}")
    for obj in seen.run_objects:
        if obj.state == "RUNNING":
            yield Violation("runs", f"the Run object of {obj.name} still holds a RUNNING run")


def run_nodes(seen: Observed) -> Iterable[Violation]:
    """Results and summaries match the executions: a node with a job ended as its job did (COMPLETED with a
    COMPLETED job, whose last attempt succeeded: `completed_ran`), a node a deadline stopped before its job ran
    has that job CANCELLED, and a fan-out's summary counts its children as they ended."""
    for run_id, run in sorted(seen.runs.items()):
        by_parent: dict[str, list[NodeTruth]] = defaultdict(list)
        for n in run.nodes:
            if n.parent is not None:
                by_parent[n.parent].append(n)
        for n in run.nodes:
            if n.job_id is not None and n.state in _NODE_TERMINAL:
                job = seen.jobs.get(n.job_id)
                job_state = None if job is None else job.state
                stopped = (
                    n.state == "FAILED" and (n.error or "").startswith(_DEADLINE) and job_state == "CANCELLED"
                )
                if job_state != n.state and not stopped:
                    yield Violation(
                        "run_nodes",
                        f"run {run_id} node {n.id} is {n.state}, its job {n.job_id} is {job_state}",
                        n.job_id,
                    )
            if n.container and n.state == "COMPLETED":
                kids = [k for k in by_parent.get(n.id, []) if k.origin == "fanOut"]
                done = sum(1 for k in kids if k.state == "COMPLETED")
                expected = {"total": len(kids), "succeeded": done, "failed": len(kids) - done}
                got = None if n.result is None else json.loads(n.result)
                if got != expected:
                    yield Violation(
                        "run_nodes", f"run {run_id} fan-out {n.id} sums {got}, its children {expected}"
                    )


def node_once(seen: Observed) -> Iterable[Violation]:
    """No node runs twice unless the rules allow it: the executions of an at-most-once node never overlap, across
    every job the node had (a resume gives it a new job, which waits for the hold of a stalled one)."""
    by_node: dict[tuple[str, str], list[Execution]] = defaultdict(list)
    for e in seen.executions:
        job = seen.jobs.get(e.job_id)
        if job is not None and job.guarantee == "at-most-once" and job.run_id is not None and job.node_id:
            by_node[job.run_id, job.node_id].append(e)
    for (run_id, node_id), runs_ in sorted(by_node.items()):
        ordered = sorted(runs_, key=lambda e: e.started_at)
        for earlier, later in itertools.pairwise(ordered):
            if later.job_id != earlier.job_id and later.started_at < earlier.end_or(seen.end_ms):
                yield Violation(
                    "node_once",
                    f"run {run_id} node {node_id}: job {later.job_id} started at "
                    f"{_ms(later.started_at)} while job {earlier.job_id} still executed (until "
                    f"{_ms(earlier.end_or(seen.end_ms))})",
                    later.job_id,
                )


def run_storage(seen: Observed) -> Iterable[Violation]:
    """No storage left behind after a sweep: a Run object holds tables only while its run is kept (running, or
    settled within its retention)."""
    sweep_after, failed_keep = seen.run_keep_ms
    for obj in seen.run_objects:
        if not obj.tables:
            continue
        if obj.state is None:
            yield Violation(
                "run_storage", f"the Run object of {obj.name} holds {list(obj.tables)} but no run"
            )
        elif obj.state != "RUNNING" and obj.updated_at is not None:
            keep = failed_keep if obj.state == "FAILED" else sweep_after
            if obj.updated_at + keep + 5_000 < seen.end_ms:
                yield Violation(
                    "run_storage",
                    f"the Run object of {obj.name} ({obj.state} since {_ms(obj.updated_at)}) was not swept",
                )


INVARIANTS: Final[dict[str, Callable[[Observed], Iterable[Violation]]]] = {
    "at_most_once": at_most_once,
    "concurrency": concurrency,
    "rate": rate,
    "no_lost_jobs": no_lost_jobs,
    "terminal_final": terminal_final,
    "notices": notices,
    "completed_ran": completed_ran,
    "read_model": read_model,
    "fairness": fairness,
    "runs": runs,
    "run_nodes": run_nodes,
    "node_once": node_once,
    "run_storage": run_storage,
    "step_once": step_once,
    "sleep_wake": sleep_wake,
    "event_once": event_once,
    "event_timeout": event_timeout,
}
"""Every invariant by name, in the order they are checked."""


def check(seen: Observed, names: Iterable[str]) -> list[Violation]:
    """The violations of the invariants ``names`` (each a key of `INVARIANTS`)."""
    found: list[Violation] = []
    for name in names:
        found.extend(INVARIANTS[name](seen))
    return found
