"""Running a benchmark script in quick mode and reading its ``RESULT {json}`` line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parents[3] / "bench"


def run_quick(script: str, timeout_s: float = 110) -> dict[str, Any]:
    """Run ``bench/<script> --quick``; its exit code must be 0 and its last line ``RESULT {json}``."""
    done = subprocess.run(
        [sys.executable, str(BENCH_DIR / script), "--quick"],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("RESULT "), last
    result: dict[str, Any] = json.loads(last.removeprefix("RESULT "))
    return result
