"""The attack benchmark runs in quick mode against a real ``tsumugi dev`` and ends with one RESULT line.

Whether each figure is within its target is the bench's printed judgement (figures come from bench/, never
from timed tests); this only checks that every attack ran and was measured.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench" / "http_attacks.py"


@pytest.mark.timeout(300)
def test_quick_attack_bench_measures_a_second_client_under_each_attack() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=290, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert [line for line in lines if line.startswith("RESULT ")] == [lines[-1]]
    result = json.loads(lines[-1].removeprefix("RESULT "))
    assert (result["mode"], result["target_ms"]) == ("quick", 1000.0)
    for attack in ("baseline", "deep_body", "idle_flood", "never_read"):
        assert result[f"{attack}_p50_ms"] > 0, attack
        assert isinstance(result[f"{attack}_within_target"], bool), attack
