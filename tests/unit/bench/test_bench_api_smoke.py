"""The REST list benchmark runs in quick mode, ends with one RESULT line, and every query is index-served."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench" / "api.py"
QUERIES = ("by_state", "by_binding", "by_concurrency_key", "newest_first")


def _bench_module() -> Any:
    spec = importlib.util.spec_from_file_location("bench_api", BENCH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(120)
def test_quick_api_bench_ends_with_one_result_line_with_every_figure() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=110, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert [line for line in lines if line.startswith("RESULT ")] == [lines[-1]]
    result = json.loads(lines[-1].removeprefix("RESULT "))
    assert (result["mode"], result["jobs"]) == ("quick", 20_000)
    assert (result["p50_target_ms"], result["p99_target_ms"]) == (50.0, 200.0)
    for name in QUERIES:
        assert result[f"{name}_indexed"] is True
        assert 0 < result[f"{name}_p50_ms"] <= result[f"{name}_p99_ms"]
        assert result[f"{name}_matches"] > 0
        # The total is capped exactly when more rows match than the API counts.
        assert result[f"{name}_total_capped"] is (result[f"{name}_matches"] > 10_000)
        assert isinstance(result[f"{name}_within_target"], bool)
        line = next(line for line in lines if line.strip().startswith(f"{name}:"))
        assert "(target < 50)" in line
        assert "(target < 200)" in line
    # "Retry all failed" of a binding reads only its index (ADR-0160), and answers as the statements before did.
    assert result["retry_all_failed_indexed"] is True
    assert result["retry_all_failed_before_0016_same_answer"] is True
    assert 0 < result["retry_all_failed_p50_ms"] <= result["retry_all_failed_p99_ms"]
    assert 0 < result["retry_all_failed_before_0016_p50_ms"] <= result["retry_all_failed_before_0016_p99_ms"]
    for key in ("auth_bearer_us", "auth_session_us", "auth_session_before_us", "auth_session_ratio"):
        assert result[key] > 0, key  # each figure is measured and printed; the bench compares them


def test_each_common_query_and_its_count_is_served_by_an_index(tmp_path: Path) -> None:
    bench = _bench_module()
    db = bench.build_read_model(tmp_path, 5_000)
    try:
        for name, query in bench.QUERIES.items():
            params = dict(p.split("=", 1) for p in query.split("&") if p)
            plans = bench.query_plans(db, bench.parse_job_query(params))
            assert len(plans) == 2, name  # the page and its capped count
            assert bench.served_by_index(plans), (name, plans)
        # The check itself tells a scan from a seek: a filter on an unindexed column is not index-served.
        assert not bench.served_by_index([["SCAN job"]])
        assert not bench.served_by_index(
            [["SEARCH job USING INDEX job_recent (updated_at<?)", "USE TEMP B-TREE FOR ORDER BY"]]
        )
    finally:
        db.close()
