"""A short, fixed-seed schemathesis run with every check against a live ``tsumugi dev`` (ADR-0138).

The same run as ``scripts/schemathesis_live.py`` makes in full (``tsumugi dev`` on 127.0.0.1 with this
repository's Workers, the served document, tests/api/schemathesis.toml), cut to the fuzzing phase and a few
cases per operation so the suite can afford it: every operation is tested and none fails. The in-process run
(test_openapi_fuzz.py) covers the ASGI app alone; this one crosses the runtime (the FFI, D1, the Durable
Objects), where the live run found what the in-process one could not (a clamped bound reaching D1 as a BigInt).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_every_operation_of_a_live_dev_server_passes_every_check() -> None:
    command = [sys.executable, str(REPO / "scripts" / "schemathesis_live.py"), "--seed", "1", "--phases",
               "fuzzing", "--max-examples", "4"]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=840, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(lines[-1].removeprefix("RESULT "))
    assert (result["exit_code"], result["failed_cases"], result["errors"]) == (0, 0, 0), done.stdout[-6000:]
    assert result["operations_tested"] == 30
    assert all(counts["cases"] >= 1 for counts in result["per_operation"].values()), result["per_operation"]
