"""What a job costs on Cloudflare: every billable unit per job, counted by the local runtime's meter.

Run: ``uv run python bench/platform.py [--jobs N] [--quick]`` (that file starts this module). Prints a table, the ceilings, the comparison and one
``RESULT {json}`` line (the no-op job's figures).

Each workload runs the whole system (producer Worker -> scheduler Worker and its JobShard Durable Object ->
queue -> consumer -> performer Worker -> report -> D1 read model, Analytics Engine) on a fresh data folder
under a virtual clock, after one warm-up job; the runtime's meter (``tsumugi_dev.metering``, ADR-0130) is
zeroed after the warm-up and read once every job has ended. Counts are divided by the jobs the workload
made. Dollars apply Cloudflare's marginal prices on Workers Paid (``tsumugi_dev/cloudflare_prices.json``;
beyond the monthly allowances, without the $5 minimum, CPU time left out: the local runtime cannot measure
Cloudflare's CPU). Durable Object duration is this process's wall clock while an object runs an event: an
estimate, printed apart.

Workloads: ``noop`` (Hello, one producer call per job, a second apart: nothing amortised), ``noop_batched``
(100 Hello in one ``enqueue_many``: what batching amortises), ``retry`` (Boom with max_attempts=2: one retry, then FAILED), ``heartbeat`` (Slow
for 1 s: one heartbeat), ``delayed`` (Hello 60 s later), ``concurrency_key`` (Hello on one key), ``fan_out_100``
(one ``wide`` run over 100 names: per child job, the report node's cost spread over them), ``schedule``
(one occurrence of a Hello schedule every minute), ``cancelled`` (a delayed Hello cancelled before it runs).

Side by side, per job: ``floor`` (a bare Queue consumer doing the work with no guarantees: one message
written, read and deleted, one consumer invocation), ``workflows`` (Cloudflare Workflows with one step per job:
one Workflow invocation, billed as a Workers request; steps and subrequests are not billed), and
``original`` (the TypeScript original, modelled from the operations its source issues per job: docs/cost.md).

Steps, sleeps and events (bench/platform_steps_cost.py, ADR-0158): ``steps_0``, ``steps_10``, ``sleep_60s``,
``event_1`` and ``event_1000``, and from them the cost of one step, one sleep and an event's delivery per
waiting job, beside Cloudflare Workflows' published model for a step (``workflow_step`` in the prices file).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec

from tsumugi_client import create_client
from tsumugi_dev.billing import account_kind, billed_units, prices, sum_units, usd
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.config import ServiceBindingConfig, load_config
from tsumugi_dev.runtime import LocalRuntime

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
if str(BENCH) not in sys.path:
    sys.path.append(str(BENCH))  # platform_scheduler imports e2e_scheduler's flow
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))  # the tests' clock helper: tests.support.clock
import platform_steps_cost  # noqa: E402  (found through the lines above)
from tests.support.clock import installed  # noqa: E402

SCHEDULER_CONFIG = REPO / "services" / "scheduler" / "wrangler.jsonc"
PERFORMERS_CONFIG = REPO / "services" / "performers" / "wrangler.jsonc"
PRODUCER_CONFIG = REPO / "services" / "performers" / "producer" / "wrangler.jsonc"
START_MS = 1_767_225_660_000  # 2026-01-01T00:01:00Z: no workload reaches the hourly cron
SHARD = "Durable Object tsumugi-scheduler:TsumugiJobShard"
QUEUE = "Queue tsumugi"
D1 = "D1 tsumugi"
UNITS = (
    "worker_requests",
    "do_requests",
    "do_rows_read",
    "do_rows_written",
    "queue_operations",
    "d1_rows_read",
    "d1_rows_written",
    "analytics_points",
)
SHARD_COUNTS = (1, 8, 64)

Workload = Callable[[LocalRuntime, VirtualClock, int], Awaitable[int]]


async def _start(data_dir: Path, clock: VirtualClock, module: str) -> LocalRuntime:
    scheduler = load_config(SCHEDULER_CONFIG)
    scheduler = msgspec.structs.replace(
        scheduler, main=BENCH / module, vars={**scheduler.vars, "TSUMUGI_TOKEN": "bench-token"}
    )
    performers = load_config(PERFORMERS_CONFIG)
    if module == platform_steps_cost.SCHEDULER_MODULE:  # the step workloads' Steps performer
        performers = msgspec.structs.replace(performers, main=BENCH / platform_steps_cost.PERFORMERS_MODULE)
        steps = ServiceBindingConfig(binding="Steps", service=performers.name, entrypoint="Steps")
        scheduler = msgspec.structs.replace(scheduler, services=(*scheduler.services, steps))
    runtime = LocalRuntime(
        [scheduler, performers, load_config(PRODUCER_CONFIG)],
        data_dir=data_dir,
        clock=clock,
    )
    await runtime.start()
    return runtime


async def _enqueue_each(runtime: LocalRuntime, clock: VirtualClock, jobs: int, **options: Any) -> list[str]:
    env, client = runtime.env("tsumugi-producer"), create_client()
    ids: list[str] = []
    for i in range(jobs):  # one producer call per job, a second apart: no batching the meter would hide
        item: dict[str, Any] = {"binding": "Hello", "payload": {"name": f"n{i}"}, **options}
        ids.append(await client.enqueue(env, **item))
        await clock.advance(1_000)
    return ids


async def noop(runtime: LocalRuntime, clock: VirtualClock, jobs: int) -> int:
    await _enqueue_each(runtime, clock, jobs)
    await clock.advance(60_000)
    return jobs


async def retry(runtime: LocalRuntime, clock: VirtualClock, jobs: int) -> int:
    await _enqueue_each(runtime, clock, jobs, binding="Boom", payload={}, max_attempts=2)
    await clock.advance(20 * 60_000)
    return jobs


async def noop_batched(runtime: LocalRuntime, clock: VirtualClock, jobs: int) -> int:
    env, client = runtime.env("tsumugi-producer"), create_client()
    items: list[Any] = [{"binding": "Hello", "payload": {"name": f"n{i}"}} for i in range(100)]
    await client.enqueue_many(env, items)  # one producer call for 100 jobs: every step amortised
    await clock.advance(60_000)
    return 100


async def heartbeat(runtime: LocalRuntime, clock: VirtualClock, jobs: int) -> int:
    await _enqueue_each(runtime, clock, jobs, binding="Slow", payload={"seconds": 1})
    await clock.advance(60_000)
    return jobs


async def delayed(runtime: LocalRuntime, clock: VirtualClock, jobs: int) -> int:
    await _enqueue_each(runtime, clock, jobs, delay_ms=60_000)
    await clock.advance(3 * 60_000)
    return jobs


async def concurrency_key(runtime: LocalRuntime, clock: VirtualClock, jobs: int) -> int:
    await _enqueue_each(runtime, clock, jobs, concurrency_key="one-key")
    await clock.advance(60_000)
    return jobs


async def fan_out_100(runtime: LocalRuntime, clock: VirtualClock, jobs: int) -> int:
    run_id = "wide:bench"
    names = json.dumps({"names": [f"n{i}" for i in range(100)]})
    await runtime.env("tsumugi-scheduler").RUN.getByName(run_id).start(run_id, "wide", names, None, None, 0)
    await clock.advance(5 * 60_000)
    return 100


async def schedule(runtime: LocalRuntime, clock: VirtualClock, jobs: int) -> int:
    before = await _count(runtime, "SELECT COUNT(*) AS n FROM job WHERE payload LIKE '%tick%'")
    await clock.advance(jobs * 60_000)
    await clock.advance(30_000)
    return await _count(runtime, "SELECT COUNT(*) AS n FROM job WHERE payload LIKE '%tick%'") - before


async def cancelled(runtime: LocalRuntime, clock: VirtualClock, jobs: int) -> int:
    ids = await _enqueue_each(runtime, clock, jobs, delay_ms=10 * 60_000)
    env, client = runtime.env("tsumugi-producer"), create_client()
    for job_id in ids:
        await client.cancel(env, job_id)
    await clock.advance(60_000)
    return jobs


async def _count(runtime: LocalRuntime, sql: str) -> int:
    row = await runtime.d1("tsumugi").prepare(sql).first()
    return 0 if row is None else int(row["n"])


WORKLOADS: dict[str, tuple[Workload, str]] = {
    "noop": (noop, "e2e_scheduler.py"),
    "noop_batched": (noop_batched, "e2e_scheduler.py"),
    "retry": (retry, "e2e_scheduler.py"),
    "heartbeat": (heartbeat, "e2e_scheduler.py"),
    "delayed": (delayed, "e2e_scheduler.py"),
    "concurrency_key": (concurrency_key, "e2e_scheduler.py"),
    "fan_out_100": (fan_out_100, "e2e_scheduler.py"),
    "schedule": (schedule, "platform_scheduler.py"),
    "cancelled": (cancelled, "e2e_scheduler.py"),
    **{
        name: (work, platform_steps_cost.SCHEDULER_MODULE)
        for name, work in platform_steps_cost.WORKLOADS.items()
    },
}
JOB_WORKLOADS = tuple(name for name in WORKLOADS if name not in platform_steps_cost.WORKLOADS)


async def measure(name: str, jobs: int) -> dict[str, Any]:
    """One workload on a fresh runtime: billable units per job, and what the JobShard alone used."""
    work, module = WORKLOADS[name]
    clock = VirtualClock(START_MS)
    with installed(clock), tempfile.TemporaryDirectory() as tmp:
        runtime = await _start(Path(tmp) / "data", clock, module)
        try:
            await _enqueue_each(runtime, clock, 1)  # warm-up: tables made, shard settled
            await clock.advance(60_000)
            runtime.meter.reset()
            made = await work(runtime, clock, jobs)
            snapshot = runtime.meter.snapshot()
        finally:
            await runtime.stop()
    if made <= 0:
        raise RuntimeError(f"{name}: the workload made no job")
    units = sum_units(snapshot)
    shard = snapshot.get(SHARD, {})
    per_job: dict[str, Any] = {unit: units.get(unit, 0.0) / made for unit in UNITS}
    per_job["queue_messages"] = snapshot.get(QUEUE, {}).get("queue_writes", 0) / made
    per_job["d1_queries"] = snapshot.get(D1, {}).get("d1_queries", 0) / made
    per_job["shard_requests"] = shard.get("requests", 0) / made
    per_job["do_active_ms"] = (
        1000
        * sum(u.get("active_s", 0) for a, u in snapshot.items() if account_kind(a) == "Durable Object")
        / made
    )
    priced = {unit: units.get(unit, 0.0) / made for unit in UNITS}
    per_job["usd_per_million_jobs"] = usd(priced) * 1_000_000
    per_job["usd_duration_per_million_jobs"] = usd({"do_gb_s": units.get("do_gb_s", 0.0) / made}) * 1_000_000
    per_job["jobs"] = made
    per_job["by_account"] = {
        account: {k: v for k, v in billed_units(usage, account_kind(account)).items() if v}
        for account, usage in snapshot.items()
    }
    return per_job


def floor_per_job() -> dict[str, float]:
    """A bare Queue consumer: the message written, read and deleted, one consumer invocation per message."""
    units = {"worker_requests": 1.0, "queue_operations": 3.0}
    return {
        **dict.fromkeys(UNITS, 0.0),
        **units,
        "usd_per_million_jobs": usd(units) * 1e6,
        **{"shard_requests": 0.0, "queue_messages": 1.0, "d1_queries": 0.0},
    }


def workflows_per_job() -> dict[str, float]:
    """Cloudflare Workflows, one step per job: one invocation (a Workers request); steps are not billed."""
    units = {"workflow_invocations": 1.0}
    row = {**dict.fromkeys(UNITS, 0.0), "worker_requests": 1.0}
    return {**row, "usd_per_million_jobs": usd(units) * 1e6}


def original_per_job() -> dict[str, float]:
    """The TypeScript original's no-op job, modelled from the operations it issues (docs/cost.md)."""
    units = {
        "worker_requests": 1.0,  # the consumer's invocation (one message per batch at this load)
        "do_requests": 4.0,  # enqueueMany RPC, the dispatch alarm, report RPC, the projection alarm
        "do_rows_written": 20.0,  # insert 5, two transitions 3 each, three outbox appends 2 each, 3 deleted
        "queue_operations": 3.0,
        "d1_rows_written": 17.0,  # upserts of SCHEDULED (insert, 7) then QUEUED and COMPLETED (5 each)
        "analytics_points": 1.0,
    }
    counts = {"shard_requests": 4.0, "queue_messages": 1.0, "d1_queries": 3.0}
    return {**dict.fromkeys(UNITS, 0.0), **units, "usd_per_million_jobs": usd(units) * 1e6, **counts}


