"""The engine benchmark runs in quick mode and ends with a parseable RESULT line carrying every figure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench" / "engine.py"
EXPECTED_KEYS = {
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
}


@pytest.mark.timeout(120)
def test_quick_bench_ends_with_one_result_line_with_every_key() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=110, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    result_lines = [line for line in lines if line.startswith("RESULT ")]
    assert result_lines == [lines[-1]], "exactly one RESULT line, and it comes last"
    result = json.loads(lines[-1].removeprefix("RESULT "))
    assert set(result) == EXPECTED_KEYS
    assert result["mode"] == "quick"
    assert result["large_build"] in {"enqueue_many", "direct-insert"}
    numbers = {key: value for key, value in result.items() if key not in {"mode", "large_build"}}
    assert all(isinstance(value, int | float) and value >= 0 for value in numbers.values()), numbers
    assert result["lifecycle_jobs"] > 0
    assert result["writes_per_success"] > 0
    assert result["busy_key_other_dispatched"] is True  # another key's job goes at once past the busy key
