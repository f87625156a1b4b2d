"""The workerd shape record: where it lives, how it is made, and how two records are compared (ADR-0104).

``tests/shapes/recorder/record.mjs`` runs JavaScript Workers on the workerd binary the pinned wrangler
installs (through miniflare, wrangler's own dependency), offline, and prints what each platform object
returned, as JSON made by the recorder's ``describe``. ``workerd-shapes.json`` is that output, committed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
RECORDER = HERE / "recorder" / "record.mjs"
COMMITTED = HERE / "workerd-shapes.json"
RERECORD = "node tests/shapes/recorder/record.mjs > tests/shapes/workerd-shapes.json"
RECORD_TIMEOUT_S = 120


def load_committed() -> dict[str, Any]:
    return json.loads(COMMITTED.read_text(encoding="utf-8"))


def record_now() -> dict[str, Any]:
    """Runs the recorder and returns its record; a missing node or npm package is an error, never a skip."""
    node = shutil.which("node")
    assert node is not None, (
        "node is not on PATH: the workerd shape record needs Node.js 20+ (scripts/test.sh)"
    )
    for package in ("wrangler", "miniflare", "workerd"):
        assert (ROOT / "node_modules" / package / "package.json").is_file(), (
            f"node_modules/{package} is missing: run `npm ci` at the repository root (scripts/test.sh does)"
        )
    done = subprocess.run(
        [node, str(RECORDER)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=RECORD_TIMEOUT_S,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 0, f"the recorder failed ({done.returncode}):\n{done.stderr[-4000:]}"
    return json.loads(done.stdout)


def differences(want: Any, got: Any, path: str = "$") -> Iterator[str]:
    """Every path where ``got`` differs from ``want``, each with both sides."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key in want.keys() | got.keys():
            here = f"{path}.{key}"
            if key not in got:
                yield f"{here}: missing (want {_short(want[key])})"
            elif key not in want:
                yield f"{here}: unexpected {_short(got[key])}"
            else:
                yield from differences(want[key], got[key], here)
    elif isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            yield f"{path}: {len(got)} items, want {len(want)} (want {_short(want)}, got {_short(got)})"
            return
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            yield from differences(w, g, f"{path}[{i}]")
    elif want != got or type(want) is not type(got):
        yield f"{path}: got {_short(got)}, want {_short(want)}"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 160 else text[:157] + "..."
