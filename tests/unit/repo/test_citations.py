"""Every citation in a comment or doc resolves inside the repository (ADR-0140).

A citation is a repository path (`docs/...`, `packages/...`, ...), optionally with a `#anchor`, a section
(`docs/reference/original.md §3.4`, or a bare `§2.1` inside a design or reference page, meaning that page) or an
entry of the additions or conventions pages (`docs/reference/additions.md A6`, `... conventions.md item 4`).
Documents outside the checkout are never cited. The checker returns problems for a set of files; it runs on the
repository and on small texts that show each rule catches what it should.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]

TEXT_SUFFIXES = {
    ".py",
    ".md",
    ".js",
    ".css",
    ".html",
    ".sql",
    ".toml",
    ".jsonc",
    ".sh",
    ".txt",
    ".cfg",
    ".ini",
}

# Spelled in pieces so this file does not match its own rules.
OUTSIDE = (
    "../" + "shared",
    "/work/" + "shared",
    "shared/" + "reference",
    "shared/" + "seeds",
    "shared/" + "ARCHITECTURE",
    "shared/" + "CONVENTIONS",
    "beyond-" + "the-original",
    "original-" + "behaviour",
)
BARE_REFERENCE = re.compile(r"\b[Rr]eference " + "§")
ROOTS = ("docs", "tests", "packages", "services", "migrations", "scripts", "bench")
PATH_RE = re.compile(r"(?<![\w./@-])((?:{})/[\w./-]*[\w/])(#[\w-]+)?".format("|".join(ROOTS)))
MD_PATH_RE = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.md)\b")
RFC_RE = re.compile(r"\bRFC \d+\w*")
SECTION_RE = re.compile("§" + r"\s?(\d+(?:\.\d+)*[a-z]?)")
ENTRY_RE = re.compile(
    r"docs/reference/(additions\.md) ([ABC]\d*)\b|docs/reference/(conventions\.md) items? (\d+)"
)
HEADING_RE = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)
LOOK_BACK = 160
"""How far before a `§` its page may be named (a list of sections after one path may wrap a line)."""

# Paths a comment names that are made by a user or a tool, never committed here.
NOT_IN_THE_REPOSITORY = {
    "docs/decision/NNNN-kebab-title.md": "the ADR file-name pattern (ADR-0001)",
    "services/scheduler/.dev.vars": "secrets a user writes beside the scheduler (gitignored)",
    "services/performers/producer/.dev.vars": "secrets a user writes beside the producer (gitignored)",
    "tests/test_hello.py": "the test `tsumugi init` writes into a new project",
    "bench/out": "where the benchmarks write their figures (gitignored)",
    "packages/wrangler/src/environment-variables/factory.ts": "cloudflare/workers-sdk, named with its repository",
    "packages/wrangler/src/deployment-bundle/rules.ts": "cloudflare/workers-sdk, named with its repository",
    "packages/workers-utils/src/config/validation.ts": "cloudflare/workers-sdk, named with its repository",
    "packages/miniflare/src/workers/queues/broker.worker.ts": "cloudflare/workers-sdk, named with its repository",
    "packages/httpx/meta.yaml": "pyodide/pyodide-recipes, named with its repository",
    "scripts/fetch-sdk-wheel.sh": "history: removed when the real SDK came in (ADR-0097)",
    "tests/contract/workers-runtime-sdk.txt": "history: the SDK pin moved into packages/tsumugi-dev/pyproject.toml",
    "docs/usage/type-conversions.md": "history: planned by ADR-0042, written as docs/client.md instead",
}


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_\[\]()]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def headings(text: str) -> list[str]:
    return [match.group(1).strip() for match in HEADING_RE.finditer(text)]


def has_section(text: str, number: str) -> bool:
    """A heading that starts with the section number (`### 1.2 ...`, `## 10. ...`)."""
    return any(re.match(re.escape(number) + r"[.\s]", heading + " ") for heading in headings(text))


def has_entry(page: str, text: str, entry: str) -> bool:
    if page == "additions.md":
        return any(re.match(re.escape(entry) + r"[.\s]", heading + " ") for heading in headings(text))
    return re.search(r"^" + re.escape(entry) + r"\. ", text, re.MULTILINE) is not None


def citation_problems(files: Mapping[str, str], exists: Iterable[str]) -> list[str]:
    """Problems of the citations in `files` (path -> text); `exists` lists every path in the repository."""
    present = set(exists)
    folders = {str(Path(path).parent) for path in present} | {
        str(parent) for path in present for parent in Path(path).parents
    }

    def text_of(path: str) -> str | None:
        full = REPO_ROOT / path
        if path in present and full.is_file():
            return full.read_text(encoding="utf-8")
        return files.get(path)

    problems: list[str] = []
    for name, text in sorted(files.items()):
        for number, line in enumerate(text.splitlines(), start=1):
            where = f"{name}:{number}"
            problems.extend(
                f"{where}: cites {word!r}, outside the repository" for word in OUTSIDE if word in line
            )
            if BARE_REFERENCE.search(line):
                problems.append(f"{where}: 'reference' without its page (docs/reference/original.md)")
            for match in PATH_RE.finditer(line):
                path, anchor = match.group(1).rstrip("/."), match.group(2)
                if (
                    path in NOT_IN_THE_REPOSITORY
                    or "NNNN" in path
                    or line[match.end() : match.end() + 1] in {"*", "<", "{"}
                ):
                    continue  # made elsewhere, or a pattern (`tests/unit/core/test_*.py`)
                if path not in present and path not in folders:
                    problems.append(f"{where}: {path} does not exist")
                elif anchor:
                    target = text_of(path)
                    if target is not None and anchor[1:] not in {slug(h) for h in headings(target)}:
                        problems.append(f"{where}: {path} has no section {anchor}")
            for match in ENTRY_RE.finditer(line):
                page, entry = (
                    (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
                )
                target = text_of("docs/reference/" + page)
                if target is not None and not has_entry(page, target, entry):
                    problems.append(f"{where}: docs/reference/{page} has no entry {entry}")
        problems.extend(_section_problems(name, text, text_of))
    return problems


def _section_problems(name: str, text: str, text_of: Callable[[str], str | None]) -> list[str]:
    problems: list[str] = []
    for match in SECTION_RE.finditer(text):
        before = text[max(0, match.start() - LOOK_BACK) : match.start()]
        pages = list(MD_PATH_RE.finditer(before))
        rfcs = list(RFC_RE.finditer(before))
        if rfcs and (not pages or rfcs[-1].start() > pages[-1].start()):
            continue  # a section of a standard, cited by its number
        line = text.count("\n", 0, match.start()) + 1
        if pages:
            page = pages[-1].group(1)
            page = page if "/" in page else str(Path(name).parent / page)
        elif name.endswith(".md") and name.startswith(("docs/design/", "docs/reference/")):
            page = name
        else:
            problems.append(f"{name}:{line}: §{match.group(1)} without the page it belongs to")
            continue
        target = text_of(page)
        if target is None:
            problems.append(f"{name}:{line}: §{match.group(1)} of {page}, which does not exist")
        elif not has_section(target, match.group(1)):
            problems.append(f"{name}:{line}: {page} has no section {match.group(1)}")
    return problems


@cache
def tracked_files() -> tuple[str, ...]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return tuple(path for path in listed if (REPO_ROOT / path).exists())


def repository_texts() -> dict[str, str]:
    texts: dict[str, str] = {}
    for path in tracked_files():
        if Path(path).suffix in TEXT_SUFFIXES and path != "tests/unit/repo/test_citations.py":
            texts[path] = (REPO_ROOT / path).read_text(encoding="utf-8", errors="replace")
    return texts


def test_every_citation_in_the_repository_resolves() -> None:
    assert citation_problems(repository_texts(), tracked_files()) == []


def test_the_original_is_defined_where_its_behaviour_is_written() -> None:
    glossary = (REPO_ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    assert re.search(r"\*\*the original\*\*.*docs/reference/original\.md", glossary, re.IGNORECASE)


EXISTING = ("docs/reference/original.md", "docs/reference/additions.md", "docs/design/scheduler-rpc.md")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("# see ../" + "shared/notes.md", "outside the repository"),
        ("# " + "beyond-" + "the-original A1", "outside the repository"),
        ("# as the reference " + "§3.4 says", "without its page"),
        ("# docs/design/job-shard-old.md", "docs/design/job-shard-old.md does not exist"),
        ("# docs/reference/original.md §99.1", "has no section 99.1"),
        ("# docs/reference/original.md#no-such-heading", "has no section #no-such-heading"),
        ("# docs/reference/additions.md A99", "has no entry A99"),
        ("# the original's rule (" + "§1.11)", "without the page it belongs to"),
    ],
)
def test_a_broken_citation_is_a_problem(text: str, problem: str) -> None:
    problems = citation_problems({"packages/x.py": text}, EXISTING)
    assert problems
    assert problem in problems[0]


@pytest.mark.parametrize(
    "text",
    [
        "# docs/reference/original.md §3.4, §10 item 16",
        "# docs/reference/original.md#34-backoff",
        "# docs/reference/additions.md A6",
        "# docs/reference/original.md (§1.2, §2.3,\n# §3.4)",
        "# RFC 6265bis §8.8 (SameSite)",
        "# docs/design/scheduler-rpc.md §2.3",
    ],
)
def test_a_good_citation_is_not_a_problem(text: str) -> None:
    assert citation_problems({"packages/x.py": text}, EXISTING) == []


def test_a_bare_section_inside_a_design_page_means_that_page() -> None:
    assert citation_problems({"docs/design/scheduler-rpc.md": "see §2.3"}, EXISTING) == []
    problems = citation_problems({"docs/design/scheduler-rpc.md": "see §9.9"}, EXISTING)
    assert problems == ["docs/design/scheduler-rpc.md:1: docs/design/scheduler-rpc.md has no section 9.9"]
