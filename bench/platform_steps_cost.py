"""The step workloads of bench/platform.py (ADR-0158): what one durable step, one sleep and one event cost.

Each runs the whole system (bench/platform_steps_scheduler.py and bench/platform_steps_performers.py: the
``Steps`` performer) on the local runtime's meter, like the job workloads of bench/platform_cost.py:

- ``steps_0`` / ``steps_10``: jobs of 0 and of 10 steps; one step is their difference divided by 10;
- ``sleep_60s``: jobs of no step that sleep a minute; one sleep is its difference from ``steps_0``;
- ``event_1`` / ``event_1000``: 1 and 1,000 jobs wait for one (name, key); the meter is zeroed once they all
  sleep, then one event is sent and every job completes: the row is per event (everything the delivery
  made happen: the event box, the shard, the resumed invocations and their reports).

Latency: the median wall time of one ``ctx.step`` call in ``steps_10`` on this machine (the local runtime's code
path with the save's round trip to the shard, no network: on Cloudflare add one RPC round trip to the Durable
Object), and for an event the virtual time from the send until the last waiting job completed (the alarm and
queue hops, polled every 10 ms of virtual time).
"""

from __future__ import annotations

from typing import Any

from tsumugi_client import create_client
from tsumugi_dev.billing import prices
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime

SCHEDULER_MODULE = "platform_steps_scheduler.py"
PERFORMERS_MODULE = "platform_steps_performers.py"
STEPS = 10
STEP_S: list[float] = []
"""Wall seconds of each ``ctx.step`` call of ``steps_10`` (from the performer Worker's ``STEP_SECONDS``)."""
EVENT_MS: dict[str, int] = {}
"""Virtual ms from an event's send until the last job waiting for it completed."""


async def _enqueue(runtime: LocalRuntime, clock: VirtualClock, jobs: int, payload: dict[str, Any]) -> None:
    env, client = runtime.env("tsumugi-producer"), create_client()
    for _ in range(jobs):
        await client.enqueue(env, binding="Steps", payload=payload)
        await clock.advance(1_000)


async def _timed(
    name: str, runtime: LocalRuntime, clock: VirtualClock, jobs: int, payload: dict[str, Any]
) -> int:
    await _enqueue(runtime, clock, jobs, payload)
    await clock.advance(3 * 60_000)
    if name == "steps_10":
        STEP_S[:] = runtime.workers["tsumugi-performers"].module.STEP_SECONDS
    return jobs


async def steps_0(runtime: LocalRuntime, clock: VirtualClock, jobs: int) -> int:
    return await _timed("steps_0", runtime, clock, jobs, {"steps": 0})


async def steps_10(runtime: LocalRuntime, clock: VirtualClock, jobs: int) -> int:
    return await _timed("steps_10", runtime, clock, jobs, {"steps": STEPS})


async def sleep_60s(runtime: LocalRuntime, clock: VirtualClock, jobs: int) -> int:
    return await _timed("sleep_60s", runtime, clock, jobs, {"steps": 0, "sleep_s": 60})


def _open_jobs(runtime: LocalRuntime) -> int:
    """Jobs not yet COMPLETED in every shard (read straight from the shards' SQLite)."""
    left = 0
    for host in runtime.namespace("tsumugi-scheduler", "TsumugiJobShard").objects():
        sql = host.storage().sql
        if sql.runtime_exec("SELECT 1 FROM sqlite_master WHERE name = 'job'").toArray():
            rows = sql.runtime_exec("SELECT COUNT(*) AS n FROM job WHERE state != 'COMPLETED'").toArray()
            left += int(rows[0]["n"])
    return left


async def _event(name: str, runtime: LocalRuntime, clock: VirtualClock, waiting: int) -> int:
    env, client = runtime.env("tsumugi-producer"), create_client()
    items: list[Any] = [{"binding": "Steps", "payload": {"steps": 0, "event": name}} for _ in range(waiting)]
    for start in range(0, waiting, 100):
        await client.enqueue_many(env, items[start : start + 100])
    await clock.advance(2 * 60_000)  # every job ran, waited and sleeps
    runtime.meter.reset()
    sent = clock.now_ms()
    answer = await client.send_event(env, "bench", key=name, payload={"tracking": "T-1"})
    if answer.delivered != waiting:
        raise RuntimeError(f"{name}: the event reached {answer.delivered} of {waiting} waiting jobs")
    while _open_jobs(runtime) and clock.now_ms() - sent < 10 * 60_000:
        await clock.advance(10)
    EVENT_MS[name] = clock.now_ms() - sent
    await clock.advance(60_000)  # the read model catches up, as in every workload
    return 1


