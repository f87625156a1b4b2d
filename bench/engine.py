"""Benchmark of one JobShard engine on the local runtime's SQLite (``tsumugi_dev.do_sql.SqlStorage``).

Run: ``uv run python bench/engine.py [--quick]``. Prints one line per figure next to its target, then exactly
one ``RESULT {json}`` line. Figures:

- ``lifecycle_jobs_per_s``: enqueue_many in batches, tick, report success for every dispatched job, and the
  read-model writer's changes/ack, on a file-backed database in a temporary folder (target >= 5,000);
- ``writes_per_success``: SQL write statements per first-try success over that run, the consumer's batched
  RUNNING marks included (``start_many`` per dispatched batch, ADR-0052) (target <= 3; the original needs 7);
- ``dispatch_ms_small`` / ``dispatch_ms_large`` / ``dispatch_ratio``: one tick dispatching a batch with
  1,000 vs 1,000,000 ready jobs in the shard (target ratio <= 3);
- ``busy_key_ms_small`` / ``busy_key_ms_large`` / ``busy_key_ratio``: one tick that dispatches a job of key L
  while 1,000 vs 1,000,000 jobs wait on key K ahead of it (K full, one job in flight; default policy), and
  ``busy_key_other_dispatched``: whether every such tick dispatched the L job (target: yes, ratio <= 3);
- ``tracemalloc_peak_mb`` / ``maxrss_delta_mb``: opening the 1,000,000-job shard and running a tick, measured
  in a fresh subprocess so the resident-set high-water mark means something (target < 100 MB);
  ``maxrss_mb`` is that process's whole high-water mark, interpreter and imports included.

``--quick`` shrinks every size for a smoke test; its figures are not comparable with the targets.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tsumugi_core.options import EnqueueItem
from tsumugi_core.policy import PolicyPatch
from tsumugi_core.testing import SequentialIds
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.shard.engine import JobShardEngine
from tsumugi_scheduler.shard.records import Succeeded

BINDING = "BENCH"
RESULT_KEYS = (
    "mode",
    "lifecycle_jobs",
    "lifecycle_jobs_per_s",
    "writes_per_success",
    "dispatch_batch",
    "dispatch_small_jobs",
    "dispatch_large_jobs",
    "dispatch_ms_small",
    "dispatch_ms_large",
    "dispatch_ratio",
    "busy_key_small_jobs",
    "busy_key_large_jobs",
    "busy_key_ms_small",
    "busy_key_ms_large",
    "busy_key_ratio",
    "busy_key_other_dispatched",
    "large_build",
    "large_build_s",
    "tracemalloc_peak_mb",
    "maxrss_delta_mb",
    "maxrss_mb",
)


@dataclass(frozen=True)
class Sizes:
    """How big each part of the benchmark is."""

    lifecycle_jobs: int
    enqueue_batch: int
    dispatch_batch: int
    small: int
    large: int
    build_batch: int
    repeats: int


FULL = Sizes(20_000, 500, 100, 1_000, 1_000_000, 10_000, 5)
QUICK = Sizes(1_000, 200, 50, 200, 2_000, 1_000, 3)
BUSY_KEY = "K"
OTHER_KEY = "L"


class WallClock:
    """Epoch milliseconds from the system clock (the bench measures real time)."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


def open_engine(path: Path, concurrency: int, ids: str = "bench") -> tuple[JobShardEngine, SqlStorage]:
    """An engine on a file-backed database with ``concurrency`` pinned at runtime; new ids start with ``ids``."""
    sql = SqlStorage(path)
    engine = JobShardEngine(
        sql, binding=BINDING, shard=0, clock=WallClock(), ids=SequentialIds(ids), rand=random.Random(7)
    )
    engine.configure(PolicyPatch(concurrency=concurrency))
    return engine, sql


def items(count: int, start: int, rng: random.Random | None = None) -> list[EnqueueItem]:
    """``count`` small jobs; with ``rng``, spread over ten priority levels."""
    return [
        EnqueueItem(binding=BINDING, payload={"n": start + n}, priority=rng.randrange(10) if rng else None)
        for n in range(count)
    ]


def drain(engine: JobShardEngine) -> int:
    """Tick, mark RUNNING and report success for everything dispatched until a tick dispatches nothing."""
    done = 0
    while dispatches := engine.tick().dispatches:
        engine.start_many([(message.job_id, message.attempt) for message in dispatches])
        for message in dispatches:
            engine.report(message.job_id, message.attempt, Succeeded(result=None))
        done += len(dispatches)
    return done


def project(engine: JobShardEngine) -> None:
    """What the read-model writer does: read the change feed and acknowledge it."""
    while changes := engine.changes(1000):
        engine.ack_changes(changes[-1].job.seq)


