"""bench/simulate_totals.py adds up the chunks of a many-seed run and says what is missing or failed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.unit.bench.quick_bench import BENCH_DIR


def _chunk(path: Path, start: int, seeds: int, violations: dict[str, int], failing: list[int]) -> Path:
    result: dict[str, Any] = {
        "seeds": seeds,
        "jobs": 10 * seeds,
        "executions": 11 * seeds,
        "faults": 2 * seeds,
        "faults_by_kind": {"drop": seeds, "restart": seeds},
        "violations": sum(violations.values()),
        "violations_by_invariant": violations,
        "failing_seeds": failing,
        "wall_s": 1.5 * seeds,
    }
    path.write_text(
        f"commit {'a' * 40} seeds {start}..{start + seeds - 1} started now\nseeds ...\n"
        f"RESULT {json.dumps(result)}\ncpu_user_s 1 cpu_sys_s 0 wall_s 2\n"
    )
    return path


def _run(*paths: Path) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, str(BENCH_DIR / "simulate_totals.py"), *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    last = done.stdout.strip().splitlines()[-1]
    return done.returncode, json.loads(last.removeprefix("RESULT "))


def test_chunks_add_up_and_a_gap_between_them_is_named(tmp_path: Path) -> None:
    code, totals = _run(
        _chunk(tmp_path / "a.out", 0, 100, {}, []), _chunk(tmp_path / "b.out", 200, 50, {}, [])
    )
    assert code == 0
    assert (totals["chunks"], totals["seeds"], totals["jobs"], totals["executions"]) == (2, 150, 1500, 1650)
    assert (totals["faults"], totals["faults_by_kind"]) == (300, {"drop": 150, "restart": 150})
    assert (totals["violations"], totals["wall_s"]) == (0, 225.0)
    assert totals["seed_ranges"] == [[0, 99], [200, 249]]
    assert totals["gaps_or_overlaps"] == [[100, 199]]
    assert totals["commits"] == {"a" * 40: 2}


def test_a_violation_or_an_unfinished_chunk_fails_the_run(tmp_path: Path) -> None:
    code, totals = _run(_chunk(tmp_path / "a.out", 0, 10, {"runs": 2}, [3, 7]))
    assert (code, totals["violations"], totals["failing_seeds"]) == (1, 2, [3, 7])
    unfinished = tmp_path / "b.out"
    unfinished.write_text("commit x seeds 10..19 started now\n")
    code, totals = _run(_chunk(tmp_path / "c.out", 0, 10, {}, []), unfinished)
    assert (code, totals["chunks"], totals["seeds"]) == (1, 1, 10)