async def event_1(runtime: LocalRuntime, clock: VirtualClock, jobs: int) -> int:
    return await _event("event_1", runtime, clock, 1)


async def event_1000(runtime: LocalRuntime, clock: VirtualClock, jobs: int) -> int:
    return await _event("event_1000", runtime, clock, 1_000)


WORKLOADS = {
    "steps_0": steps_0,
    "steps_10": steps_10,
    "sleep_60s": sleep_60s,
    "event_1": event_1,
    "event_1000": event_1000,
}


def workflows_step() -> dict[str, Any]:
    """Cloudflare Workflows' published model for one ``step.do``, in this table's columns (``workflow_step``
    in the prices file): no request, no Durable Object request or row of ours; its CPU time and the stored
    state are billed apart (CPU per millisecond, storage per GB-month), and neither is in these columns."""
    model = prices()["models"]["workflow_step"]
    return {
        "shard_requests": 0.0,
        "worker_requests": float(model["requests_per_step"]),
        "do_rows_written": 0.0,
        "usd_per_million_jobs": float(model["usd_per_million"]),
        "source": model["source"],
        "read_on": model["read_on"],
        "rule": model["rule"],
    }


def derived(rows: dict[str, dict[str, Any]], units: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """One step, one sleep, and an event per waiting job, from the measured rows."""
    base, ten, sleep = rows["steps_0"], rows["steps_10"], rows["sleep_60s"]
    columns = (*units, "usd_per_million_jobs", "shard_requests", "queue_messages", "d1_queries")
    step = {c: (float(ten[c]) - float(base[c])) / STEPS for c in columns}
    one_sleep = {c: float(sleep[c]) - float(base[c]) for c in columns}
    per_waiter = {c: float(rows["event_1000"][c]) / 1_000 for c in columns}
    return {"one step": step, "one sleep": one_sleep, "event_1000/job": per_waiter}


def latency_lines(jobs: int) -> list[str]:
    lines: list[str] = []
    if STEP_S:
        ordered = sorted(STEP_S)
        median = ordered[len(ordered) // 2]
        lines.append(
            f"one step: median {median * 1e6:.0f} us of wall time over {len(ordered)} ctx.step calls (the local"
            " runtime's code path, the save's round trip to the shard included; no network)"
        )
    for name, ms in EVENT_MS.items():
        lines.append(
            f"{name}: the last waiting job completed {ms} ms of virtual time after the send (polled every 10 ms)"
        )
    return lines


def result_fields(rows: dict[str, dict[str, Any]]) -> dict[str, float]:
    """The step figures of the RESULT line."""
    from platform_cost import UNITS  # the job table's units (platform_cost imports this module first)

    cost = derived(rows, UNITS)
    return {
        "step_do_requests": round(cost["one step"]["do_requests"], 3),
        "step_do_rows_written": round(cost["one step"]["do_rows_written"], 3),
        "step_worker_requests": round(cost["one step"]["worker_requests"], 3),
        "step_usd_per_million": round(cost["one step"]["usd_per_million_jobs"], 3),
        "sleep_usd_per_million": round(cost["one sleep"]["usd_per_million_jobs"], 3),
        "event_1_do_requests": round(rows["event_1"]["do_requests"], 3),
        "event_1000_do_requests": round(rows["event_1000"]["do_requests"], 3),
        "event_1000_usd_per_waiting_job_per_million": round(
            cost["event_1000/job"]["usd_per_million_jobs"], 3
        ),
        "step_median_us": round(sorted(STEP_S)[len(STEP_S) // 2] * 1e6) if STEP_S else 0,
        "event_1000_virtual_ms": EVENT_MS.get("event_1000", 0),
    }