def measure_lifecycle(folder: Path, sizes: Sizes) -> dict[str, float]:
    """Full lifecycle throughput and SQL writes per first-try success."""
    engine, sql = open_engine(folder / "lifecycle.sqlite", concurrency=sizes.lifecycle_jobs)
    writes_before = sql.write_statements
    started = time.perf_counter()
    done = 0
    for start in range(0, sizes.lifecycle_jobs, sizes.enqueue_batch):
        engine.enqueue_many(items(min(sizes.enqueue_batch, sizes.lifecycle_jobs - start), start))
        done += drain(engine)
        project(engine)
    elapsed = time.perf_counter() - started
    writes = sql.write_statements - writes_before
    sql.close()
    if done != sizes.lifecycle_jobs:
        raise RuntimeError(f"lifecycle finished {done} of {sizes.lifecycle_jobs} jobs")
    return {
        "lifecycle_jobs": sizes.lifecycle_jobs,
        "lifecycle_jobs_per_s": round(done / elapsed, 1),
        "writes_per_success": round(writes / done, 3),
    }


def build_backlog(path: Path, count: int, batch: int) -> float:
    """A shard holding ``count`` ready jobs, built with enqueue_many; returns the seconds it took."""
    engine, sql = open_engine(path, concurrency=100)
    rng = random.Random(11)
    started = time.perf_counter()
    for start in range(0, count, batch):
        engine.enqueue_many(items(min(batch, count - start), start, rng))
    project(engine)
    elapsed = time.perf_counter() - started
    sql.close()
    return elapsed


def time_dispatch(path: Path, batch: int, repeats: int) -> float:
    """Median milliseconds of one tick dispatching ``batch`` jobs (reports in between are not timed)."""
    engine, sql = open_engine(path, concurrency=batch)
    timings: list[float] = []
    for _ in range(repeats):
        started = time.perf_counter()
        dispatches = engine.tick().dispatches
        timings.append((time.perf_counter() - started) * 1000)
        if len(dispatches) != batch:
            raise RuntimeError(f"a tick dispatched {len(dispatches)} jobs, expected {batch}")
        for message in dispatches:
            engine.report(message.job_id, message.attempt, Succeeded(result=None))
    sql.close()
    return statistics.median(timings)


def build_busy_key(path: Path, count: int, batch: int) -> None:
    """A shard holding ``count`` ready jobs of one concurrency key (default policy: one of them may run)."""
    engine, sql = open_engine(path, concurrency=100)
    for start in range(0, count, batch):
        engine.enqueue_many(
            [
                EnqueueItem(binding=BINDING, payload={"n": start + n}, concurrency_key=BUSY_KEY)
                for n in range(min(batch, count - start))
            ]
        )
    project(engine)
    sql.close()


def time_other_key(path: Path, repeats: int) -> tuple[float, bool]:
    """Median milliseconds of a tick dispatching one job of another key past the busy key's backlog, and
    whether every such tick dispatched it. The busy key's first job is dispatched first and stays in flight."""
    engine, sql = open_engine(path, concurrency=100, ids="other")
    engine.tick()  # the busy key's head goes; the key is full from now on
    timings: list[float] = []
    every = True
    for n in range(repeats):
        [other] = engine.enqueue_many(
            [EnqueueItem(binding=BINDING, payload={"l": n}, concurrency_key=OTHER_KEY)]
        )
        started = time.perf_counter()
        dispatches = engine.tick().dispatches
        timings.append((time.perf_counter() - started) * 1000)
        sent = [m for m in dispatches if m.job_id == other.id]
        every = every and bool(sent)
        for message in sent:
            engine.report(message.job_id, message.attempt, Succeeded(result=None))
    sql.close()
    return statistics.median(timings), every


def measure_busy_key(folder: Path, sizes: Sizes, say: Callable[[str], None]) -> dict[str, float | str | bool]:
    """Dispatch of another key's job behind a small and a large backlog on one busy key."""
    small_path, large_path = folder / "busy-small.sqlite", folder / "busy-large.sqlite"
    build_busy_key(small_path, sizes.small, sizes.build_batch)
    say(f"building {sizes.large:,} ready jobs on one concurrency key ...")
    build_busy_key(large_path, sizes.large, sizes.build_batch)
    small_ms, small_ok = time_other_key(small_path, sizes.repeats)
    large_ms, large_ok = time_other_key(large_path, sizes.repeats)
    return {
        "busy_key_small_jobs": sizes.small,
        "busy_key_large_jobs": sizes.large,
        "busy_key_ms_small": round(small_ms, 3),
        "busy_key_ms_large": round(large_ms, 3),
        "busy_key_ratio": round(large_ms / small_ms, 2),
        "busy_key_other_dispatched": small_ok and large_ok,
    }


