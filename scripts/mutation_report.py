"""Summarise one module's mutmut run for scripts/mutation.sh: score, survivors with their diffs, equivalents.

Usage: python scripts/mutation_report.py WORK_DIR MODULE EQUIVALENTS_FILE

Prints the survivors (with ``mutmut show``'s diff) on stderr and one summary line on stdout. The equivalents
file lists mutants that cannot change behaviour, one a line: ``<mutant name>  <one-line reason>``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DETECTED = {"killed", "timeout"}
"""Outcomes where a test noticed the mutant (a mutant that makes the tests hang is caught too)."""


def _equivalents(path: Path, module: str) -> dict[str, str]:
    listed: dict[str, str] = {}
    if not path.exists():
        return listed
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, _, reason = line.partition(" ")
        if name.startswith(f"{module}."):
            listed[name] = reason.strip()
    return listed


def main(work: Path, module: str, equivalents_file: Path) -> int:
    outcomes: dict[str, str] = {}
    for raw in (work / "results.txt").read_text(encoding="utf-8").splitlines():
        name, sep, status = raw.strip().rpartition(": ")
        if sep and name.startswith(f"{module}."):
            outcomes[name] = status.strip()
    equivalents = _equivalents(equivalents_file, module)
    total = len(outcomes)
    detected = sum(1 for status in outcomes.values() if status in DETECTED)
    survivors = [name for name, status in outcomes.items() if status not in DETECTED]
    unexplained = [name for name in survivors if name not in equivalents]
    for name in unexplained:
        shown = subprocess.run(
            [sys.executable, "-m", "mutmut", "show", name],
            cwd=work,
            capture_output=True,
            text=True,
            check=False,
        )
        print(shown.stdout.rstrip(), file=sys.stderr)
    for name in survivors:
        if name in equivalents:
            print(f"   equivalent: {name}: {equivalents[name]}", file=sys.stderr)
    for name in sorted(set(equivalents) - set(survivors)):
        print(f"   stale entry in {equivalents_file.name} (no longer a survivor): {name}", file=sys.stderr)
    listed = len(survivors) - len(unexplained)
    score = 100.0 * detected / total if total else 100.0
    counted = total - listed
    adjusted = 100.0 * detected / counted if counted else 100.0
    print(
        f"{module:<34} {detected:>4}/{total:<4} killed {score:6.1f} %   "
        f"{listed} equivalent, {len(unexplained)} unexplained: {adjusted:6.1f} % without equivalents"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])))
