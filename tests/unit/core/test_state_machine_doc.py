"""docs/state-machine.md shows exactly the TRANSITIONS table (drift test)."""

from __future__ import annotations

import re
from pathlib import Path

from tsumugi_core.states import TRANSITIONS, JobState

DOC = Path(__file__).resolve().parents[3] / "docs" / "state-machine.md"
EDGE = re.compile(r"^\s*([A-Z]+) --> ([A-Z]+)\s*$", re.M)


def test_the_mermaid_diagram_matches_the_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    block = text.split("```mermaid", 1)[1].split("```", 1)[0]
    drawn = {(JobState(a), JobState(b)) for a, b in EDGE.findall(block)}
    table = {(a, b) for a, targets in TRANSITIONS.items() for b in targets}
    assert drawn == table
