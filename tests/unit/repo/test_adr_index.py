"""Every ADR is indexed, numbered contiguously, well formed, and superseded ADRs link forward (ADR-0001).

The checker below returns a list of problems for a decision folder; it runs on the real `docs/decision` and on
small synthetic folders that show each rule catches what it should.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
DECISIONS = REPO_ROOT / "docs" / "decision"

ADR_FILE_RE = re.compile(r"(\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md")
TITLE_RE = re.compile(r"# ADR-(\d{4}): \S")
STATUS_RE = re.compile(r"^Status: ([a-z]+)", re.MULTILINE)
SUPERSEDED_BY_RE = re.compile(r"^Superseded by ADR-(\d{4})", re.MULTILINE)
SUPERSEDES_RE = re.compile(r"\bSupersedes ADR-(\d{4})", re.IGNORECASE)
INDEX_ROW_RE = re.compile(r"^\|\s*\[(\d{4})\]\(([^)]+)\)\s*\|[^|]*\|\s*([a-z]+)\s*\|", re.MULTILINE)
SECTIONS = ("## Context", "## Decision", "## Consequences", "## References")
MIN_LINES, MAX_LINES = 10, 40


def _file_problems(number: int, name: str, text: str) -> list[str]:
    problems: list[str] = []
    lines = text.splitlines()
    title = TITLE_RE.match(lines[0]) if lines else None
    if title is None or int(title.group(1)) != number:
        problems.append(f"{name}: first line must be '# ADR-{number:04d}: <title>'")
    if STATUS_RE.search(text) is None:
        problems.append(f"{name}: missing 'Status: <word>' line")
    headings = [line.strip() for line in lines if line.startswith("## ")]
    if tuple(h for h in headings if h in SECTIONS) != SECTIONS:
        problems.append(f"{name}: sections must be {', '.join(SECTIONS)} in this order")
    if not MIN_LINES <= len(lines) <= MAX_LINES:
        problems.append(f"{name}: {len(lines)} lines, must be {MIN_LINES} to {MAX_LINES}")
    return problems


def _read_adrs(folder: Path) -> tuple[dict[int, tuple[str, str]], list[str]]:
    adrs: dict[int, tuple[str, str]] = {}
    problems: list[str] = []
    for path in sorted(folder.glob("*.md")):
        if path.name == "README.md":
            continue
        match = ADR_FILE_RE.fullmatch(path.name)
        if match is None:
            problems.append(f"{path.name}: name must be NNNN-kebab-title.md")
            continue
        number = int(match.group(1))
        if number in adrs:
            problems.append(f"{path.name}: number {number:04d} is used twice")
            continue
        adrs[number] = (path.name, path.read_text(encoding="utf-8"))
    return adrs, problems


def _index_problems(adrs: dict[int, tuple[str, str]], index_text: str) -> list[str]:
    problems: list[str] = []
    rows = [(int(n), target, status) for n, target, status in INDEX_ROW_RE.findall(index_text)]
    listed = {number: (target, status) for number, target, status in rows}
    if [number for number, _, _ in rows] != sorted(listed):
        problems.append("README.md: rows must be in ascending order without repeats")
    for number, (target, status) in listed.items():
        if number not in adrs:
            problems.append(f"README.md: lists {number:04d} but there is no such ADR")
        elif target != adrs[number][0]:
            problems.append(f"README.md: {number:04d} links to {target}, the file is {adrs[number][0]}")
        else:
            problems.extend(_status_problems(number, adrs[number], status))
    problems.extend(
        f"README.md: {name} is not listed" for number, (name, _) in adrs.items() if number not in listed
    )
    return problems


def _status_problems(number: int, adr: tuple[str, str], index_status: str) -> list[str]:
    name, text = adr
    if SUPERSEDED_BY_RE.search(text):
        expected = "superseded"
    else:
        status = STATUS_RE.search(text)
        expected = status.group(1) if status else "?"
    if index_status != expected:
        return [f"README.md: {number:04d} has status {index_status}, {name} says {expected}"]
    return []


def _supersession_problems(adrs: dict[int, tuple[str, str]]) -> list[str]:
    problems: list[str] = []
    for number, (name, text) in adrs.items():
        for newer_text in SUPERSEDED_BY_RE.findall(text):
            newer = int(newer_text)
            if newer not in adrs:
                problems.append(f"{name}: superseded by missing ADR-{newer:04d}")
            elif newer <= number:
                problems.append(f"{name}: superseded by older ADR-{newer:04d}")
        for older_text in SUPERSEDES_RE.findall(text):
            older = int(older_text)
            if older not in adrs:
                problems.append(f"{name}: supersedes missing ADR-{older:04d}")
                continue
            older_name, older_body = adrs[older]
            if str(number).zfill(4) not in SUPERSEDED_BY_RE.findall(older_body):
                problems.append(f"{older_name}: lacks 'Superseded by ADR-{number:04d}'")
    return problems


def adr_problems(folder: Path) -> list[str]:
    """Every rule ADR-0001 states about the decision folder, as a list of human-readable problems."""
    adrs, problems = _read_adrs(folder)
    numbers = sorted(adrs)
    if numbers != list(range(1, len(numbers) + 1)):
        problems.append(f"numbering must run 0001..{len(numbers):04d} without gaps, found {numbers}")
    for number, (name, text) in adrs.items():
        problems.extend(_file_problems(number, name, text))
    index = folder / "README.md"
    if not index.exists():
        return [*problems, "README.md: missing index"]
    problems.extend(_index_problems(adrs, index.read_text(encoding="utf-8")))
    problems.extend(_supersession_problems(adrs))
    return problems


def test_the_decision_folder_keeps_every_rule() -> None:
    assert DECISIONS.is_dir()
    assert adr_problems(DECISIONS) == []


def test_there_is_at_least_one_adr() -> None:
    assert list(DECISIONS.glob("0001-*.md"))


# --- the checker itself, on synthetic folders ---------------------------------------------------------------


def _adr(number: int, *, status: str = "accepted", extra: str = "", filler: int = 6) -> str:
    body = "\n".join(f"line {i}" for i in range(filler))
    return (
        f"# ADR-{number:04d}: Title {number}\n\nStatus: {status} (2026-11-29)\n{extra}\n"
        f"## Context\n{body}\n\n## Decision\nx\n\n## Consequences\nx\n\n## References\nx\n"
    )


def _write(folder: Path, adrs: dict[str, str], index_rows: list[tuple[str, str, str]]) -> Path:
    folder.mkdir(exist_ok=True)
    for name, text in adrs.items():
        (folder / name).write_text(text, encoding="utf-8")
    rows = "\n".join(f"| [{n}]({target}) | T | {status} |" for n, target, status in index_rows)
    (folder / "README.md").write_text(
        f"# Decisions\n\n| ADR | Title | Status |\n| --- | --- | --- |\n{rows}\n"
    )
    return folder


def _good(tmp_path: Path) -> Path:
    return _write(
        tmp_path / "decision",
        {"0001-first.md": _adr(1), "0002-second-one.md": _adr(2)},
        [("0001", "0001-first.md", "accepted"), ("0002", "0002-second-one.md", "accepted")],
    )


def test_checker_accepts_a_good_folder(tmp_path: Path) -> None:
    assert adr_problems(_good(tmp_path)) == []


def test_checker_accepts_a_properly_superseded_adr(tmp_path: Path) -> None:
    folder = _write(
        tmp_path / "d",
        {
            "0001-old.md": _adr(1, extra="Superseded by ADR-0002\n"),
            "0002-new.md": _adr(2, extra="Supersedes ADR-0001.\n"),
        },
        [("0001", "0001-old.md", "superseded"), ("0002", "0002-new.md", "accepted")],
    )
    assert adr_problems(folder) == []


def test_checker_handles_many_adrs(tmp_path: Path) -> None:
    adrs = {f"{n:04d}-adr.md": _adr(n) for n in range(1, 31)}
    rows = [(f"{n:04d}", f"{n:04d}-adr.md", "accepted") for n in range(1, 31)]
    assert adr_problems(_write(tmp_path / "d", adrs, rows)) == []


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("0004-gap.md", _adr(4), "numbering must run"),
        ("0003-unlisted.md", _adr(3), "0003-unlisted.md is not listed"),
        ("notes.md", "x", "notes.md: name must be"),
        ("0002-second-one.md", None, "lists 0002 but there is no such ADR"),
        ("0002-second-one.md", _adr(3), "first line must be '# ADR-0002"),
        ("0002-second-one.md", _adr(2, filler=40), "must be 10 to 40"),
        ("0002-second-one.md", _adr(2).replace("## References", "## Refs"), "sections must be"),
        ("0002-second-one.md", _adr(2).replace("Status:", "State:"), "missing 'Status"),
        ("0002-second-one.md", _adr(2, status="proposed"), "has status accepted"),
        ("README.md", None, "README.md: missing index"),
    ],
)
def test_checker_reports_each_broken_rule(tmp_path: Path, name: str, text: str | None, expected: str) -> None:
    folder = _good(tmp_path)
    if text is None:
        (folder / name).unlink()
    else:
        (folder / name).write_text(text, encoding="utf-8")
    problems = adr_problems(folder)
    assert any(expected in problem for problem in problems), problems


def test_checker_reports_a_missing_forward_link(tmp_path: Path) -> None:
    folder = _write(
        tmp_path / "d",
        {"0001-old.md": _adr(1), "0002-new.md": _adr(2, extra="Supersedes ADR-0001.\n")},
        [("0001", "0001-old.md", "accepted"), ("0002", "0002-new.md", "accepted")],
    )
    assert adr_problems(folder) == ["0001-old.md: lacks 'Superseded by ADR-0002'"]


def test_checker_reports_a_superseded_adr_still_indexed_as_accepted(tmp_path: Path) -> None:
    folder = _write(
        tmp_path / "d",
        {
            "0001-old.md": _adr(1, extra="Superseded by ADR-0002\n"),
            "0002-new.md": _adr(2, extra="Supersedes ADR-0001.\n"),
        },
        [("0001", "0001-old.md", "accepted"), ("0002", "0002-new.md", "accepted")],
    )
    assert adr_problems(folder) == ["README.md: 0001 has status accepted, 0001-old.md says superseded"]


def test_checker_reports_links_to_missing_or_older_adrs(tmp_path: Path) -> None:
    folder = _write(
        tmp_path / "d",
        {
            "0001-a.md": _adr(1, extra="Superseded by ADR-0009\n"),
            "0002-b.md": _adr(2, extra="Superseded by ADR-0001\nSupersedes ADR-0007\n"),
        },
        [("0001", "0001-a.md", "superseded"), ("0002", "0002-b.md", "superseded")],
    )
    assert sorted(adr_problems(folder)) == [
        "0001-a.md: superseded by missing ADR-0009",
        "0002-b.md: superseded by older ADR-0001",
        "0002-b.md: supersedes missing ADR-0007",
    ]


def test_checker_reports_index_rows_out_of_order_and_wrong_targets(tmp_path: Path) -> None:
    folder = _write(
        tmp_path / "d",
        {"0001-first.md": _adr(1), "0002-second-one.md": _adr(2)},
        [("0002", "0002-second-one.md", "accepted"), ("0001", "0001-wrong.md", "accepted")],
    )
    assert adr_problems(folder) == [
        "README.md: rows must be in ascending order without repeats",
        "README.md: 0001 links to 0001-wrong.md, the file is 0001-first.md",
    ]
