"""Totals of a many-seed simulation run in chunks: the ``RESULT`` lines of several bench/simulate.py outputs.

Run: ``uv run python bench/simulate_totals.py OUTPUT...`` (each the output of one ``bench/simulate.py --start S
--seeds N`` chunk). Prints the seed ranges found (and any gap or overlap between them), the commits the chunks
name on a ``commit <sha> ...`` first line when they have one, and the totals: seeds, simulated jobs, executions,
faults by kind, violations by invariant, failing seeds, the chunks' wall time summed; then one ``RESULT {json}``
line. Exit status 1 when any chunk found a violation or holds no ``RESULT`` line.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

_SEEDS = re.compile(r"seeds (\d+)\.\.(\d+)")


def read_chunk(path: Path) -> dict[str, Any]:
    """The ``RESULT`` of one chunk's output, with its ``commit`` and seed range when its first line names them.

    Raises:
        ValueError: the output has no ``RESULT`` line (the chunk did not finish).
    """
    lines = path.read_text().splitlines()
    results = [line.removeprefix("RESULT ") for line in lines if line.startswith("RESULT ")]
    if not results:
        raise ValueError(f"{path}: no RESULT line (the chunk did not finish)")
    result: dict[str, Any] = json.loads(results[-1])
    first = lines[0] if lines else ""
    if first.startswith("commit "):
        result["commit"] = first.split()[1]
        found = _SEEDS.search(first)
        if found:
            result["range"] = (int(found[1]), int(found[2]))
    return result


def totals(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The chunks' figures added up."""
    faults: Counter[str] = Counter()
    violations: Counter[str] = Counter()
    steps: Counter[str] = Counter()
    for chunk in chunks:
        faults.update(chunk["faults_by_kind"])
        steps.update(chunk.get("steps", {}))  # chunks run before step jobs joined the workload have none
        violations.update(chunk["violations_by_invariant"])
    ranges = sorted(tuple(c["range"]) for c in chunks if "range" in c)
    gaps = [(a[1] + 1, b[0] - 1) for a, b in itertools.pairwise(ranges) if b[0] != a[1] + 1]
    return {
        "chunks": len(chunks),
        "seeds": sum(c["seeds"] for c in chunks),
        "jobs": sum(c["jobs"] for c in chunks),
        "executions": sum(c["executions"] for c in chunks),
        "faults": sum(faults.values()),
        "faults_by_kind": dict(sorted(faults.items())),
        "steps": dict(sorted(steps.items())),
        "violations": sum(violations.values()),
        "violations_by_invariant": dict(sorted(violations.items())),
        "failing_seeds": sorted(s for c in chunks for s in c["failing_seeds"]),
        "wall_s": round(sum(c["wall_s"] for c in chunks), 1),
        "commits": dict(Counter(c.get("commit", "unknown") for c in chunks)),
        "seed_ranges": [list(r) for r in ranges],
        "gaps_or_overlaps": [list(g) for g in gaps],
    }


def main(argv: list[str] | None = None) -> int:
    """Print the totals of the chunk outputs named; the last line is ``RESULT {json}``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("outputs", nargs="+", type=Path)
    args = parser.parse_args(argv)
    chunks: list[dict[str, Any]] = []
    unfinished: list[str] = []
    for path in args.outputs:
        try:
            chunks.append(read_chunk(path))
        except ValueError as exc:
            unfinished.append(str(exc))
    result = totals(chunks)
    for line in unfinished:
        print(line)
    print(
        f"chunks           {result['chunks']} ({', '.join(f'{k[:12]} x{v}' for k, v in result['commits'].items())})"
    )
    ranges = result["seed_ranges"]
    span = f" (seeds {ranges[0][0]}..{ranges[-1][1]})" if ranges else ""
    gaps = f"; gaps or overlaps: {result['gaps_or_overlaps']}" if result["gaps_or_overlaps"] else ""
    print(f"seeds            {result['seeds']}{span}{gaps}")
    print(f"simulated jobs   {result['jobs']} ({result['executions']} executions)")
    print(
        f"faults injected  {result['faults']}: "
        + ", ".join(f"{k} {v}" for k, v in result["faults_by_kind"].items())
    )
    print("step jobs        " + ", ".join(f"{k} {v}" for k, v in result["steps"].items()))
    print(
        f"violations       {result['violations']}"
        + "".join(f"; {k} {v}" for k, v in result["violations_by_invariant"].items())
        + (f" (seeds {result['failing_seeds'][:20]})" if result["failing_seeds"] else "")
    )
    print(f"wall time        {result['wall_s']} s summed over the chunks")
    print("RESULT " + json.dumps(result, sort_keys=True), flush=True)
    return 1 if result["violations"] or unfinished else 0


if __name__ == "__main__":
    sys.exit(main())
