"""Benchmark of recurring schedules: 10,000 run-time schedules due every minute, next to huey periodic tasks.

Run: ``uv run python bench/schedules.py [--quick] [--rounds N]``.

Tsumugi: N run-time schedules ``cron: * * * * *`` created through the Scheduler's own routing
(``shard_of_schedule``: ``fnv1a32(name) % schedule_shards``, ADR-0079, as ``ScheduleDirectory.create``), as a
deployment holding N of them must: one Scheduler shard holds at most ``MAX_RUNTIME_SCHEDULES`` (1,000)
run-time schedules, so the bench gives the definition ``schedule_shards`` for a mean fill of three quarters of
that (14 shards for 10,000).
Each shard is a Scheduler Durable Object host (``tsumugi_scheduler.schedules.host``) over the local runtime's
Durable Object SQL (SQLite files, WAL, ``synchronous=NORMAL``), enqueueing into real JobShard hosts. The clock
is virtual but follows the wall clock from the due minute on, so each shard's alarm loop (each alarm fires up
to 500 due rows, then re-arms at once) runs as it would at that minute; the shards' alarms run one shard after
the other on this one core (on Cloudflare they run side by side, so the lateness here is an upper bound):

- ``tsumugi_lateness_p50_ms`` / ``_p99_ms``: how long after the due minute each occurrence's job was stored
  in its JobShard (the job's ``created_at``);
- ``tsumugi_ms_per_fire``: every shard's alarms' wall time divided by the occurrences fired (decide, read
  overlap state, build the job, enqueue it into its shard, record the row); ``tsumugi_cpu_ms_per_fire`` the
  same in this process's CPU time (the local runtime runs every object in this process), which other work on
  a shared machine moves less than the wall time.

huey (``SqliteHuey``): N periodic tasks ``crontab(minute='*')``; at the same minute its consumer's scheduler
reads the periodic tasks (``read_periodic``) and enqueues each one; lateness is the wall time from the minute
to each task's enqueue, and ``huey_ms_per_fire`` the total over N (``huey_cpu_ms_per_fire`` in CPU time;
SQLite file, WAL, ``fsync=False``, i.e. ``synchronous=OFF``: laxer than Tsumugi's, so the comparison favours
huey). Both store every fired job in SQLite;
huey keeps no per-schedule bookkeeping (last run, errors, skips), Tsumugi does.

The full mode runs ``--rounds`` (3) alternating rounds, Tsumugi then huey, each on fresh stores, and reports
each figure's median over the rounds with every round's per-fire figures beside it: the machine's noise
(+-30% between runs of the same code) then falls on both systems alike, as in bench/e2e.py. The process's
garbage collector is set as ``tsumugi dev`` sets it (``tsumugi_dev.gc_policy``), for both systems alike, and
Tsumugi's rounds run on ``tsumugi dev``'s event loop (``tsumugi_dev.event_loop``, ADR-0181).
Prints the figures and one ``RESULT {json}`` line. ``--quick`` uses 1,000 schedules and one round (a smoke
test).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Final

from huey import SqliteHuey, crontab  # pyright: ignore[reportMissingTypeStubs]

from tsumugi_core.testing import FixedClock
from tsumugi_dev import event_loop
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_dev.gc_policy import tune_for_throughput
from tsumugi_scheduler import timing
from tsumugi_scheduler.definition import TsumugiDefinition, define_tsumugi
from tsumugi_scheduler.schedules.host import MAX_RUNTIME_SCHEDULES, SchedulerHost
from tsumugi_scheduler.schedules.routing import object_name, shard_of_schedule
from tsumugi_scheduler.shard_host import JobShardHost

T0: Final = 1_767_225_600_000  # 2026-01-01T00:00:00Z, a minute boundary
MINUTE: Final = 60_000
KEYS: Final = (
    "mode",
    "schedules",
    "schedule_shards",
    "fired",
    "alarms",
    "tsumugi_lateness_p50_ms",
    "tsumugi_lateness_p99_ms",
    "tsumugi_ms_per_fire",
    "tsumugi_cpu_ms_per_fire",
    "tsumugi_create_ms_per_schedule",
    "huey_fired",
    "huey_lateness_p50_ms",
    "huey_lateness_p99_ms",
    "huey_ms_per_fire",
    "huey_cpu_ms_per_fire",
    "rounds",
    "tsumugi_ms_per_fire_runs",
    "huey_ms_per_fire_runs",
    "tsumugi_cpu_ms_per_fire_runs",
    "huey_cpu_ms_per_fire_runs",
    "ratio_per_fire",
    "ratio_cpu_per_fire",
)


class WallFollowingClock(FixedClock):
    """A virtual clock that, once started, moves with the wall clock from a chosen instant."""

    def __init__(self, start_ms: int) -> None:
        super().__init__(start_ms)
        self._origin: tuple[int, float] | None = None

    def follow_from(self, at_ms: int) -> None:
        self._origin = (at_ms, time.perf_counter())

    def now_ms(self) -> int:
        if self._origin is None:
            return super().now_ms()
        at, started = self._origin
        return at + int((time.perf_counter() - started) * 1000)

    async def sleep_ms(self, ms: int) -> None:
        self.advance(ms)


class AlarmStorage:
    """``ctx.storage``'s alarm methods."""

    def __init__(self) -> None:
        self.alarm: int | None = None

    async def getAlarm(self) -> int | None:
        return self.alarm

    async def setAlarm(self, at: int) -> None:
        self.alarm = at

    async def deleteAlarm(self) -> None:
        self.alarm = None


