"""The dashboard's JavaScript checks (scripts/dashboard_js/check.sh, ADR-0154) pass on the scripts as shipped
and fail on a copy with a fault planted in one file: an undefined name, a name taken from another file without
declaring it, a type error, a line the formatter would change."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "scripts" / "dashboard_js" / "check.sh"
SCRIPTS = ROOT / "packages/tsumugi-scheduler/src/tsumugi_scheduler/dashboard/assets/js"


def _check(directory: Path) -> subprocess.CompletedProcess[str]:
    for tool in ("eslint", "tsc", "prettier"):
        assert (ROOT / "node_modules" / ".bin" / tool).exists(), f"{tool} missing: run `npm ci` first"
    return subprocess.run(
        ["bash", str(CHECK), str(directory)], capture_output=True, text=True, timeout=180, check=False
    )


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    target = tmp_path / "js"
    shutil.copytree(SCRIPTS, target)
    return target


def _plant(directory: Path, name: str, code: str) -> None:
    path = directory / name
    path.write_text(path.read_text() + code)


def test_the_shipped_scripts_pass_every_check() -> None:
    result = _check(SCRIPTS)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "-- prettier" in result.stdout  # all three ran


@pytest.mark.parametrize(
    ("code", "tool", "expected"),
    [
        # A name declared nowhere (a typo of steps.js's own stepLabel).
        ("function plantedLabel() {\n  return stepLabl;\n}", "eslint", "'stepLabl' is not defined"),
        # fmtTime is base.js's: steps.js may use it only by listing it in its `/* global ... */` comment.
        ("function plantedTime(at) {\n  return fmtTime(at);\n}", "eslint", "'fmtTime' is not defined"),
        # Clean for ESLint; TypeScript's checker knows Math.max takes numbers.
        ("function plantedMax() {\n  return Math.max('1', 2);\n}", "tsc", "TS2345"),
        # Clean for both; Prettier would space it.
        ("const plantedWidth   =  {a:1};", "prettier", "steps.js"),
    ],
    ids=["undefined-name", "undeclared-name-of-another-file", "type-error", "unformatted"],
)
def test_a_planted_fault_fails_the_check(copy: Path, code: str, tool: str, expected: str) -> None:
    name = code.split()[1].split("(")[0]
    _plant(copy, "steps.js", f"\n/* exported {name} */\n{code}\n")
    result = _check(copy)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    # The script stops at the first tool that fails: the last one it announced.
    assert re.findall(r"^-- (\w+)", result.stdout, flags=re.MULTILINE)[-1] == tool
    assert expected in output
    assert "steps.js" in output