def memory_probe(path: Path) -> dict[str, float]:
    """Run in a fresh process: open the big shard, tick once; tracemalloc peak and ru_maxrss growth."""
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    engine, sql = open_engine(path, concurrency=100)
    engine.tick()
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    sql.close()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # ru_maxrss is KiB on Linux, bytes on macOS.
    scale = 1 if sys.platform == "darwin" else 1024
    return {
        "tracemalloc_peak_mb": round(peak / 2**20, 2),
        "maxrss_delta_mb": round((rss_after - rss_before) * scale / 2**20, 2),
        "maxrss_mb": round(rss_after * scale / 2**20, 2),
    }


def measure_memory(path: Path) -> dict[str, float]:
    """``memory_probe`` in a subprocess (the parent's high-water mark already includes the build)."""
    done = subprocess.run(
        [sys.executable, __file__, "--memory-probe", str(path)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure_dispatch(folder: Path, sizes: Sizes, say: Callable[[str], None]) -> dict[str, float | str]:
    """Dispatch cost at a small and a large backlog, and the memory of the large shard."""
    small_path, large_path = folder / "small.sqlite", folder / "large.sqlite"
    build_backlog(small_path, sizes.small, sizes.build_batch)
    say(f"building {sizes.large:,} ready jobs with enqueue_many in batches of {sizes.build_batch:,} ...")
    build_s = build_backlog(large_path, sizes.large, sizes.build_batch)
    small_ms = time_dispatch(small_path, sizes.dispatch_batch, sizes.repeats)
    large_ms = time_dispatch(large_path, sizes.dispatch_batch, sizes.repeats)
    return {
        "dispatch_batch": sizes.dispatch_batch,
        "dispatch_small_jobs": sizes.small,
        "dispatch_large_jobs": sizes.large,
        "dispatch_ms_small": round(small_ms, 3),
        "dispatch_ms_large": round(large_ms, 3),
        "dispatch_ratio": round(large_ms / small_ms, 2),
        "large_build": "enqueue_many",
        "large_build_s": round(build_s, 1),
        **measure_memory(large_path),
    }


def report_lines(result: dict[str, float | str | bool]) -> list[str]:
    """Each figure next to its target."""
    return [
        f"full lifecycle: {result['lifecycle_jobs_per_s']:,} jobs/s over {result['lifecycle_jobs']:,} jobs"
        " (target >= 5,000)",
        f"SQL writes per first-try success: {result['writes_per_success']} (target <= 3 with RUNNING marks; the original needs 7)",
        f"tick dispatching {result['dispatch_batch']}: {result['dispatch_ms_small']} ms with"
        f" {result['dispatch_small_jobs']:,} ready, {result['dispatch_ms_large']} ms with"
        f" {result['dispatch_large_jobs']:,} ready; ratio {result['dispatch_ratio']} (target <= 3)",
        f"tick dispatching a job of key {OTHER_KEY} behind key {BUSY_KEY}: {result['busy_key_ms_small']} ms with"
        f" {result['busy_key_small_jobs']:,} waiting on {BUSY_KEY}, {result['busy_key_ms_large']} ms with"
        f" {result['busy_key_large_jobs']:,}; ratio {result['busy_key_ratio']} (target <= 3); dispatched at once"
        f" every time: {'yes' if result['busy_key_other_dispatched'] else 'NO'}",
        f"backlog built with {result['large_build']} in {result['large_build_s']} s",
        f"memory with {result['dispatch_large_jobs']:,} jobs stored and a tick: tracemalloc peak"
        f" {result['tracemalloc_peak_mb']} MB, ru_maxrss delta {result['maxrss_delta_mb']} MB (target < 100 MB;"
        f" whole probe process {result['maxrss_mb']} MB)",
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Benchmark of one JobShard engine on SQLite.")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    parser.add_argument("--memory-probe", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_probe is not None:
        print(json.dumps(memory_probe(args.memory_probe)))
        return
    sizes = QUICK if args.quick else FULL

    def say(line: str) -> None:
        print(line, flush=True)

    say(f"engine benchmark ({'quick' if args.quick else 'full'} mode), Python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="tsumugi-bench-") as tmp:
        result: dict[str, float | str | bool] = {"mode": "quick" if args.quick else "full"}
        result.update(measure_lifecycle(Path(tmp), sizes))
        result.update(measure_dispatch(Path(tmp), sizes, say))
        result.update(measure_busy_key(Path(tmp), sizes, say))
    for line in report_lines(result):
        say(line)
    say("RESULT " + json.dumps({key: result[key] for key in RESULT_KEYS}, sort_keys=True))


if __name__ == "__main__":
    main()
