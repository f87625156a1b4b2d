"""The dashboard's JavaScript checks (scripts/dashboard_js/check.sh, ADR-0155) pass on the scripts as shipped
and fail on a copy with a fault planted in one file: an undefined name, a name taken from another file without
declaring it, a type error, a line the formatter would change."""

from __future__ import annotations

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


def test_an_undefined_name_fails_the_check(copy: Path) -> None:
    _plant(
        copy, "steps.js", "\n/* exported plantedLabel */\nfunction plantedLabel() {\n  return stepLabl;\n}\n"
    )
    result = _check(copy)
    assert result.returncode != 0
    assert "'stepLabl' is not defined" in result.stdout


def test_a_name_of_another_file_must_be_declared_as_taken(copy: Path) -> None:
    # fmtTime is base.js's; steps.js may use it only by listing it in its `/* global ... */` comment.
    _plant(
        copy,
        "steps.js",
        "\n/* exported plantedTime */\nfunction plantedTime(at) {\n  return fmtTime(at);\n}\n",
    )
    result = _check(copy)
    assert result.returncode != 0
    assert "'fmtTime' is not defined" in result.stdout
    assert "steps.js" in result.stdout


def test_a_type_error_fails_the_check(copy: Path) -> None:
    # Clean for ESLint; TypeScript's checker knows Math.max takes numbers.
    _plant(
        copy,
        "steps.js",
        "\n/* exported plantedMax */\nfunction plantedMax() {\n  return Math.max('1', 2);\n}\n",
    )
    result = _check(copy)
    assert result.returncode != 0
    assert "-- tsc" in result.stdout
    assert "steps.js" in result.stdout + result.stderr
    assert "TS2345" in result.stdout + result.stderr


def test_an_unformatted_line_fails_the_check(copy: Path) -> None:
    _plant(copy, "steps.js", "\n/* exported plantedWidth */\nconst plantedWidth   =  {a:1};\n")
    result = _check(copy)
    assert result.returncode != 0
    assert "-- prettier" in result.stdout
    assert "steps.js" in result.stdout + result.stderr
