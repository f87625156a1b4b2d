"""Flow runs on the local runtime with the real clock: a fan-out of N children next to N plain jobs.

Run: ``uv run python bench/flows.py [--quick]``. Prints one line per figure, then one ``RESULT {json}`` line.

- ``plain_seconds``: N ``Hello`` jobs enqueued by the producer (``enqueue_many`` in batches of 500) until the
  read model shows them all COMPLETED;
- ``fan_out_seconds``: one ``greetings`` run over N names (``names`` -> N ``Hello`` children -> ``report``)
  from ``POST``-equivalent start until the read model shows the run COMPLETED; ``ratio`` = fan-out / plain
  (target <= 1.5). Each side runs on a fresh data folder, alternating, best of the rounds; each round's own
  ratio and their median are printed too, and the same figures in this process's CPU seconds (``cpu_ratio``),
  which a machine shared with other work disturbs far less than the wall clock;
- ``run_writes_per_node``: SQL write statements (INSERT / UPDATE / DELETE) the Run object made during the
  fan-out run, per node (its own bookkeeping; the jobs' writes are the shards', as for plain jobs). Work over
  many nodes is a few JSON-bound statements (ADR-0092), so this is well under 1;
- ``big_run_nodes`` / ``big_run_seconds`` / ``big_run_peak_rss_mb``: a run of ``wide`` (greetings without its
  first node, as a node's result holds at most 8,192 characters) at the original's ``runs.maxNodes`` (10,000
  nodes), its duration and the process's peak RSS afterwards (everything in one
  process: shards, queue, performers, read model); ``advance_peak_kb``: the Python memory one advance over
  those 10,000 nodes allocates at its peak (tracemalloc), the Run object's per-tick working set.

The original bounds a tick to 200 decisions and 32 advance rounds and a run to 10,000 nodes; this
implementation applies up to 1,000 decisions a tick over nodes kept in memory and keeps the node bound
(tsumugi_scheduler.run.engine, ADR-0087), so a 1,000-child fan-out starts within a tick or two; endings that
cannot start anything are applied together (``PROJECTION_DELAY_MS``).
``--quick`` shrinks every size; its figures are not comparable with the targets.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from e2e import start_runtime
from tsumugi_client import create_client
from tsumugi_core.flow_advance import NodeView, advance
from tsumugi_scheduler.run import sql_store as run_store

PRODUCER = "tsumugi-producer"
SCHEDULER = "tsumugi-scheduler"
DATABASE = "tsumugi"


class _CountingSql:
    """The Run object's SQL with a count of write statements."""

    writes = 0

    def __init__(self, sql: Any) -> None:
        self._sql = sql

    def exec(self, query: str, *params: Any) -> Any:
        if query.lstrip()[:6].upper() in ("INSERT", "UPDATE", "DELETE"):
            _CountingSql.writes += 1
        return self._sql.exec(query, *params)

    def transaction_sync(self, fn: Any) -> Any:
        return self._sql.transaction_sync(fn)


_original_init = run_store.SqlRunStore.__init__


def _counting_init(self: run_store.SqlRunStore, sql: Any) -> None:
    _original_init(self, _CountingSql(sql))  # pyright: ignore[reportArgumentType]


run_store.SqlRunStore.__init__ = _counting_init  # pyright: ignore[reportAttributeAccessIssue]


async def _wait(what: str, probe: Any, deadline_s: float) -> None:
    end = time.monotonic() + deadline_s
    while not await probe():
        if time.monotonic() > end:
            raise TimeoutError(f"{what} did not finish in {deadline_s} s")
        await asyncio.sleep(0.005)


async def plain_round(data_dir: Path, n: int) -> tuple[float, float]:
    """Seconds until N plain jobs show COMPLETED in the read model: wall clock, and this process's CPU."""
    runtime = await start_runtime(data_dir, "plain")
    try:
        env, client = runtime.env(PRODUCER), create_client()
        d1 = runtime.d1(DATABASE)

        async def done() -> bool:
            row = await d1.prepare(
                "SELECT COUNT(*) AS n FROM job WHERE binding = 'Hello' AND state = 'COMPLETED'"
            ).first()
            return row is not None and int(row["n"]) >= n

        started, cpu = time.perf_counter(), time.process_time()
        for start in range(0, n, 500):
            items: list[Any] = [
                {"binding": "Hello", "payload": {"name": f"n{i}"}} for i in range(start, min(n, start + 500))
            ]
            await client.enqueue_many(env, items)
        await _wait("plain jobs", done, 600)
        return time.perf_counter() - started, time.process_time() - cpu
    finally:
        await runtime.stop()


