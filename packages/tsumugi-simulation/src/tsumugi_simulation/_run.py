"""Run one seeded simulation: start the system on a virtual clock, drive a random workload under random faults,
let it settle, read the shards and the read model, and check the invariants."""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from tsumugi_client import create_client
from tsumugi_core.ids import LOCAL_ID_ENTROPY_BYTES, new_local_id
from tsumugi_core.options import DEFAULTS, EnqueueItem
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime
from tsumugi_performer import entrypoint as performer_time
from tsumugi_scheduler import timing as scheduler_time
from tsumugi_simulation._chaos import Chaos
from tsumugi_simulation._flows import flow_input
from tsumugi_simulation._invariants import INVARIANTS, check
from tsumugi_simulation._ledger import Ledger, PerformerFaults, record_executions
from tsumugi_simulation._observed import (
    START_MS,
    JobTruth,
    NodeTruth,
    Observed,
    PolicyView,
    RunObjectTruth,
    RunTruth,
    Submitted,
    Violation,
)
from tsumugi_simulation._shards import attempt_log, key_holds, run_objects, shard_rows, shard_states
from tsumugi_simulation._steplog import EventSend, StepLog, use_step_log
from tsumugi_simulation._system import (
    EVENT_KEYS,
    RUN_FAILED_RETENTION_MS,
    RUN_SWEEP_AFTER_MS,
    SystemUnderTest,
    builtin_system,
    random_scenario,
)
from tsumugi_simulation._workload import enqueue_options, policy_patch

__all__ = ["SimulationConfig", "SimulationReport", "simulate"]


@dataclass(frozen=True)
class SimulationConfig:
    """The size and mix of one simulation (the defaults are the CI's small runs).

    Attributes:
        jobs: jobs enqueued during the active phase (a hot-key burst adds ``burst_size`` more).
        active_ms: virtual time during which jobs arrive, operators act and faults strike.
        step_ms: the simulator acts every step (enqueue, operate, arm a fault) and then advances the clock.
        fault_rate: chance per step that an infrastructure fault is armed.
        operation_rate: chance per step of an operator action (cancel, retry, reschedule, policy, pause).
        performer_raise_rate / performer_hang_rate: chance that an execution raises / runs past its deadline.
        burst_chance: chance that the seed adds a burst of ``burst_size`` jobs on one concurrency key followed
            by one job on another key, after the faults stop (the starvation probe of issue 10 item 2).
        settle_ms: the most virtual time allowed after the active phase for every job to finish.
        invariants: the invariants to check (names of `INVARIANTS`).
    """

    jobs: int = 30
    active_ms: int = 30_000
    step_ms: int = 250
    fault_rate: float = 0.06
    operation_rate: float = 0.04
    performer_raise_rate: float = 0.03
    performer_hang_rate: float = 0.03
    burst_chance: float = 0.0
    burst_size: int = 260
    runs: int = 3
    """Flow runs started among the jobs (built-in system only): ``simflow``, ``simsub`` (a subflow and spawns)
    or ``simnest`` (nested subflows), some with a deadline, some under a run id started before."""
    run_operation_rate: float = 0.05
    """Chance per step of a run operation: cancel a run, resume one, retry a node's job through the job API."""
    resume_rate: float = 0.3
    """Chance per step that each run seen FAILED is resumed (soon after it failed, while a stalled node's
    execution may still run)."""
    event_rate: float = 0.03
    """Chance per step that the simulator sends event ``sim`` to one of `EVENT_KEYS` (built-in system only)."""
    schedule_every_ms: int | None = 6_000
    """A schedule starting ``simflow`` runs this often with ``overlap: "skip"`` during the active phase (None:
    none)."""
    settle_ms: int = 40 * 60_000
    invariants: tuple[str, ...] = tuple(INVARIANTS)


