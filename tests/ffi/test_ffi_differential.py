"""The emulated ``js`` / ``pyodide.ffi`` checked against real Pyodide, case by case (ADR-0103).

Once per session, `run_pyodide.mjs` runs every case in Pyodide 0.28.2 under Node (the npm package pinned in
package-lock.json, offline). Each case then runs here, over the emulation installed in this environment, and
its description must equal the real one; `NOT_EMULATED` lists the exceptions with their reasons. Node or the
npm package missing is a failure: `npm ci` (scripts/test.sh) installs the package.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import ffi_runner
import pytest
from ffi_case import CASES
from ffi_not_emulated import NOT_EMULATED

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RECORD = HERE / "pyodide-outcomes.json"
PYODIDE_VERSION = "0.28.2"


@pytest.fixture(scope="session")
def pyodide_record() -> dict[str, Any]:
    """What real Pyodide made of every case, in this session."""
    node = shutil.which("node")
    assert node, "node is not on PATH: the FFI cases run in real Pyodide under Node.js 20+"
    package = ROOT / "node_modules" / "pyodide" / "package.json"
    assert package.is_file(), (
        f"{package} is missing: run `npm ci` at the repository root (scripts/test.sh does)"
    )
    done = subprocess.run(
        [node, str(HERE / "run_pyodide.mjs")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"run_pyodide.mjs failed:\n{done.stderr[-4000:]}"
    record: dict[str, Any] = json.loads(done.stdout)
    assert record["pyodide"] == PYODIDE_VERSION, (
        f"node_modules holds Pyodide {record['pyodide']}: run `npm ci`"
    )
    return record


@pytest.mark.parametrize("name", ffi_runner.case_names())
async def test_case_matches_pyodide(name: str, pyodide_record: dict[str, Any]) -> None:
    real = pyodide_record["outcomes"][name]
    emulated = json.loads(json.dumps(await ffi_runner.outcome(name), ensure_ascii=True))
    report = f"\n  emulated: {json.dumps(emulated)}\n  pyodide:  {json.dumps(real)}"
    if name in NOT_EMULATED:
        assert emulated != real, f"{name} now matches real Pyodide: remove it from NOT_EMULATED{report}"
    else:
        assert emulated == real, report


def test_record_is_what_pyodide_does_now(pyodide_record: dict[str, Any]) -> None:
    """The committed record (for reading and review) equals this session's run, so it cannot go stale."""
    committed = json.loads(RECORD.read_text(encoding="utf-8"))
    stale = sorted(
        set(committed["outcomes"]) ^ set(pyodide_record["outcomes"])
        | {
            name
            for name, real in pyodide_record["outcomes"].items()
            if committed["outcomes"].get(name) != real
        }
    )
    assert not stale, (
        f"{RECORD.name} is out of date for {stale}: run `node tests/ffi/run_pyodide.mjs --record`"
    )
    assert committed == pyodide_record


def test_not_emulated_lists_cases_with_reasons() -> None:
    unknown = sorted(set(NOT_EMULATED) - set(CASES))
    assert not unknown, f"NOT_EMULATED names no such case: {unknown}"
    assert all(reason.strip() for reason in NOT_EMULATED.values()), "each NOT_EMULATED entry needs its reason"