class Shards:
    """``env.JOB_SHARD``: a JobShard host per name over in-memory DO SQL."""

    def __init__(self, env: Any, definition: TsumugiDefinition, folder: Path) -> None:
        self._env = env
        self._definition = definition
        self._folder = folder
        self.objects: dict[str, JobShardHost] = {}
        self.storages: list[SqlStorage] = []

    def getByName(self, name: str) -> JobShardHost:
        if name not in self.objects:
            self.storages.append(SqlStorage(self._folder / f"{name.replace('#', '-')}.sqlite"))
            self.objects[name] = JobShardHost(AlarmStorage(), self.storages[-1], self._env, self._definition)
        return self.objects[name]

    def close(self) -> None:
        for storage in self.storages:
            storage.close()


class Schedulers:
    """``env.SCHEDULER``: a Scheduler host per shard name, each over its own DO SQL file and alarm."""

    def __init__(self, env: Any, definition: TsumugiDefinition, folder: Path) -> None:
        self.hosts: list[tuple[SchedulerHost, AlarmStorage, SqlStorage]] = []
        self._by_name: dict[str, SchedulerHost] = {}
        for shard in range(definition.schedule_shards):
            alarm, sql = AlarmStorage(), SqlStorage(folder / f"scheduler-{shard}.sqlite")
            host = SchedulerHost(alarm, sql, env, definition)
            self.hosts.append((host, alarm, sql))
            self._by_name[object_name(shard)] = host

    def getByName(self, name: str) -> SchedulerHost:
        return self._by_name[name]

    def close(self) -> None:
        for _, _, sql in self.hosts:
            sql.close()


class Env:
    def __init__(self, definition: TsumugiDefinition, folder: Path) -> None:
        self.JOB_SHARD = Shards(self, definition, folder)
        self.SCHEDULER = Schedulers(self, definition, folder)


def schedule_shards(count: int) -> int:
    """Scheduler shards for ``count`` run-time schedules: a mean fill of 3/4 of a shard's cap."""
    return max(1, math.ceil(count * 4 / (3 * MAX_RUNTIME_SCHEDULES)))


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def tsumugi_figures(count: int, folder: Path) -> dict[str, float]:
    clock = WallFollowingClock(T0)
    previous = timing.use_time_source(clock)
    definition = define_tsumugi(performers=["Report"], schedule_shards=schedule_shards(count))
    env = Env(definition, folder)
    try:
        started = time.perf_counter()
        for i in range(count):
            shard = shard_of_schedule(f"customer-{i}", definition.schedule_shards)
            answer = await env.SCHEDULER.getByName(object_name(shard)).create(
                shard,
                {
                    "name": f"customer-{i}",
                    "binding": "Report",
                    "payload": {"customer": i},
                    "cron": "* * * * *",
                },
            )
            assert answer["ok"], answer
        create_ms = (time.perf_counter() - started) * 1000 / count
        hosts = env.SCHEDULER.hosts
        assert all(alarm.alarm == T0 + MINUTE for _, alarm, _ in hosts)
        # The JobShard exists before the minute (its file and schema), as huey's database does.
        assert env.JOB_SHARD.getByName("Report#0").engine("Report#0") is not None
        # The alarms come at the minute; the clock runs with the wall from there.
        clock.follow_from(T0 + MINUTE)
        alarms = 0
        spent, cpu = time.perf_counter(), time.process_time()
        for host, alarm, _ in hosts:
            while alarm.alarm is not None and alarm.alarm <= clock.now_ms():
                alarms += 1
                await host.alarm()
        spent_ms = (time.perf_counter() - spent) * 1000
        cpu_ms = (time.process_time() - cpu) * 1000
        fired = sum(
            len(sql.exec("SELECT name FROM schedule WHERE last_run_at = ?", T0 + MINUTE).toArray())
            for _, _, sql in hosts
        )
        # Lateness: when each occurrence's job was stored in its shard (its created_at) behind the due minute.
        lateness = [
            float(r["created_at"] - T0 - MINUTE)
            for s in env.JOB_SHARD.storages
            for r in s.exec("SELECT created_at FROM job").toArray()
        ]
        assert len(lateness) == fired == count, (len(lateness), fired, count)
        return {
            "schedules": count,
            "schedule_shards": definition.schedule_shards,
            "fired": fired,
            "alarms": alarms,
            "tsumugi_lateness_p50_ms": _percentile(lateness, 0.5),
            "tsumugi_lateness_p99_ms": _percentile(lateness, 0.99),
            "tsumugi_ms_per_fire": spent_ms / fired,
            "tsumugi_cpu_ms_per_fire": cpu_ms / fired,
            "tsumugi_create_ms_per_schedule": create_ms,
        }
    finally:
        env.SCHEDULER.close()
        env.JOB_SHARD.close()
        timing.use_time_source(previous)


