"""The dashboard's scripts share one inline <script>, so each file declares what it shares (ADR-0154): the names
it takes from other files in a `/* global ... */` comment, the names it offers in an `/* exported ... */` one.
ESLint holds each file to its own list (scripts/dashboard_js/check.sh); this test holds the lists to each other.
A name declared at top level in two files is TypeScript's error there (TS2451/TS2393)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from tsumugi_scheduler.dashboard.page import SCRIPT_ORDER

SCRIPTS = (
    Path(__file__).resolve().parents[3]
    / "packages/tsumugi-scheduler/src/tsumugi_scheduler/dashboard/assets/js"
)
_DIRECTIVE = re.compile(r"/\*\s*(global|exported)\s+(.*?)\*/", re.DOTALL)


def _declared(kind: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(SCRIPTS.glob("*.js")):
        names: list[str] = []
        for directive, body in _DIRECTIVE.findall(path.read_text()):
            if directive == kind:
                names += [name.strip() for name in body.split(",") if name.strip()]
        found[path.name] = names
    return found


def test_every_script_is_in_the_page_once() -> None:
    assert sorted(SCRIPT_ORDER) == sorted(path.name for path in SCRIPTS.glob("*.js"))
    assert len(SCRIPT_ORDER) == len(set(SCRIPT_ORDER))


def test_every_name_is_offered_by_one_file_only() -> None:
    counts = Counter(name for names in _declared("exported").values() for name in names)
    assert {name: n for name, n in counts.items() if n > 1} == {}


def test_every_name_a_file_takes_is_offered_by_another_file() -> None:
    offered = {name: file for file, names in _declared("exported").items() for name in names}
    unmatched = {
        (file, name)
        for file, names in _declared("global").items()
        for name in names
        if offered.get(name, file) == file
    }
    assert unmatched == set()


def test_every_offered_name_is_taken_by_some_file() -> None:
    taken = {name for names in _declared("global").values() for name in names}
    offered = {name for names in _declared("exported").values() for name in names}
    assert offered - taken == set()
