"""Benchmark of durable steps and events on one JobShard engine and one event box (ADR-0144, ADR-0146).

Run: ``uv run python bench/steps.py [--quick]``. Prints one line per figure, then one ``RESULT {json}`` line.
Measured on the local runtime's SQLite (``tsumugi_dev.do_sql.SqlStorage``), file-backed, with the wall clock:

- ``step_writes`` / ``step_us``: SQL write statements and wall time of one step ``save`` (the command a step
  sends once its function returned), beside ``job_writes`` / ``job_us``, a whole no-op job's lifecycle
  (enqueue, tick, RUNNING mark, report), in the same run; ``step_vs_job`` is the ratio of the times;
- ``amo_step_writes``: an at-most-once step (``begin`` then ``save``);
- ``event_1_*`` / ``event_1000_*``: one event delivered to 1 and to 1,000 SLEEPING jobs waiting on one shard:
  SQL writes in the box and in the shard (the wait step's result and the wake of each job), objects touched
  (the box plus one per shard with waiters) and time.

What one step costs on Cloudflare follows from these counts: one RPC round trip from the performer's
invocation to its shard (two at-most-once), no extra invocation, and the writes above; a sleep or a wait adds
one report, one alarm tick and one new consumer invocation when it ends. Cloudflare Workflows' published
model for comparison (developers.cloudflare.com/workflows/reference/limits/): each step's result is persisted
(at most 1 MiB per step, 10,000 steps per instance by default on Workers Paid), a sleep lasts at most 365
days, and an event payload is at most 1 MiB; ours: 10,000 steps per job, results up to the job's result cap,
an event payload up to 64 KiB, kept a day for later waits.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from tsumugi_core.events import box_name
from tsumugi_core.options import EnqueueItem
from tsumugi_core.policy import PolicyPatch
from tsumugi_core.steps import StepCommand
from tsumugi_core.testing import SequentialIds
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.event_box import EventBox
from tsumugi_scheduler.shard.engine import JobShardEngine
from tsumugi_scheduler.shard.records import Succeeded, Suspended

BINDING = "BENCH"


class WallClock:
    """Epoch milliseconds from the system clock."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


def _engine(path: Path) -> tuple[JobShardEngine, SqlStorage]:
    sql = SqlStorage(path)
    engine = JobShardEngine(
        sql, binding=BINDING, shard=0, clock=WallClock(), ids=SequentialIds("b"), rand=random.Random(7)
    )
    engine.configure(PolicyPatch(concurrency=100_000))
    return engine, sql


def _running(engine: JobShardEngine, count: int, guarantee: str = "at-least-once") -> list[tuple[str, int]]:
    engine.enqueue_many(
        [
            EnqueueItem(binding=BINDING, payload={"n": n}, guarantee=guarantee)  # type: ignore[arg-type]
            for n in range(count)
        ]
    )
    live: list[tuple[str, int]] = []
    while dispatches := engine.tick().dispatches:
        live += [(d.job_id, d.attempt) for d in dispatches]
    engine.start_many(live)
    return live


def measure_steps(folder: Path, jobs: int, steps: int) -> dict[str, float]:
    engine, sql = _engine(folder / "steps.sqlite")
    # A whole no-op job, for scale: enqueue, dispatch, RUNNING mark, success report.
    before, started = sql.write_statements, time.perf_counter()
    live = _running(engine, jobs)
    for job_id, attempt in live:
        engine.report(job_id, attempt, Succeeded(result=None))
    job_us = (time.perf_counter() - started) * 1e6 / jobs
    job_writes = (sql.write_statements - before) / jobs
    live = _running(engine, jobs)
    result = json.dumps({"charge_id": "ch_1", "amount": 1200})
    before, started = sql.write_statements, time.perf_counter()
    for job_id, attempt in live:
        for n in range(steps):
            engine.step(job_id, attempt, StepCommand(op="save", name=f"s{n}", result=result))
    count = jobs * steps
    step_us = (time.perf_counter() - started) * 1e6 / count
    step_writes = (sql.write_statements - before) / count
    amo = _running(engine, jobs, "at-most-once")
    before = sql.write_statements
    for job_id, attempt in amo:
        engine.step(job_id, attempt, StepCommand(op="begin", name="charge"))
        engine.step(job_id, attempt, StepCommand(op="save", name="charge", result=result))
    amo_writes = (sql.write_statements - before) / jobs
    return {
        "job_writes": round(job_writes, 2),
        "job_us": round(job_us, 1),
        "step_writes": round(step_writes, 2),
        "step_us": round(step_us, 1),
        "step_vs_job": round(step_us / job_us, 2),
        "amo_step_writes": round(amo_writes, 2),
    }


def measure_event(folder: Path, waiting: int, label: str) -> dict[str, float | str]:
    engine, shard_sql = _engine(folder / f"event-{label}.sqlite")
    box_sql = SqlStorage(folder / f"box-{label}.sqlite")
    box = EventBox(box_sql, WallClock(), SequentialIds("e"))
    key = f"order-{label}"
    until = WallClock().now_ms() + 3_600_000
    for job_id, attempt in _running(engine, waiting):
        engine.step(
            job_id,
            attempt,
            StepCommand(op="wait", name="event:shipped", event="shipped", key=key, until=until),
        )
        box.wait("shipped", key, job_id, "event:shipped", f"{BINDING}#0", until, [])
        engine.report(job_id, attempt, Suspended(until=until, reason="event", step="event:shipped"))
    box_before, shard_before = box_sql.write_statements, shard_sql.write_statements
    started = time.perf_counter()
    box.send("shipped", key, json.dumps({"tracking": "T"}), None)
    pending = box.pending()
    for shard, deliveries in pending.items():
        answers = engine.deliver_events([(d["jobId"], d["step"], d["event"]) for d in deliveries])
        assert all(answers), "every waiting job takes the event"
        box.confirm(shard, deliveries)
    took_ms = (time.perf_counter() - started) * 1000
    return {
        f"event_{label}_box_writes": box_sql.write_statements - box_before,
        f"event_{label}_shard_writes": shard_sql.write_statements - shard_before,
        f"event_{label}_objects": 1 + len(pending),
        f"event_{label}_ms": round(took_ms, 2),
        f"event_{label}_box": box_name("shipped", key)[:12],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    args = parser.parse_args()
    jobs, steps, fan_out = (20, 5, 50) if args.quick else (500, 10, 1000)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        result: dict[str, object] = {"mode": "quick" if args.quick else "full"}
        result.update(measure_steps(folder, jobs, steps))
        result.update(measure_event(folder, 1, "1"))
        result.update(measure_event(folder, fan_out, str(fan_out)))
    print(
        f"one step save: {result['step_writes']} SQL writes, {result['step_us']} us "
        f"(a whole no-op job: {result['job_writes']} writes, {result['job_us']} us; "
        f"step/job time ratio {result['step_vs_job']})"
    )
    print(f"one at-most-once step (begin + save): {result['amo_step_writes']} SQL writes")
    for label in ("1", str(fan_out)):
        print(
            f"event to {label} waiting job(s): {result[f'event_{label}_objects']} objects, box writes "
            f"{result[f'event_{label}_box_writes']}, shard writes {result[f'event_{label}_shard_writes']}, "
            f"{result[f'event_{label}_ms']} ms"
        )
    print(
        "per step on Cloudflare: 1 RPC round trip to the shard (2 at-most-once), 0 extra invocations; "
        "Workflows persists each step's result too (<= 1 MiB, 10,000 steps per instance by default)"
    )
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
