"""Performer[P, R] and the testing helpers type-check as documented (pyright on performer_cases.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

CASES = Path(__file__).with_name("performer_cases.py")
REPO_ROOT = Path(__file__).resolve().parents[2]
REVEALED_RE = re.compile(r"#\s*revealed:\s*(.+?)\s*$")
ERROR_RE = re.compile(r"#\s*error\s*$")


def _pyright_diagnostics(cases: Path = CASES) -> list[dict[str, object]]:
    pyright = Path(sys.executable).parent / "pyright"
    completed = subprocess.run(
        [str(pyright), "--outputjson", str(cases)],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO_ROOT,
    )
    return json.loads(completed.stdout)["generalDiagnostics"]


def _line(diagnostic: dict[str, object]) -> int:
    range_ = diagnostic["range"]
    assert isinstance(range_, dict)
    return int(range_["start"]["line"]) + 1  # type: ignore[index]


def test_reveal_types_and_errors_match_the_annotations() -> None:
    check_cases(CASES)


def check_cases(cases: Path) -> None:
    """Every "revealed" comment of ``cases`` is what pyright reveals there, and errors are exactly on "error" lines."""
    lines = cases.read_text(encoding="utf-8").splitlines()
    expected_reveals = {n: m.group(1) for n, text in enumerate(lines, 1) if (m := REVEALED_RE.search(text))}
    expected_errors = {n for n, text in enumerate(lines, 1) if ERROR_RE.search(text)}
    assert expected_reveals
    assert expected_errors

    revealed: dict[int, str] = {}
    errors: set[int] = set()
    for diagnostic in _pyright_diagnostics(cases):
        message = str(diagnostic["message"])
        if diagnostic["severity"] == "information" and message.startswith("Type of "):
            revealed[_line(diagnostic)] = message.split(' is "', 1)[1].rstrip('"')
        elif diagnostic["severity"] == "error":
            errors.add(_line(diagnostic))

    assert revealed == expected_reveals
    assert errors == expected_errors
