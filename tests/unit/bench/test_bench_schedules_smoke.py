"""The schedules benchmark runs in quick mode and ends with a parseable RESULT line carrying every figure."""

from __future__ import annotations

import collections
import importlib.util
import sys

import pytest

from tests.unit.bench.quick_bench import BENCH_DIR, run_quick
from tsumugi_scheduler.schedules.host import MAX_RUNTIME_SCHEDULES
from tsumugi_scheduler.schedules.routing import shard_of_schedule


@pytest.mark.timeout(120)
def test_quick_bench_fires_every_schedule_on_both_systems() -> None:
    result = run_quick("schedules.py")
    assert (result["mode"], result["schedules"], result["fired"], result["huey_fired"]) == (
        "quick",
        1000,
        1000,
        1000,
    )
    assert result["schedule_shards"] == 2  # 1,000 schedules at 3/4 of a shard's cap
    assert result["alarms"] >= 2  # 500 per alarm
    assert 0 <= result["tsumugi_lateness_p50_ms"] <= result["tsumugi_lateness_p99_ms"]
    assert result["tsumugi_ms_per_fire"] > 0
    assert result["huey_ms_per_fire"] > 0


def test_the_full_run_spreads_its_schedules_so_no_shard_holds_more_than_its_cap() -> None:
    spec = importlib.util.spec_from_file_location("bench_schedules", BENCH_DIR / "schedules.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    shards: int = module.schedule_shards(10_000)
    held = collections.Counter(shard_of_schedule(f"customer-{i}", shards) for i in range(10_000))
    assert shards == 14
    assert len(held) == shards
    assert max(held.values()) <= MAX_RUNTIME_SCHEDULES