def ceilings(row: dict[str, Any]) -> dict[str, Any]:
    """Jobs/s one shard and one binding of N shards can take, and which documented limit binds first."""
    limits = prices()["limits"]
    per_object = float(limits["do_requests_per_second_per_object"]["value"])
    per_shard = per_object / row["shard_requests"] if row["shard_requests"] else float("inf")
    queue_cap = float(limits["queue_messages_per_second"]["value"]) / max(row["queue_messages"], 1e-9)
    d1_cap = (
        float(limits["d1_queries_per_second"]["value"]) / row["d1_queries"]
        if row["d1_queries"]
        else float("inf")
    )
    by_shards = {}
    for n in SHARD_COUNTS:
        caps = {"Durable Object": n * per_shard, "queue": queue_cap, "D1": d1_cap}
        binding = min(caps, key=lambda k: caps[k])
        by_shards[n] = (caps[binding], binding)
    return {"per_shard_jobs_per_s": per_shard, "by_shards": by_shards}


def _fmt(value: float) -> str:
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def print_table(rows: dict[str, dict[str, Any]]) -> None:
    columns = (*UNITS, "usd_per_million_jobs")
    print("per job          " + " ".join(f"{c[:14]:>14}" for c in columns))
    for name, row in rows.items():
        print(f"{name:<16} " + " ".join(f"{_fmt(float(row[c])):>14}" for c in columns))


