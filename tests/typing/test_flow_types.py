"""The typed flow builder type-checks as documented (pyright on flow_cases.py): payloads and results flow."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

CASES = Path(__file__).with_name("flow_cases.py")
REPO_ROOT = Path(__file__).resolve().parents[2]
REVEALED_RE = re.compile(r"#\s*revealed:\s*(.+?)\s*$")
ERROR_RE = re.compile(r"#\s*error\s*$")


def test_flow_reveal_types_and_errors_match_the_annotations() -> None:
    pyright = Path(sys.executable).parent / "pyright"
    completed = subprocess.run(
        [str(pyright), "--outputjson", str(CASES)], capture_output=True, text=True, check=False, cwd=REPO_ROOT
    )
    lines = CASES.read_text(encoding="utf-8").splitlines()
    expected_reveals = {n: m.group(1) for n, text in enumerate(lines, 1) if (m := REVEALED_RE.search(text))}
    expected_errors = {n for n, text in enumerate(lines, 1) if ERROR_RE.search(text)}
    revealed: dict[int, str] = {}
    errors: set[int] = set()
    for diagnostic in json.loads(completed.stdout)["generalDiagnostics"]:
        line = int(diagnostic["range"]["start"]["line"]) + 1
        message = str(diagnostic["message"])
        if diagnostic["severity"] == "information" and message.startswith("Type of "):
            revealed[line] = message.split(' is "', 1)[1].rstrip('"')
        elif diagnostic["severity"] == "error":
            errors.add(line)
    assert revealed == expected_reveals
    assert errors == expected_errors
