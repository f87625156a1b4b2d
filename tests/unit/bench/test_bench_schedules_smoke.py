"""The schedules benchmark runs in quick mode and ends with a parseable RESULT line carrying every figure."""

from __future__ import annotations

import pytest

from tests.unit.bench.quick_bench import run_quick


@pytest.mark.timeout(120)
def test_quick_bench_fires_every_schedule_on_both_systems() -> None:
    result = run_quick("schedules.py")
    assert (result["mode"], result["schedules"], result["fired"], result["huey_fired"]) == (
        "quick",
        1000,
        1000,
        1000,
    )
    assert result["alarms"] >= 2  # 500 per alarm
    assert 0 <= result["tsumugi_lateness_p50_ms"] <= result["tsumugi_lateness_p99_ms"]
    assert result["tsumugi_ms_per_fire"] > 0
    assert result["huey_ms_per_fire"] > 0
