"""The end-to-end benchmark runs in quick mode and ends with a parseable RESULT line carrying every figure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench" / "e2e.py"
EXPECTED_KEYS = {
    "mode",
    "scheduler",
    "jobs",
    "tsumugi_completed",
    "tsumugi_seconds",
    "tsumugi_jobs_per_s",
    "start_latency_p50_ms",
    "start_latency_p99_ms",
    "complete_latency_p50_ms",
    "complete_latency_p99_ms",
    "huey_completed",
    "huey_seconds",
    "huey_jobs_per_s",
    "ratio_vs_huey",
    "rounds",
    "tsumugi_runs_per_s",
    "huey_runs_per_s",
    "ratio_vs_huey_median",
    "single_jobs",
    "single_complete_p50_ms",
    "single_complete_max_ms",
    "peak_rss_mb",
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("scheduler", ["plain", "example"])
def test_quick_e2e_bench_ends_with_one_result_line_with_every_key(scheduler: str) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--scheduler", scheduler],
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    result_lines = [line for line in lines if line.startswith("RESULT ")]
    assert result_lines == [lines[-1]], "exactly one RESULT line, and it comes last"
    result = json.loads(lines[-1].removeprefix("RESULT "))
    assert set(result) == EXPECTED_KEYS
    assert result["mode"] == "quick"
    assert result["scheduler"] == scheduler
    runs = ("tsumugi_runs_per_s", "huey_runs_per_s")
    assert [len(result[key]) for key in runs] == [result["rounds"]] * 2
    assert max(result["tsumugi_runs_per_s"]) == result["tsumugi_jobs_per_s"]
    numbers = {key: value for key, value in result.items() if key not in ("mode", "scheduler", *runs)}
    assert all(isinstance(value, int | float) and value >= 0 for value in numbers.values()), numbers
    # Every job went through the whole path on both systems (completion, not speed, is checked).
    assert result["tsumugi_completed"] == result["jobs"] == result["huey_completed"]
    assert result["single_jobs"] > 0
    assert result["peak_rss_mb"] > 0