def _noop(customer: int = 0) -> None:
    return None


def huey_figures(count: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="huey-schedules-") as folder:
        # fsync=False (synchronous=OFF) is laxer than Tsumugi's NORMAL: the comparison favours huey.
        huey = SqliteHuey("bench", filename=str(Path(folder) / "huey.db"), results=False, fsync=False)
        for i in range(count):
            huey.periodic_task(crontab(minute="*"), name=f"customer-{i}")(_noop)  # pyright: ignore[reportUnknownMemberType]
        minute = dt.datetime(2026, 1, 1, 0, 1)
        lateness: list[float] = []
        started, cpu = time.perf_counter(), time.process_time()
        # What huey's consumer scheduler does at each minute (Scheduler.enqueue_periodic_tasks).
        for task in huey.read_periodic(minute):  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            huey.enqueue(task)  # pyright: ignore[reportUnknownMemberType]
            lateness.append((time.perf_counter() - started) * 1000)
        spent_ms = (time.perf_counter() - started) * 1000
        cpu_ms = (time.process_time() - cpu) * 1000
        queued = huey.pending_count()  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        huey.storage.close()  # pyright: ignore[reportUnknownMemberType]
        assert queued == count, (queued, count)
        return {
            "huey_fired": len(lateness),
            "huey_lateness_p50_ms": _percentile(lateness, 0.5),
            "huey_lateness_p99_ms": _percentile(lateness, 0.99),
            "huey_ms_per_fire": spent_ms / len(lateness),
            "huey_cpu_ms_per_fire": cpu_ms / len(lateness),
        }


_MEDIAN_KEYS: Final = (
    "tsumugi_lateness_p50_ms",
    "tsumugi_lateness_p99_ms",
    "tsumugi_ms_per_fire",
    "tsumugi_cpu_ms_per_fire",
    "tsumugi_create_ms_per_schedule",
    "huey_lateness_p50_ms",
    "huey_lateness_p99_ms",
    "huey_ms_per_fire",
    "huey_cpu_ms_per_fire",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 schedules, one round (smoke test)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="alternating rounds of both systems (full mode)"
    )
    args = parser.parse_args()
    count = 1_000 if args.quick else 10_000
    rounds = 1 if args.quick else max(1, args.rounds)
    runs: list[dict[str, Any]] = []
    tune_for_throughput()  # as `tsumugi dev` runs every object, for both systems alike (bench/e2e.py does the same)
    print(f"{count} schedules due at the same minute, {rounds} alternating round(s), each on fresh stores")
    for number in range(1, rounds + 1):
        with tempfile.TemporaryDirectory(prefix="tsumugi-schedules-") as folder:
            ours = event_loop.run(tsumugi_figures(count, Path(folder)))
        theirs = huey_figures(count)
        runs.append({**ours, **theirs})
        print(
            f"  round {number}: tsumugi ({ours['schedule_shards']} Scheduler DOs) fired {ours['fired']} in "
            f"{ours['alarms']} alarms, {ours['tsumugi_ms_per_fire']:.3f} ms per fire "
            f"(CPU {ours['tsumugi_cpu_ms_per_fire']:.3f}), lateness p50 {ours['tsumugi_lateness_p50_ms']:.0f} / "
            f"p99 {ours['tsumugi_lateness_p99_ms']:.0f} ms; huey fired {theirs['huey_fired']}, "
            f"{theirs['huey_ms_per_fire']:.3f} ms per fire (CPU {theirs['huey_cpu_ms_per_fire']:.3f}), lateness "
            f"p50 {theirs['huey_lateness_p50_ms']:.0f} / p99 {theirs['huey_lateness_p99_ms']:.0f} ms"
        )
    result: dict[str, Any] = {"mode": "quick" if args.quick else "full", **runs[-1]}
    result.update({key: statistics.median(run[key] for run in runs) for key in _MEDIAN_KEYS})
    result["rounds"] = rounds
    for key in ("tsumugi_ms_per_fire", "huey_ms_per_fire", "tsumugi_cpu_ms_per_fire", "huey_cpu_ms_per_fire"):
        result[f"{key}_runs"] = [round(run[key], 4) for run in runs]
    result["ratio_per_fire"] = result["tsumugi_ms_per_fire"] / result["huey_ms_per_fire"]
    result["ratio_cpu_per_fire"] = result["tsumugi_cpu_ms_per_fire"] / result["huey_cpu_ms_per_fire"]
    print(
        f"  median per fire: tsumugi {result['tsumugi_ms_per_fire']:.3f} ms, huey {result['huey_ms_per_fire']:.3f} ms,"
        f" tsumugi / huey {result['ratio_per_fire']:.2f}"
    )
    print(
        f"  median process CPU per fire: tsumugi {result['tsumugi_cpu_ms_per_fire']:.3f} ms, huey "
        f"{result['huey_cpu_ms_per_fire']:.3f} ms, ratio {result['ratio_cpu_per_fire']:.2f} (less moved by other load)"
    )
    assert set(result) == set(KEYS)
    print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    main()
