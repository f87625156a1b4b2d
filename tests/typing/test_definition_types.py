"""define_tsumugi's options type-check (pyright on definition_cases.py): a misspelt key is an error (ADR-0142)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

CASES = Path(__file__).with_name("definition_cases.py")
REPO_ROOT = Path(__file__).resolve().parents[2]
ERROR_RE = re.compile(r"#\s*error\s*$")


def test_misspelt_schedule_policy_and_run_options_are_type_errors() -> None:
    pyright = Path(sys.executable).parent / "pyright"
    completed = subprocess.run(
        [str(pyright), "--outputjson", str(CASES)], capture_output=True, text=True, check=False, cwd=REPO_ROOT
    )
    lines = CASES.read_text(encoding="utf-8").splitlines()
    expected = {n for n, text in enumerate(lines, 1) if ERROR_RE.search(text)}
    errors = {
        int(d["range"]["start"]["line"]) + 1
        for d in json.loads(completed.stdout)["generalDiagnostics"]
        if d["severity"] == "error"
    }
    assert len(expected) == 10
    assert errors == expected
