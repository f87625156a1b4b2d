"""The Worker start benchmark runs in quick mode and ends with a parseable RESULT line for every Worker."""

from __future__ import annotations

import pytest

from tests.unit.bench.quick_bench import run_quick


@pytest.mark.timeout(120)
def test_quick_bench_measures_each_of_the_three_workers() -> None:
    result = run_quick("worker_start.py")
    assert result["startup_limit_s"] == 1.0
    assert result["pyodide_factor"] is None  # quick mode does not calibrate
    assert set(result["workers"]) == {"tsumugi-scheduler", "tsumugi-performers", "tsumugi-producer"}
    for figures in result["workers"].values():
        assert figures["cpython_s"] > 0
        assert 0 < figures["outside_stdlib"] <= figures["modules"]
        assert figures["estimate_pyodide_s"] is None