@dataclass
class SimulationReport:
    """What one seed did and found."""

    seed: int
    jobs: int = 0
    """Jobs in the shards at the end (notices included)."""
    executions: int = 0
    faults: Counter[str] = field(default_factory=Counter[str])
    operations: Counter[str] = field(default_factory=Counter[str])
    violations: list[Violation] = field(default_factory=list[Violation])
    steps: Counter[str] = field(default_factory=Counter[str])
    """What the step jobs did (`StepLog.counts`)."""
    virtual_ms: int = 0
    wall_s: float = 0.0
    replay: str = ""

    @property
    def ok(self) -> bool:
        """True when no invariant was broken."""
        return not self.violations

    def summary(self) -> str:
        """One line per violation, then the command that replays the seed."""
        lines = [f"seed {self.seed}: {len(self.violations)} violation(s)"]
        lines += [f"  {v}" for v in self.violations[:20]]
        if len(self.violations) > 20:
            lines.append(f"  ... {len(self.violations) - 20} more")
        lines.append(f"  replay: {self.replay}")
        return "\n".join(lines)


_LONGEST_TIMEOUT_MS: Final = DEFAULTS.timeout_ms
"""The workload's longest attempt timeout: the default (explicit ones are shorter)."""
_SETTLED: Final = frozenset({"COMPLETED", "FAILED", "CANCELLED", "STALLED"})
BURST_WORK_MS: Final = 200
"""How long each job of a hot-key burst works (long enough that a starved job's wait stands out)."""


