"""The tests are laid out by kind (ADR-0163): helpers import by their package names, no module is named after
the round that wrote it, and the integration tests run Workers of their own, the examples only where they are
the subject."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
TESTS = REPO / "tests"

FLAT_FOLDERS = (TESTS / "typing", TESTS / "ffi")
"""Folders whose modules import each other by bare names on purpose: the typing cases are pyright's input
files (checked file by file, beside their own helper), and the FFI cases also run in real Pyodide, copied into
one flat folder (tests/ffi/run_pyodide.mjs)."""

ROUND_SUFFIXES = ("_rules", "_edges", "_more")
NAMED_AFTER_THEIR_SUBJECT = {
    "tests/unit/deploy/test_module_rules.py": "tsumugi_dev.module_rules, wrangler's module rules",
    "tests/integration/test_flow_rules.py": "the Run Durable Object's rules, one test each",
}

EXAMPLES_ARE_THE_SUBJECT = {
    "tests/integration/test_e2e_order.py": "the example Order performer",
    "tests/integration/test_mail_sink.py": "the example performer Worker's mail sink",
    "tests/integration/test_producer_auth.py": "the example producer's sign-in",
}
"""The integration modules that run the example Workers (the README tour runs the repository as users do)."""


def python_files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*.py")):
        if "fixtures" not in path.relative_to(TESTS).parts and not any(
            map(path.is_relative_to, FLAT_FOLDERS)
        ):
            yield path


def helper_modules() -> dict[str, str]:
    """Each helper's bare name and its package name (tests.<folder>.<module>)."""
    helpers: dict[str, str] = {}
    for path in python_files(TESTS):
        if path.name.startswith("test_") or path.name in ("conftest.py", "__init__.py"):
            continue
        helpers[path.stem] = ".".join(path.relative_to(REPO).with_suffix("").parts)
    return helpers


def bare_helper_imports(source: str, helpers: dict[str, str]) -> list[tuple[int, str, str]]:
    """(line, bare name, package name) of every import that names a helper without its package."""
    found: list[tuple[int, str, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [(node.lineno, n, helpers[n.split(".")[0]]) for n in names if n.split(".")[0] in helpers]
    return found


def test_helpers_are_imported_by_their_package_names() -> None:
    helpers = helper_modules()
    assert {"api_world", "clock", "dev_process", "system_driver"} <= set(helpers)
    files = [
        *python_files(TESTS),
        *sorted((REPO / "bench").glob("*.py")),
        REPO / "scripts" / "screenshots.py",
    ]
    bare = [
        f"{path.relative_to(REPO)}:{line}: import {name} as {package}"
        for path in files
        for line, name, package in bare_helper_imports(path.read_text(encoding="utf-8"), helpers)
    ]
    assert bare == []


def test_a_bare_helper_import_is_found_and_its_package_named() -> None:
    helpers = {"api_world": "tests.api.api_world"}
    source = "import os\nfrom api_world import World\nfrom tests.api.api_world import T0\nimport api_world\n"
    assert bare_helper_imports(source, helpers) == [
        (2, "api_world", "tests.api.api_world"),
        (4, "api_world", "tests.api.api_world"),
    ]


def test_the_type_check_of_the_tests_needs_no_extra_paths() -> None:
    config = json.loads((REPO / "pyright.tests.json").read_text(encoding="utf-8"))
    assert "extraPaths" not in config


def test_no_test_module_is_named_after_a_testing_round() -> None:
    named = [
        str(path.relative_to(REPO))
        for path in python_files(TESTS)
        if path.name.startswith("test_") and path.stem.endswith(ROUND_SUFFIXES)
    ]
    assert sorted(named) == sorted(NAMED_AFTER_THEIR_SUBJECT)


def test_integration_tests_run_the_examples_only_where_they_are_the_subject() -> None:
    on_examples = sorted(
        str(path.relative_to(REPO))
        for path in python_files(TESTS / "integration")
        if any(
            word in path.read_text(encoding="utf-8")
            for word in ("example_configs()", "tsumugi_examples", "services/performers")
        )
        and path.name.startswith("test_")
    )
    assert on_examples == sorted(EXAMPLES_ARE_THE_SUBJECT)
    own = TESTS / "integration" / "fixtures" / "system"
    assert [p.name for p in own.rglob("*.py") if "tsumugi_examples" in p.read_text(encoding="utf-8")] == []
