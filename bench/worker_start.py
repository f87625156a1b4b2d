"""What each Worker's entry module costs to import, next to Cloudflare's startup limit (docs/worker-start.md).

Run: ``uv run python bench/worker_start.py [--quick] [--runs N] [--pyodide DIR]``.

For each Worker this repository deploys, its upload is built (``tsumugi_dev.upload_build``) and its entry module
imported in a fresh CPython with only what the upload holds (``tsumugi_dev.start_cost``), every module compiled
from source as an upload has no bytecode. Printed per Worker: the median seconds over the runs, the modules
loaded (all, and outside the standard library, by top-level package) and the optional imports the upload lacks.

The reference is Cloudflare's startup limit: a Worker must parse and execute its global scope within 1 second
(developers.cloudflare.com/workers/platform/limits/#worker-startup-time). A Python Worker's global scope runs in
Pyodide (WebAssembly), slower than CPython. With ``--pyodide DIR`` (an unpacked npm ``pyodide`` package; by
default ``node_modules/pyodide`` when present) and ``node`` on PATH, the same pure-Python standard-library
imports are timed in Pyodide and in this CPython, cold, and their ratio scales each Worker's figure into a
Pyodide estimate; without it the ratio is not measured and no estimate is printed.

Budget (docs/worker-start.md): the estimated Pyodide import of an entry stays under the 1-second limit.

Prints the figures and one ``RESULT {json}`` line. ``--quick``: one run each, no Pyodide calibration.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

from tsumugi_dev.project import project_worker_configs
from tsumugi_dev.start_cost import StartCost, measure_start

ROOT: Final = Path(__file__).resolve().parents[1]
STARTUP_LIMIT_S: Final = 1.0
"""Cloudflare's Worker startup time limit (parse and run the global scope)."""
CALIBRATION: Final = (
    "import argparse, base64, calendar, dataclasses, datetime, decimal, email.message, hashlib, http.client, "
    "ipaddress, urllib.parse, uuid, zoneinfo"
)
"""Pure-Python standard-library imports Pyodide does not load at its own start (its stdlib has no bytecode)."""
_CALIBRATE: Final = r"""
import importlib, json, sys, time
preloaded = json.loads(sys.argv[1]) if len(sys.argv) > 1 else []
for name in preloaded:
    try:
        importlib.import_module(name)
    except Exception:
        pass
before, start = set(sys.modules), time.perf_counter()
exec(CALIBRATION)
print(json.dumps({"seconds": time.perf_counter() - start, "before": sorted(before),
                  "new": sorted(set(sys.modules) - before)}))
"""
_NODE: Final = """
const { loadPyodide } = require(process.argv[1] + "/pyodide.js");
(async () => {
  const py = await loadPyodide({ indexURL: process.argv[1] + "/" });
  py.globals.set("CALIBRATION", process.argv[2]);
  py.runPython(process.argv[3]);
})();
"""


def _json_line(out: str) -> str:
    return next(line for line in reversed(out.splitlines()) if line.startswith("{"))


def _pyodide_factor(pyodide: Path) -> dict[str, Any] | None:
    """Pyodide's seconds over CPython's for the same cold standard-library imports (None: cannot measure)."""
    node = shutil.which("node")
    if node is None or not (pyodide / "pyodide.js").is_file():
        return None
    done = subprocess.run(
        [node, "-e", _NODE, str(pyodide), CALIBRATION, _CALIBRATE],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    in_pyodide = json.loads(_json_line(done.stdout))
    cpython: list[float] = []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as empty:  # no cached bytecode, as in Pyodide's standard library
            environ = {**os.environ, "PYTHONPYCACHEPREFIX": empty, "PYTHONDONTWRITEBYTECODE": "1"}
            script = f"CALIBRATION = {CALIBRATION!r}\n{_CALIBRATE}"
            ran = subprocess.run(
                [sys.executable, "-c", script, json.dumps(in_pyodide["before"])],
                capture_output=True,
                text=True,
                check=True,
                env=environ,
                timeout=300,
            )
            cpython.append(json.loads(_json_line(ran.stdout))["seconds"])
    cpython_s = statistics.median(cpython)
    return {
        "pyodide_s": in_pyodide["seconds"],
        "cpython_s": cpython_s,
        "factor": in_pyodide["seconds"] / cpython_s,
        "modules": len(in_pyodide["new"]),
    }


def _measure(runs: int) -> dict[str, list[StartCost]]:
    found: dict[str, list[StartCost]] = {}
    with tempfile.TemporaryDirectory() as build:
        for config in project_worker_configs(ROOT):
            for _ in range(runs):
                cost = measure_start(config, Path(build))
                found.setdefault(cost.worker, []).append(cost)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one run per Worker, no Pyodide calibration")
    parser.add_argument("--runs", type=int, default=5, help="imports per Worker (median reported)")
    parser.add_argument("--pyodide", type=Path, default=ROOT / "node_modules" / "pyodide")
    options = parser.parse_args()
    runs = 1 if options.quick else options.runs
    calibration = None if options.quick else _pyodide_factor(options.pyodide)
    print(
        f"Python {sys.version.split()[0]}; {runs} cold import(s) per Worker; startup limit {STARTUP_LIMIT_S:.0f} s"
    )
    if calibration is None:
        print("Pyodide factor: not measured (no --pyodide folder with pyodide.js, or no node)")
    else:
        print(
            f"Pyodide factor: {calibration['factor']:.2f} (the same {calibration['modules']} standard-library "
            f"modules: Pyodide {calibration['pyodide_s'] * 1000:.0f} ms, CPython {calibration['cpython_s'] * 1000:.0f} ms)"
        )
    result: dict[str, Any] = {
        "python": sys.version.split()[0],
        "startup_limit_s": STARTUP_LIMIT_S,
        "pyodide_factor": calibration and calibration["factor"],
        "workers": {},
    }
    for worker, costs in _measure(runs).items():
        seconds = statistics.median(c.seconds for c in costs)
        last = costs[-1]
        outside = len(last.outside_stdlib())
        estimate = seconds * calibration["factor"] if calibration else None
        verdict = (
            ""
            if estimate is None
            else (
                f"; Pyodide estimate {estimate:.2f} s = {estimate / STARTUP_LIMIT_S:.1f}x the limit "
                f"({'within' if estimate <= STARTUP_LIMIT_S else 'OVER'})"
            )
        )
        print(f"\n{worker}: {seconds * 1000:.0f} ms on CPython{verdict}")
        print(
            f"  modules loaded: {len(last.modules)} ({outside} outside the standard library); `workers` first: "
            f"{last.sdk_modules} modules, {statistics.median(c.sdk_seconds for c in costs) * 1000:.0f} ms (not counted)"
        )
        print("  by package: " + ", ".join(f"{root} {n}" for root, n in last.by_root().items()))
        if last.refused:
            print(
                f"  optional imports the upload lacks (skipped, as on Cloudflare): {', '.join(last.refused)}"
            )
        result["workers"][worker] = {
            "cpython_s": round(seconds, 4),
            "modules": len(last.modules),
            "outside_stdlib": outside,
            "estimate_pyodide_s": estimate and round(estimate, 3),
        }
    print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    main()
