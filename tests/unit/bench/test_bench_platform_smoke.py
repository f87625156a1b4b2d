"""The platform cost benchmark runs in quick mode and its RESULT line holds the no-op job's billed units."""

from __future__ import annotations

import pytest

from tests.unit.bench.quick_bench import run_quick


@pytest.mark.timeout(180)
def test_quick_platform_bench_prices_the_noop_job() -> None:
    result = run_quick("platform.py", timeout_s=170)
    assert result["jobs_per_workload"] == 3
    # One dispatch message per job: written, read once, deleted (Cloudflare's three operations).
    assert result["queue_ops_per_job"] == 3.0
    # The shard takes the enqueue, an alarm, the report and an alarm: at most four requests per job.
    assert 0 < result["do_requests_per_job"] <= 4.0
    assert (
        result["rows_written_per_job"]
        == result["do_rows_written_per_job"] + result["d1_rows_written_per_job"]
    )
    # The floor is three queue operations and one request ($1.50 per million); Workflows one request ($0.30).
    assert result["ratio_to_floor"] == pytest.approx(result["usd_per_million_jobs"] / 1.5, rel=0.01)
    assert result["ratio_to_workflows"] == pytest.approx(result["usd_per_million_jobs"] / 0.3, rel=0.01)
    assert result["per_shard_jobs_per_s"] == round(1000 / result["do_requests_per_job"])
    # A step (ADR-0158): one save on the shard per step, no invocation of its own; an event to 1,000 waiting
    # jobs touches its box and their shard, not an object per job (about one request per resumed job).
    assert result["step_worker_requests"] == 0.0
    assert 1.0 <= result["step_do_requests"] <= 2.0
    assert result["step_do_rows_written"] > 0
    assert 0 < result["event_1_do_requests"] < result["event_1000_do_requests"] < 2 * 1_000
    assert result["step_median_us"] > 0
