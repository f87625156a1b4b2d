"""The flows benchmark runs in quick mode and ends with a parseable RESULT line carrying every figure."""

from __future__ import annotations

import pytest

from tests.unit.bench.quick_bench import run_quick


@pytest.mark.timeout(120)
def test_quick_bench_completes_both_sides_and_the_big_run() -> None:
    result = run_quick("flows.py")
    assert (result["mode"], result["children"], result["run_nodes"], result["big_run_nodes"]) == (
        "quick",
        100,
        103,
        502,
    )
    assert result["plain_seconds"] > 0
    assert result["fan_out_seconds"] > 0
    assert result["ratio"] == pytest.approx(
        result["fan_out_seconds"] / result["plain_seconds"], rel=0.05
    )  # of rounded seconds
    assert result["run_writes_per_node"] < 1  # bulk statements, not one per node (ADR-0092)
    assert len(result["round_ratios"]) == 1
    assert result["median_round_ratio"] == result["round_ratios"][0]
    assert result["cpu_ratio"] == pytest.approx(
        result["fan_out_cpu_seconds"] / result["plain_cpu_seconds"], rel=0.05
    )
    assert result["advance_peak_kb"] > 0
