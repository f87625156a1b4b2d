"""schemathesis, every check, against a live ``tsumugi dev``: one command, offline, stops what it starts.

Run: ``uv run python scripts/schemathesis_live.py [--seed N] [--max-examples N] [--phases ...]``.

It starts ``tsumugi dev`` on this repository's Workers (scheduler, performers, producer) in a data folder of its
own, on free ports of 127.0.0.1 only, reads the API token it prints, and runs

    st --config-file tests/api/schemathesis.toml run <scheduler>/api/openapi.json --checks all
       -H "Authorization: Bearer <token>" --seed N

(the same run as ``docs/rest-api.md`` describes) with an NDJSON report in a temporary folder. Then it stops the
server and prints, per operation, how many test cases schemathesis sent and how many failed, the run's totals
(operations tested, cases, failures, schema errors), and exactly one ``RESULT {json}`` line. The exit code is
schemathesis's (0: no failure and no error).

``--max-examples`` caps the cases per operation and phase (schemathesis's ``-n``); without it schemathesis
uses its defaults (the full run: about 6 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

REPO: Final = Path(__file__).resolve().parents[1]
CONFIG: Final = REPO / "tests" / "api" / "schemathesis.toml"
READY_TIMEOUT_S: Final = 120.0
STATEFUL: Final = "Stateful tests"
"""The label schemathesis gives the stateful phase's scenarios (sequences of calls across operations)."""


@contextmanager
def dev_server(folder: Path, log: Path) -> Iterator[tuple[str, str]]:
    """``tsumugi dev`` on free ports of 127.0.0.1; yields the scheduler's base URL and the API token.

    Its output goes to ``log``; the server is stopped (SIGTERM, then SIGKILL after 30 s) on the way out.
    """
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("TSUMUGI_TOKEN", None)  # a token of its own, generated into the data folder
    command = [sys.executable, "-m", "tsumugi_dev", "dev", "--data-dir", str(folder / "data"), "--port", "0"]
    process = subprocess.Popen(
        command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    assert process.stdout is not None
    stdout = process.stdout
    url, token = "", ""
    timer = threading.Timer(READY_TIMEOUT_S, process.kill)  # never wait forever on a server that hangs
    timer.start()
    try:
        with log.open("w", encoding="utf-8") as sink:
            for line in stdout:
                sink.write(line)
                if found := re.search(r"API token: (\S+)", line):
                    token = found[1]
                if found := re.match(r"tsumugi-scheduler: (http://127\.0\.0\.1:\d+)", line):
                    url = found[1]
                if "ready" in line:
                    break
        timer.cancel()
        if not (url and token):
            raise SystemExit(f"tsumugi dev did not start (see {log})")

        def drain() -> None:
            with log.open("a", encoding="utf-8") as sink:
                for rest in stdout:
                    sink.write(rest)

        threading.Thread(target=drain, daemon=True).start()
        yield url, token
    finally:
        timer.cancel()
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def schemathesis(url: str, token: str, report: Path, args: argparse.Namespace) -> int:
    """Run ``st`` against the served document; its exit code."""
    command = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "--config-file",
        str(CONFIG),
        "run",
        f"{url}/api/openapi.json",
        "--checks",
        "all",
        "-H",
        f"Authorization: Bearer {token}",
        "--seed",
        str(args.seed),
        "--no-color",
        "--generation-database",
        "none",
        "--report",
        "ndjson",
        "--report-ndjson-path",
        str(report),
        "--request-timeout",
        "30",
    ]
    if args.max_examples:
        command += ["--max-examples", str(args.max_examples)]
    if args.phases:
        command += ["--phases", args.phases]
    if args.workers:
        command += ["--workers", str(args.workers)]
    if args.operation:
        command += ["--include-operation-id", args.operation]
    return subprocess.run(command, cwd=REPO, check=False).returncode


def tally(report: Path) -> dict[str, Any]:
    """Cases and failures per operation, and the run's totals, from the NDJSON events."""
    cases: dict[str, set[str]] = defaultdict(set)
    failed: dict[str, set[str]] = defaultdict(set)
    totals: dict[str, Any] = {}
    errors = 0
    for line in report.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        ((kind, body),) = event.items()
        if kind == "ScenarioFinished":
            recorder = body["recorder"]
            label = str(recorder["label"])
            for case_id in recorder.get("cases", {}):  # a skipped scenario records its label only
                cases[label].add(f"{body['phase']}:{case_id}")
            for case_id, checks in recorder.get("checks", {}).items():
                if any(str(check["status"]).lower() == "failure" for check in checks):
                    failed[label].add(f"{body['phase']}:{case_id}")
        elif kind in ("NonFatalError", "FatalError"):
            errors += 1
        elif kind == "EngineFinished":
            totals = body
    per_operation = {
        label: {"cases": len(ids), "failed": len(failed.get(label, ()))}
        for label, ids in sorted(cases.items())
    }
    return {"per_operation": per_operation, "errors": errors, "engine": totals}


def _stop(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds: the server is stopped and the temporary folder removed


def main() -> int:
    signal.signal(signal.SIGTERM, _stop)
    parser = argparse.ArgumentParser(description="schemathesis with every check against a live tsumugi dev.")
    parser.add_argument("--seed", type=int, default=1, help="schemathesis's seed (default 1)")
    parser.add_argument(
        "--max-examples", type=int, default=0, help="cases per operation and phase (default: st's)"
    )
    parser.add_argument("--phases", default="", help="e.g. coverage,fuzzing (default: every phase)")
    parser.add_argument("--workers", type=int, default=0, help="st's concurrent workers (default: st's)")
    parser.add_argument("--operation", default="", help="only this operationId (default: every operation)")
    parser.add_argument(
        "--keep", type=Path, help="copy the NDJSON report and the server's log into this folder"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="st-live-") as temp:
        folder = Path(temp)
        report, log = folder / "events.ndjson", folder / "dev.log"
        with dev_server(folder, log) as (url, token):
            code = schemathesis(url, token, report, args)
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            for path in (report, log):
                (args.keep / path.name).write_bytes(path.read_bytes())
        result = tally(report)
    per_operation: dict[str, dict[str, int]] = result["per_operation"]
    stateful = per_operation.pop(STATEFUL, {"cases": 0, "failed": 0})
    print(f"\n{'operation':<46} {'cases':>7} {'failed':>7}")
    for label, counts in [*per_operation.items(), (f"({STATEFUL}: sequences over the links)", stateful)]:
        print(f"{label:<46} {counts['cases']:>7} {counts['failed']:>7}")
    summary = {
        "seed": args.seed,
        "exit_code": code,
        "operations_tested": len(per_operation),
        "cases": sum(c["cases"] for c in per_operation.values()) + stateful["cases"],
        "failed_cases": sum(c["failed"] for c in per_operation.values()) + stateful["failed"],
        "errors": result["errors"],
        "per_operation": per_operation,
        "stateful": stateful,
    }
    print(
        f"\n{summary['operations_tested']} operations, {summary['cases']} cases, {summary['failed_cases']} failed, "
        f"{summary['errors']} errors; schemathesis exit code {code}"
    )
    print("RESULT " + json.dumps(summary, sort_keys=True), flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