def print_steps(rows: dict[str, dict[str, Any]], jobs: int) -> None:
    """The step workloads (per job; per event for event_*), what one step, one sleep and an event's delivery
    to each waiting job cost, beside Cloudflare Workflows' published model for a step."""
    print("\nsteps, sleeps and events (event_* rows: per event; the rest per job)")
    steps = {name: rows[name] for name in platform_steps_cost.WORKLOADS}
    print_table({**steps, **platform_steps_cost.derived(rows, UNITS)})
    columns = ("shard_requests", "worker_requests", "do_rows_written", "usd_per_million_jobs")
    model = platform_steps_cost.workflows_step()
    print(
        "\none step, one sleep, an event per waiting job (shard requests, invocations, DO rows written, $/M)"
    )
    for name, row in platform_steps_cost.derived(rows, UNITS).items():
        print(f"  {name:<16} " + "  ".join(f"{c} {float(row[c]):.2f}" for c in columns))
    print(f"  {'workflows step':<16} " + "  ".join(f"{c} {float(model[c]):.2f}" for c in columns))
    print(f"  Workflows' model ({model['source']}, read {model['read_on']}): {model['rule']}")
    for line in platform_steps_cost.latency_lines(jobs):
        print("  " + line)


async def main(jobs: int) -> dict[str, Any]:
    rows: dict[str, dict[str, Any]] = {}
    for name in WORKLOADS:
        rows[name] = await measure(name, jobs)
    print(f"Cloudflare prices read {prices()['read_on']} ({prices()['plan']}); {jobs} jobs per workload\n")
    print_table({name: rows[name] for name in JOB_WORKLOADS})
    print_steps(rows, jobs)
    print("\nalongside (no-op job)")
    others = {"floor": floor_per_job(), "workflows": workflows_per_job(), "original": original_per_job()}
    print_table({"tsumugi": rows["noop"], **others})
    print("\nper workload: shard requests/job, estimated DO duration (ms/job, $/M jobs), ceilings")
    job_rows = {name: rows[name] for name in JOB_WORKLOADS}
    for name, row in {**job_rows, "original": others["original"], "floor": others["floor"]}.items():
        ceiling = ceilings(row)
        shards = "; ".join(
            f"{n} shards {cap:.0f}/s ({what})" for n, (cap, what) in ceiling["by_shards"].items()
        )
        active = row.get("do_active_ms", 0.0)
        print(
            f"{name:<16} shard_req {row['shard_requests']:.2f}  d1_q {row['d1_queries']:.2f}  "
            f"msgs {row['queue_messages']:.2f}  active {active:.2f} ms "
            f"(${row.get('usd_duration_per_million_jobs', 0.0):.2f}/M)  "
            f"per shard {ceiling['per_shard_jobs_per_s']:.0f} jobs/s; {shards}"
        )
    noop_row = rows["noop"]
    print("\nno-op job by account (billable units per job):")
    for account, units in noop_row["by_account"].items():
        if units:
            print(f"  {account}: " + ", ".join(f"{k} {v / noop_row['jobs']:.2f}" for k, v in units.items()))
    result = {
        "jobs_per_workload": jobs,
        "do_requests_per_job": round(noop_row["do_requests"], 3),
        "rows_written_per_job": round(noop_row["do_rows_written"] + noop_row["d1_rows_written"], 3),
        "do_rows_written_per_job": round(noop_row["do_rows_written"], 3),
        "d1_rows_written_per_job": round(noop_row["d1_rows_written"], 3),
        "queue_ops_per_job": round(noop_row["queue_operations"], 3),
        "usd_per_million_jobs": round(noop_row["usd_per_million_jobs"], 3),
        "ratio_to_floor": round(
            noop_row["usd_per_million_jobs"] / others["floor"]["usd_per_million_jobs"], 2
        ),
        "ratio_to_workflows": round(
            noop_row["usd_per_million_jobs"] / others["workflows"]["usd_per_million_jobs"], 2
        ),
        "ratio_to_original": round(
            noop_row["usd_per_million_jobs"] / others["original"]["usd_per_million_jobs"], 2
        ),
        "per_shard_jobs_per_s": round(ceilings(noop_row)["per_shard_jobs_per_s"]),
    }
    result.update(platform_steps_cost.result_fields(rows))
    print("RESULT " + json.dumps(result))
    return result


def cli() -> None:
    """Parse the command line and run every workload."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20, help="jobs per workload (default 20)")
    parser.add_argument("--quick", action="store_true", help="3 jobs per workload (a smoke run)")
    args = parser.parse_args()
    asyncio.run(main(3 if args.quick else args.jobs))


if __name__ == "__main__":
    cli()