class _SeededIds:
    """Job ids from the seed, so a replay makes the same ids (and so the same dispatch order among ties)."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def new_local_id(self) -> str:
        return new_local_id(self._rng.randbytes(LOCAL_ID_ENTROPY_BYTES))


def _scratch_folder(seed: int) -> Path:
    # A memory-backed folder when there is one: the runtime's SQLite files are opened and closed often.
    shm = Path("/dev/shm")
    base = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix=f"tsumugi-sim-{seed}-", dir=base))


class _Driver:
    """One simulation in progress."""

    def __init__(
        self,
        seed: int,
        config: SimulationConfig,
        system: SystemUnderTest,
        runtime: LocalRuntime,
        clock: VirtualClock,
        ledger: Ledger,
        shard_class: str,
    ) -> None:
        self.seed, self.config, self.system = seed, config, system
        self.runtime, self.clock, self.ledger = runtime, clock, ledger
        self.rng = random.Random(f"workload-{seed}")
        self.client = create_client()
        self.producer = runtime.env(system.producer)
        self.shard_class = shard_class
        self.chaos = Chaos(runtime, system, random.Random(f"faults-{seed}"), shard_class)
        self.seen = Observed(scenario=system.scenario, executions=ledger.executions, end_ms=START_MS)
        # A lost dispatch holds its slot until the reaper gives it up: the longest timeout plus the longest grace.
        grace = max(spec.reaper_grace_ms for spec in system.scenario.bindings)
        self.seen.shadow_ms = _LONGEST_TIMEOUT_MS + grace + 10_000
        self.operations: Counter[str] = Counter()
        self.run_ids: list[str] = []
        self.run_rng = random.Random(f"runs-{seed}")
        self.failed_runs: list[str] = []
        self.seq = 0
        self.event_rng = random.Random(f"events-{seed}")

    # -- acting -------------------------------------------------------------------------------------------

    async def enqueue(self, binding: str, options: dict[str, Any], payload: Any = None) -> None:
        self.seq += 1
        now = self.clock.now_ms()
        body = self.system.payload(binding, self.rng, self.seq) if payload is None else payload
        try:
            job_id = await self.client.enqueue(self.producer, binding=binding, payload=body, **options)
        except Exception:
            self.operations["enqueue_failed"] += 1
            return
        self.operations["enqueue"] += 1
        if job_id in self.seen.submitted:
            self.seen.submitted[job_id].deduplicated = True
            return
        ready = max(now + int(options.get("delay_ms") or 0), int(options.get("run_at") or 0))
        self.seen.submitted[job_id] = Submitted(job_id=job_id, enqueued_at=now, ready_at=ready)
        self.seen.submitted[job_id].deduplicated = "unique_key" in options

    async def rest(self, method: str, path: str, body: Any = None) -> int:
        response = await self.runtime.fetch(
            self.system.scheduler,
            f"http://scheduler{path}",
            method=method,
            headers={"authorization": f"Bearer {self.system.token}", "content-type": "application/json"},
            body=None if body is None else json.dumps(body),
        )
        return response.status

    async def operate(self) -> None:
        rng = self.rng
        kind = rng.choice(("cancel", "retry", "reschedule", "policy", "pause", "resume", "reset"))
        known = list(self.seen.submitted)
        try:
            if kind in ("cancel", "retry", "reschedule"):
                if not known:
                    return
                await self._job_operation(kind, self.seen.submitted[rng.choice(known)])
            else:
                await self._policy_operation(kind, rng.choice(self.system.work_bindings))
        except Exception:
            self.operations[f"{kind}_failed"] += 1

    async def _job_operation(self, kind: str, sub: Submitted) -> None:
        via_rest = self.rng.random() < 0.5
        path = f"/api/jobs/{urllib.parse.quote(sub.job_id, safe='')}/{kind}"
        sent = self.clock.now_ms()
        if kind == "retry":
            sub.retried_at.append(sent)  # it may apply even when the answer is lost
        if kind == "reschedule":
            sub.rescheduled = True
        if kind == "cancel":
            sub.cancel_requested_at.append(self.clock.now_ms())
        if via_rest:
            body = {"delayMs": self.rng.choice((0, 2_000))} if kind == "reschedule" else None
            status = await self.rest("POST", path, body)
            self.operations[f"{kind}_rest_{status}"] += 1
            if kind == "retry" and status == 200:
                sub.retries_applied.append(sent)
            return
        if kind == "cancel":
            await self.client.cancel(self.producer, sub.job_id)
        elif kind == "retry":
            await self.client.retry(self.producer, sub.job_id)
            sub.retries_applied.append(sent)
        else:
            await self.client.reschedule(self.producer, sub.job_id, delay_ms=self.rng.choice((0, 2_000)))
        self.operations[kind] += 1

    async def _policy_operation(self, kind: str, binding: str) -> None:
        now = self.clock.now_ms()
        current = self.seen.policy_at(binding, now)
        if kind == "reset":
            path, body, after = f"/api/bindings/{binding}/policy/reset", None, self.seen.code_policy(binding)
        else:
            patch = {"paused": kind == "pause"} if kind in ("pause", "resume") else policy_patch(self.rng)
            path, body = f"/api/bindings/{binding}/policy", patch
            after = PolicyView(
                patch.get("concurrency", current.concurrency),
                patch.get("per_key_concurrency", current.per_key_concurrency),
                patch.get("paused", current.paused),
            )
        timeline = self.seen.policies.setdefault(binding, [])
        # Until the answer arrives the change may have reached some shards: the limits are unknown meanwhile.
        timeline.append((now, PolicyView(None, None, None)))
        status = await self.rest("POST", path, body)
        self.operations[f"{kind}_{status}"] += 1
        timeline.append((self.clock.now_ms(), after if status == 200 else PolicyView(None, None, None)))

    async def reset_policies(self) -> None:
        for binding in self.system.work_bindings:
            if binding in self.seen.policies:
                await self._policy_operation("reset", binding)

    # -- observing ----------------------------------------------------------------------------------------

    def shard_rows(self) -> list[dict[str, Any]]:
        return shard_rows(self.runtime.namespace(self.system.scheduler, self.shard_class))

    def observe(self) -> list[tuple[str, str]]:
        """Note each job's state where it changed since the last look; answers every ``(id, state)``."""
        now = self.clock.now_ms()
        namespace = self.runtime.namespace(self.system.scheduler, self.shard_class)
        states = shard_states(namespace)
        for job_id, attempt, key, until in key_holds(namespace):
            self.seen.key_holds[job_id, attempt] = (key, until)
        seen = self.seen.states_seen
        for job_id, state in states:
            changes = seen.get(job_id)
            if changes is None:
                seen[job_id] = [(now, state)]
            elif changes[-1][1] != state:
                changes.append((now, state))
        self.chaos.observe()
        return states

    def settled(self, states: list[tuple[str, str]]) -> bool:
        running = any(e.ended_at is None for e in self.ledger.executions)
        return not running and all(state in _SETTLED for _, state in states)

    async def read_model(self) -> dict[str, tuple[str, int]]:
        db = self.runtime.d1(self.system.database)
        answer = await db.prepare("SELECT id, state, attempts FROM job").all()
        return {str(r["id"]): (str(r["state"]), int(r["attempts"])) for r in answer.results}

    # -- phases -------------------------------------------------------------------------------------------

    async def send_event(self) -> None:
        """Send event ``sim`` to one of `EVENT_KEYS`; the step log keeps whether it was acknowledged."""
        log = self.seen.steps
        key, n, at = self.event_rng.choice(EVENT_KEYS), len(log.sends), self.clock.now_ms()
        try:
            await self.client.send_event(self.producer, "sim", key=key, payload={"n": n})
        except Exception:  # lost on the way: it may or may not have been kept
            log.sends.append(EventSend(key, at, n, acknowledged=False))
            self.operations["event_failed"] += 1
            return
        log.sends.append(EventSend(key, at, n, acknowledged=True))
        self.operations["event"] += 1

    async def start_run(self, rng: random.Random) -> None:
        """Start a run whose nodes do the seed's kind of work (their own RNG: the jobs' stay as they were); now
        and then under a run id started before (its object may have been swept since) or with a deadline."""
        flow = rng.choice(("simflow", "simsub", "simnest"))
        self.seq += 1
        body: dict[str, Any] = {
            "flow": flow,
            "input": flow_input(flow, rng, self.system.payload, -1_000 * self.seq),
        }
        earlier = [r for r in dict.fromkeys(self.run_ids) if r.startswith(f"{flow}:")]
        if earlier and rng.random() < 0.3:
            body["id"] = rng.choice(earlier).partition(":")[2]
        if rng.random() < 0.2:
            body["deadlineMs"] = rng.choice((1_500, 4_000, 9_000))
        try:
            run_id = str(await self.runtime.env(self.system.producer).TSUMUGI.start_run(body))
        except Exception:  # a fault on the way: the run may or may not exist, as for a lost enqueue
            self.operations["run_start_failed"] += 1
            return
        self.operations[f"run_start_{flow}{'_again' if 'id' in body else ''}"] += 1
        self.run_ids.append(run_id)
        if "deadlineMs" in body:
            self.seen.deadline_runs.add(run_id)

    async def run_operation(self) -> None:
        """Cancel a run, resume one, or retry one of a run's node jobs through the job API (refused: a node's job
        runs again only through its run, ADR-0116)."""
        rng = self.run_rng
        kind = rng.choice(("cancel_run", "retry_run", "retry_node_job"))
        known = list(dict.fromkeys(self.run_ids))
        if not known:
            return
        run_id = rng.choice(known)
        quoted = urllib.parse.quote(run_id, safe="")
        try:
            if kind == "retry_node_job":
                db = self.runtime.d1(self.system.database)
                rows = (
                    await db.prepare(
                        "SELECT job_id FROM run_node WHERE run_id = ? AND job_id IS NOT NULL AND state"
                        " IN ('FAILED', 'STALLED')"
                    )
                    .bind(run_id)
                    .all()
                )
                jobs = [str(r["job_id"]) for r in rows.results]
                if not jobs:
                    return
                try:
                    await self.client.retry(self.producer, rng.choice(jobs))
                except Exception:  # refused (409), or lost on the way
                    self.operations["retry_node_job_refused"] += 1
                    return
                self.operations["retry_node_job_ok"] += 1
                return
            if kind == "cancel_run":
                self.seen.deadline_runs.add(
                    run_id
                )  # a run cancelled while it drains a deadline may end FAILED
            status = await self.rest("POST", f"/api/runs/{quoted}/{kind.removesuffix('_run')}")
            self.operations[f"{kind}_{status}"] += 1
        except Exception:
            self.operations[f"{kind}_failed"] += 1

    async def resume_failed_runs(self) -> None:
        """Resume runs seen FAILED, each with `SimulationConfig.resume_rate` per step."""
        db = self.runtime.d1(self.system.database)
        try:
            rows = await db.prepare(
                "SELECT id FROM run WHERE state = 'FAILED' AND parent_run_id IS NULL"
            ).all()
        except Exception:  # a D1 outage: next step
            return
        for row in rows.results:
            if self.run_rng.random() < self.config.resume_rate:
                status = await self.rest(
                    "POST", f"/api/runs/{urllib.parse.quote(str(row['id']), safe='')}/retry"
                )
                self.operations[f"resume_{status}"] += 1

    async def schedule(self, create: bool) -> None:
        """Create (or delete) the schedule that starts ``simflow`` runs with ``overlap: "skip"``."""
        every = self.config.schedule_every_ms
        if every is None or not self.system.builtin:
            return
        if create:
            body = {
                "name": "simsched",
                "flow": "simflow",
                "everyMs": every,
                "overlap": "skip",
                "input": flow_input(
                    "simflow", random.Random(f"schedule-{self.seed}"), self.system.payload, -7
                ),
            }
            status = await self.rest("POST", "/api/schedules", body)
        else:
            status = await self.rest("DELETE", "/api/schedules/simsched")
        self.operations[f"schedule_{'create' if create else 'delete'}_{status}"] += 1

    async def runs_settled(self) -> bool:
        db = self.runtime.d1(self.system.database)
        answer = await db.prepare("SELECT id, state FROM run").all()
        states = {str(r["id"]): str(r["state"]) for r in answer.results}
        if any(state == "RUNNING" for state in states.values()):
            return False
        return all(run_id in states for run_id in self.run_ids)

    async def observe_runs(self) -> None:
        db = self.runtime.d1(self.system.database)
        answer = await db.prepare("SELECT id, state FROM run").all()
        states: dict[str, str | None] = {str(r["id"]): str(r["state"]) for r in answer.results}
        for run_id in self.run_ids:
            states.setdefault(run_id, None)
        for run_id, state in sorted(states.items()):
            nodes = (
                await db.prepare(
                    "SELECT node_id, state, parent, origin, container, after, job_id, result, error "
                    "FROM run_node WHERE run_id = ? ORDER BY position"
                )
                .bind(run_id)
                .all()
            )
            self.seen.runs[run_id] = RunTruth(
                id=run_id,
                state=state,
                nodes=tuple(
                    NodeTruth(
                        id=str(n["node_id"]),
                        state=str(n["state"]),
                        parent=n["parent"],
                        origin=str(n["origin"]),
                        container=bool(n["container"]),
                        after=tuple(json.loads(str(n["after"]))),
                        job_id=n["job_id"],
                        result=n["result"],
                        error=n["error"],
                    )
                    for n in nodes.results
                ),
            )
        namespace = self.runtime.namespace(self.system.scheduler, "TsumugiRun")
        self.seen.run_objects = [
            RunObjectTruth(
                name=name,
                tables=tuple(tables),
                state=None if row is None else str(row["state"]),
                updated_at=None if row is None else int(row["updated_at"]),
            )
            for name, tables, row in run_objects(namespace)
        ]
        self.seen.run_keep_ms = (RUN_SWEEP_AFTER_MS, RUN_FAILED_RETENTION_MS)

    async def active_phase(self) -> None:
        config, rng = self.config, self.rng
        steps = max(1, config.active_ms // config.step_ms)
        arrivals = sorted(rng.randrange(steps) for _ in range(config.jobs))
        run_rng = self.run_rng
        flows = self.system.builtin
        run_steps = sorted(run_rng.randrange(steps) for _ in range(config.runs if flows else 0))
        if flows:
            await self.schedule(create=True)
        for step in range(steps):
            while run_steps and run_steps[0] == step:
                run_steps.pop(0)
                await self.start_run(run_rng)
            if flows and run_rng.random() < config.run_operation_rate:
                await self.run_operation()
            if flows and step % 2 == 0:
                await self.resume_failed_runs()
            while arrivals and arrivals[0] == step:
                arrivals.pop(0)
                binding = rng.choice(self.system.work_bindings)
                await self.enqueue(binding, enqueue_options(rng, self.clock.now_ms()))
            if rng.random() < config.operation_rate:
                await self.operate()
            if flows and self.event_rng.random() < config.event_rate:
                await self.send_event()
            if self.chaos.draw() < config.fault_rate:
                self.chaos.arm_random()
            await self.clock.advance(config.step_ms)
            if step % 4 == 0:
                self.observe()

    async def quiet_phase(self) -> None:
        self.chaos.stop()
        self.ledger.enabled = False
        self.observe()
        await self.reset_policies()
        if self.system.builtin:
            await self.schedule(create=False)
        if random.Random(f"burst-{self.seed}").random() < self.config.burst_chance:
            for _ in range(self.seen.shadow_ms // 5_000):
                await self.clock.advance(5_000)
                self.observe()
            await self.burst()
        deadline = self.clock.now_ms() + self.config.settle_ms
        while self.clock.now_ms() < deadline:
            await self.clock.advance(5_000)
            if self.settled(self.observe()) and await self.runs_settled():
                break
        await self.clock.advance(60_000)  # the read model's outbox catches up
        self.observe()

    async def burst(self) -> None:
        """Many jobs on one concurrency key, then one on another: the second must not wait for the first."""
        binding = self.system.work_bindings[0]
        hot: list[EnqueueItem] = []
        for i in range(self.config.burst_size):
            payload = self._burst_payload(binding, i, -1)
            hot.append(EnqueueItem(binding=binding, payload=payload, concurrency_key="hot", max_attempts=1))
        now = self.clock.now_ms()
        ids = await self.client.enqueue_many(self.producer, hot)
        for job_id in ids:
            self.seen.submitted[job_id] = Submitted(job_id=job_id, enqueued_at=now, ready_at=now)
        await self.clock.advance(1)  # strictly after the burst: ties in creation time are ordered by id
        cold = self._burst_payload(binding, self.config.burst_size, -2)
        await self.enqueue(binding, {"concurrency_key": "cold", "max_attempts": 1}, payload=cold)
        self.operations["burst"] += 1

    def _burst_payload(self, binding: str, i: int, seq: int) -> Any:
        if self.system.builtin:
            return {"work_ms": BURST_WORK_MS, "beat_ms": None, "fail": None, "seq": seq}
        return self.system.payload(binding, random.Random(i), i)

    async def finish(self, invariants: Sequence[str]) -> tuple[list[Violation], int]:
        self.observe()
        rows = self.shard_rows()
        self.seen.end_ms = self.clock.now_ms()
        self.seen.jobs = {
            str(r["id"]): JobTruth(
                id=str(r["id"]),
                binding=str(r["binding"]),
                state=str(r["state"]),
                attempts=int(r["attempts"]),
                guarantee=str(r["guarantee"]),
                concurrency_key=r["concurrency_key"],
                payload=str(r["payload"]),
                timeout_ms=int(r["timeout_ms"]),
                expires_at=r["expires_at"],
                run_id=r["run_id"],
                node_id=r["node_id"],
            )
            for r in rows
        }
        self.seen.fault_times = sorted(self.chaos.strike_times)
        namespace = self.runtime.namespace(self.system.scheduler, self.shard_class)
        self.seen.dispatched, self.seen.finished = attempt_log(namespace)
        self.seen.read_model = await self.read_model()
        await self.observe_runs()
        return check(self.seen, invariants), len(rows)


def default_replay(seed: int, config: SimulationConfig) -> str:
    """The command that replays a seed of the built-in system with ``config``'s sizes."""
    parts = [f"uv run python bench/simulate.py --seed {seed}", f"--jobs {config.jobs}"]
    parts.append(f"--active-ms {config.active_ms}")
    if config.burst_chance:
        parts.append(f"--burst-chance {config.burst_chance}")
    return " ".join(parts)


async def simulate(
    seed: int,
    config: SimulationConfig | None = None,
    *,
    system: Callable[[random.Random], SystemUnderTest] | SystemUnderTest | None = None,
    data_dir: Path | str | None = None,
    shard_class: str = "TsumugiJobShard",
    replay: Callable[[int, SimulationConfig], str] = default_replay,
) -> SimulationReport:
    """Run seed ``seed`` and check its invariants; never raises for a broken invariant (see the report).

    ``system``: None for the built-in system (random policies per seed), a `SystemUnderTest` of your own Workers,
    or a function of the seed's `random.Random` making one. ``data_dir``: where the runtime keeps its files (a
    fresh temporary folder, removed afterwards, when None).
    """
    config = config or SimulationConfig()
    started = time.perf_counter()
    setup = random.Random(f"system-{seed}")
    if system is None:
        chosen = builtin_system(random_scenario(setup))
    elif isinstance(system, SystemUnderTest):
        chosen = system
    else:
        chosen = system(setup)
    folder = _scratch_folder(seed) if data_dir is None else Path(data_dir)
    clock = VirtualClock(START_MS)
    old_scheduler, old_performer = (
        scheduler_time.use_time_source(clock),
        performer_time.use_time_source(clock),
    )
    old_entropy = scheduler_time.use_entropy(
        _SeededIds(random.Random(f"ids-{seed}")), random.Random(f"jitter-{seed}")
    )
    ledger = Ledger(
        faults=PerformerFaults(
            raise_rate=config.performer_raise_rate,
            hang_rate=config.performer_hang_rate,
            exempt=chosen.scenario.notice_bindings,
        ),
        rng=random.Random(f"performers-{seed}"),
    )
    report = SimulationReport(seed=seed, replay=replay(seed, config))
    step_log = StepLog()
    old_step_log = use_step_log(step_log)
    runtime = LocalRuntime(list(chosen.configs), data_dir=folder, clock=clock)
    try:
        await runtime.start()
        names = [spec.name for spec in chosen.scenario.bindings]
        for worker in chosen.performers:
            record_executions(runtime.workers[worker].module, names, ledger)
        driver = _Driver(seed, config, chosen, runtime, clock, ledger, shard_class)
        driver.seen.steps = step_log
        await driver.active_phase()
        await driver.quiet_phase()
        report.violations, report.jobs = await driver.finish(config.invariants)
        report.faults = driver.chaos.struck + Counter(ledger.injected)
        report.operations = driver.operations
        report.executions = len(ledger.executions)
        report.steps = Counter(step_log.counts())
        report.virtual_ms = clock.now_ms() - START_MS
        if clock.crashes:
            report.violations.append(Violation("crash", f"a runtime task crashed: {clock.crashes[0]!r}"))
    finally:
        await runtime.stop()
        scheduler_time.use_time_source(old_scheduler)
        scheduler_time.use_entropy(*old_entropy)
        performer_time.use_time_source(old_performer)
        use_step_log(old_step_log)
        if data_dir is None:
            shutil.rmtree(folder, ignore_errors=True)
    report.wall_s = time.perf_counter() - started
    return report