async def run_round(data_dir: Path, n: int, flow: str = "greetings") -> tuple[float, int, int, float]:
    """Seconds until the run shows COMPLETED in the read model, the Run object's writes, its nodes, and the
    process's CPU seconds meanwhile."""
    runtime = await start_runtime(data_dir, "plain")
    try:
        stub_env = runtime.env(SCHEDULER)
        d1 = runtime.d1(DATABASE)
        run_id = f"{flow}:bench{n}"

        async def done() -> bool:
            row = await d1.prepare("SELECT state FROM run WHERE id = ?").bind(run_id).first()
            if row is not None and row["state"] in ("FAILED", "CANCELLED"):
                raise RuntimeError(f"run {run_id} ended {row['state']}")
            return row is not None and row["state"] == "COMPLETED"

        _CountingSql.writes = 0
        started, cpu = time.perf_counter(), time.process_time()
        names = [f"n{i}" for i in range(n)]
        await stub_env.RUN.getByName(run_id).start(run_id, flow, json.dumps({"names": names}), None, None, 0)
        await _wait("the run", done, 900)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        row = await d1.prepare("SELECT node_total FROM run WHERE id = ?").bind(run_id).first()
        assert row is not None
        return seconds, _CountingSql.writes, int(row["node_total"]), cpu
    finally:
        await runtime.stop()


def advance_peak_kb(nodes: int) -> float:
    views = [
        NodeView(id="names", state="COMPLETED"),
        NodeView(id="hello", state="RUNNING", container=True, after=("names",)),
    ]
    views += [
        NodeView(id=f"hello:{i}", state="SCHEDULED", parent="hello", origin="fanOut")
        for i in range(nodes - 3)
    ]
    views.append(NodeView(id="report", state="PENDING", after=("hello",)))
    tracemalloc.start()
    advance(views)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1024


async def main(
    quick: bool, only: int | None = None, big_nodes: int | None = None, rounds: int | None = None
) -> dict[str, Any]:
    n, default_rounds, big = (100, 1, 500) if quick else (1_000, 3, 9_998)
    n, big, rounds = only or n, big_nodes or big, rounds or default_rounds
    plain: list[float] = []
    fan: list[float] = []
    plain_cpu: list[float] = []
    fan_cpu: list[float] = []
    writes = total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            seconds, cpu = await plain_round(Path(tmp) / f"plain{r}", n)
            plain.append(seconds)
            plain_cpu.append(cpu)
            seconds, writes, total, cpu = await run_round(Path(tmp) / f"run{r}", n)
            fan.append(seconds)
            fan_cpu.append(cpu)
        big_seconds, _, big_nodes, _ = await run_round(Path(tmp) / "big", big, "wide")
    ratios = [f / p for f, p in zip(fan, plain, strict=True)]
    figures: dict[str, Any] = {
        "mode": "quick" if quick else "full",
        "children": n,
        "plain_seconds": round(min(plain), 3),
        "fan_out_seconds": round(min(fan), 3),
        "ratio": round(min(fan) / min(plain), 3),
        "round_ratios": [round(r, 3) for r in ratios],
        "median_round_ratio": round(statistics.median(ratios), 3),
        "plain_cpu_seconds": round(min(plain_cpu), 3),
        "fan_out_cpu_seconds": round(min(fan_cpu), 3),
        "cpu_ratio": round(min(fan_cpu) / min(plain_cpu), 3),
        "run_nodes": total,
        "run_writes": writes,
        "run_writes_per_node": round(writes / total, 2),
        "big_run_nodes": big_nodes,
        "big_run_seconds": round(big_seconds, 2),
        "big_run_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "advance_peak_kb": round(advance_peak_kb(big + 2), 1),
        "plain_runs": plain,
        "fan_out_runs": fan,
        "plain_cpu_runs": plain_cpu,
        "fan_out_cpu_runs": fan_cpu,
    }
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--children", type=int, default=None, help="fan-out width (default 1,000)")
    parser.add_argument("--big", type=int, default=None, help="children of the big run (default 9,997)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds of each side (default 3)")
    args = parser.parse_args()
    result = asyncio.run(main(args.quick, args.children, args.big, args.rounds))
    print(f"plain {result['children']} jobs: {result['plain_seconds']} s")
    print(
        f"fan-out of {result['children']}: {result['fan_out_seconds']} s, ratio {result['ratio']} (target <= 1.5);"
        f" per round {result['round_ratios']}, median {result['median_round_ratio']}"
    )
    print(
        f"CPU of this process: plain {result['plain_cpu_seconds']} s, fan-out {result['fan_out_cpu_seconds']} s,"
        f" ratio {result['cpu_ratio']}"
    )
    print(
        f"Run object writes: {result['run_writes']} for {result['run_nodes']} nodes = {result['run_writes_per_node']}/node"
    )
    print(
        f"{result['big_run_nodes']}-node run (maxNodes 10,000): {result['big_run_seconds']} s, process peak RSS "
        f"{result['big_run_peak_rss_mb']} MB, one advance over it peaks at {result['advance_peak_kb']} KB"
    )
    print("RESULT " + json.dumps(result))
    sys.exit(0)
