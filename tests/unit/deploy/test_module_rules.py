"""wrangler's module rules for a Python Worker, as tsumugi_dev.module_rules reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tsumugi_dev.jsonc import loads_jsonc
from tsumugi_dev.module_rules import (
    DEFAULT_RULES,
    PYTHON_RULE,
    Rule,
    effective_rules,
    glob_regex,
    match_modules,
    rules_from_config,
)

ROOT = Path(__file__).resolve().parents[3]
SCHEDULER_SRC = ROOT / "services" / "scheduler" / "src"
# The scheduler Worker's upload holds its own src/ and the vendored library package beside it.
LIBRARY_SRC = ROOT / "packages" / "tsumugi-scheduler" / "src"


@pytest.mark.parametrize(
    ("glob", "name", "matches"),
    [
        ("**/*.py", "entry.py", True),
        ("**/*.py", "a/b/c.py", True),
        ("**/*.py", "a/b/c.pyc", False),
        ("*.py", "a/b.py", False),
        ("**/dashboard/assets/**", "pkg/dashboard/assets/js/app.js", True),
        ("**/dashboard/assets/**/*.js", "pkg/dashboard/assets/index.html", False),
        ("**/dashboard/assets/**/*.js", "pkg/dashboard/assets/app.js", True),
        ("**/*.wasm?module", "x.wasm?module", True),
        ("**/*.wasm?module", "x.wasmXmodule", False),
        ("a/**b", "a/xb", True),
        ("a/**b", "a/x/b", False),
    ],
)
def test_globs_follow_glob_to_regexp_with_globstar(glob: str, name: str, matches: bool) -> None:
    assert bool(glob_regex(glob).fullmatch(name)) is matches


def test_python_rule_and_defaults_follow_the_users_rules() -> None:
    user = Rule(type="Text", globs=("**/*.css",), fallthrough=True)
    assert effective_rules([user]) == (user, PYTHON_RULE, *DEFAULT_RULES)


def test_a_rule_without_fallthrough_shadows_later_rules_of_its_type() -> None:
    user = Rule(type="Text", globs=("**/*.css",))
    assert effective_rules([user]) == (user, PYTHON_RULE, *DEFAULT_RULES[1:])
    own_python = Rule(type="PythonModule", globs=("src/**/*.py",))
    assert PYTHON_RULE not in effective_rules([own_python])


def test_duplicates_and_unmatched_files_are_reported() -> None:
    rules = effective_rules([Rule(type="Text", globs=("**/assets/**",), fallthrough=True)])
    found = match_modules(["a.py", "assets/index.html", "assets/app.js", "notes.md"], rules)
    assert found.modules == {"a.py": "PythonModule", "assets/index.html": "Text", "assets/app.js": "Text"}
    assert found.duplicates == ("assets/index.html",)
    assert found.unmatched == ("notes.md",)


def _scheduler_files() -> list[str]:
    return sorted(
        p.relative_to(root).as_posix()
        for root in (SCHEDULER_SRC, LIBRARY_SRC)
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )


def test_the_old_dashboard_rule_matched_index_html_twice() -> None:
    # The cause of wrangler's "Ignoring duplicate module: .../index.html" (issue 9, item 10).
    old = [Rule(type="Text", globs=("**/dashboard/assets/**",), fallthrough=True)]
    assert match_modules(_scheduler_files(), effective_rules(old)).duplicates == (
        "tsumugi_scheduler/dashboard/assets/index.html",
    )


def test_the_scheduler_uploads_each_dashboard_file_once_as_text() -> None:
    raw = loads_jsonc((ROOT / "services" / "scheduler" / "wrangler.jsonc").read_text())
    found = match_modules(_scheduler_files(), effective_rules(rules_from_config(raw)))
    assert found.duplicates == ()
    assets = [name for name in _scheduler_files() if "/dashboard/assets/" in name]
    assert len(assets) >= 3
    assert {found.modules[name] for name in assets} == {"Text"}
    assert [name for name in found.unmatched if not name.endswith("py.typed")] == []
