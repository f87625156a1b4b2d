"""Seeded whole-system simulation over many seeds: the real scheduler, consumer and performers under faults.

Run: ``uv run python bench/simulate.py --seeds 10000 [--workers 2]`` (seeds 0..N-1), or ``--seed S`` to replay
one seed (the command a failing seed prints). Each seed runs `tsumugi_simulation.simulate`: a random
workload (every enqueue option; cancel, retry, reschedule, policy changes and pauses through the client and
the REST API) under random faults (lost, duplicated and reordered messages, consumer crashes, failing alarms,
Durable Object restarts, failed RPC between Workers, D1 outages; performers that raise, run past their deadline
or heartbeat too slowly), then the invariants of ADR-0060 are checked against the ledger of real executions.

Prints each failing seed (its violations and the replay command), then the totals: seeds, simulated jobs,
executions, faults injected by kind, what the step jobs did (step bodies run and completed, sleeps, waits,
events got, timeouts, events sent), violations by invariant, wall time; then exactly one ``RESULT {json}``
line. ``--invariants`` picks the invariants (default: all). Exit status 1 when any violation was found.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from tsumugi_simulation import INVARIANTS, SimulationConfig, simulate


def _config(args: argparse.Namespace) -> SimulationConfig:
    names = tuple(args.invariants.split(",")) if args.invariants else tuple(INVARIANTS)
    unknown = [n for n in names if n not in INVARIANTS]
    if unknown:
        raise SystemExit(f"--invariants: unknown {', '.join(unknown)} (one of {', '.join(INVARIANTS)})")
    return SimulationConfig(
        jobs=args.jobs, active_ms=args.active_ms, burst_chance=args.burst_chance, invariants=names
    )


def _run_seeds(seeds: list[int], config: SimulationConfig) -> list[dict[str, Any]]:
    logging.disable(logging.CRITICAL)  # the system logs every injected failure; the report says what matters

    async def run() -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for done, seed in enumerate(seeds, 1):
            report = await simulate(seed, config)
            if done % 100 == 0:
                print(f"... {done} of {len(seeds)} seeds (up to {seed})", file=sys.stderr, flush=True)
            out.append(
                {
                    "seed": seed,
                    "jobs": report.jobs,
                    "executions": report.executions,
                    "faults": dict(report.faults),
                    "steps": dict(report.steps),
                    "violations": [(v.invariant, str(v)) for v in report.violations],
                    "summary": report.summary(),
                    "wall_s": report.wall_s,
                }
            )
        return out

    return asyncio.run(run())


def main(argv: list[str] | None = None) -> int:
    """Run the seeds, print the failures and the totals; the last line is ``RESULT {json}``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100, help="run seeds 0..N-1")
    parser.add_argument("--start", type=int, default=0, help="first seed of --seeds")
    parser.add_argument("--seed", type=int, help="run (replay) this one seed")
    parser.add_argument("--jobs", type=int, default=30)
    parser.add_argument("--active-ms", type=int, default=30_000)
    parser.add_argument("--burst-chance", type=float, default=0.1)
    parser.add_argument("--invariants", default="", help="comma-separated invariants to check (default: all)")
    parser.add_argument("--workers", type=int, default=1, help="processes running seeds side by side")
    args = parser.parse_args(argv)
    config = _config(args)
    seeds = [args.seed] if args.seed is not None else list(range(args.start, args.start + args.seeds))
    started = time.perf_counter()
    if args.workers > 1:
        chunks = [seeds[i :: args.workers] for i in range(args.workers)]
        with ProcessPoolExecutor(args.workers) as pool:
            results = [r for part in pool.map(_run_seeds, chunks, [config] * len(chunks)) for r in part]
        results.sort(key=lambda r: r["seed"])
    else:
        results = _run_seeds(seeds, config)
    wall_s = time.perf_counter() - started

    faults: Counter[str] = Counter()
    steps: Counter[str] = Counter()
    by_invariant: Counter[str] = Counter()
    failing: list[int] = []
    for r in results:
        faults.update(r["faults"])
        steps.update(r["steps"])
        by_invariant.update(name for name, _ in r["violations"])
        if r["violations"]:
            failing.append(r["seed"])
            print(r["summary"], flush=True)
    jobs = sum(r["jobs"] for r in results)
    executions = sum(r["executions"] for r in results)
    violations = sum(by_invariant.values())
    print(f"seeds            {len(results)} ({len(failing)} failing)")
    print(f"simulated jobs   {jobs} ({executions} executions)")
    print(
        f"faults injected  {sum(faults.values())}: "
        + ", ".join(f"{k} {v}" for k, v in sorted(faults.items()))
    )
    print("step jobs        " + ", ".join(f"{k} {v}" for k, v in sorted(steps.items())))
    print(f"violations       {violations}" + "".join(f"; {k} {v}" for k, v in sorted(by_invariant.items())))
    print(f"invariants       {', '.join(config.invariants)}")
    print(f"wall time        {wall_s:.1f} s ({wall_s / max(1, len(results)):.2f} s per seed)")
    result = {
        "seeds": len(results),
        "failing_seeds": failing[:100],
        "jobs": jobs,
        "executions": executions,
        "faults": sum(faults.values()),
        "faults_by_kind": dict(sorted(faults.items())),
        "steps": dict(sorted(steps.items())),
        "violations": violations,
        "violations_by_invariant": dict(sorted(by_invariant.items())),
        "invariants": list(config.invariants),
        "wall_s": round(wall_s, 2),
    }
    print("RESULT " + json.dumps(result, sort_keys=True), flush=True)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
