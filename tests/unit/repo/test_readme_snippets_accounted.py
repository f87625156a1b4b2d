"""Every code block of the README is run by a test, or says why not (issue 26, acceptance 3).

A block runs when it is marked ``<!-- tour -->``, ``<!-- tour: server -->`` or ``<!-- client -->``
(tests/integration/test_readme_from_a_fresh_clone.py runs them in a fresh clone, as the README says); any other
block must carry ``<!-- not run: <reason> -->`` right before it, so a new snippet cannot slip in untested.
"""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "README.md"
_FENCE = re.compile(r"^```")
_MARK = re.compile(r"^<!-- (tour(: server)?|client|not run: .{10,}) -->$")


def _openings(text: str) -> list[tuple[int, str]]:
    """(line number, the line before) of every opening fence."""
    lines = text.splitlines()
    found: list[tuple[int, str]] = []
    inside = False
    for number, line in enumerate(lines, start=1):
        if _FENCE.match(line):
            if not inside:
                found.append((number, lines[number - 2] if number > 1 else ""))
            inside = not inside
    return found


def test_every_readme_block_is_run_or_says_why_not() -> None:
    openings = _openings(README.read_text(encoding="utf-8"))
    assert len(openings) >= 10
    unmarked = [number for number, before in openings if not _MARK.match(before)]
    assert unmarked == [], (
        f"README blocks at lines {unmarked} need <!-- tour -->, <!-- client --> or <!-- not run: why -->"
    )


def test_the_check_finds_an_unmarked_block() -> None:
    text = "<!-- tour -->\n```sh\necho\n```\n\n```python\nprint()\n```\n<!-- not run: too short -->\n```sh\nx\n```\n"
    marks = [(n, bool(_MARK.match(before))) for n, before in _openings(text)]
    assert marks == [(2, True), (6, False), (10, False)]  # a reason needs ten characters at least
