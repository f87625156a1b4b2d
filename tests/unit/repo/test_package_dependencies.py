"""Each package declares only the Tsumugi packages below it (ADR-0111), in its pyproject and installed metadata.

The import contracts (test_import_contracts.py) check what the code imports; this checks what installing a
package pulls in, which is what a Worker's upload and a user's environment get.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]

ALLOWED: dict[str, set[str]] = {
    "tsumugi-core": set(),
    "tsumugi-client": {"tsumugi-core"},
    "tsumugi-performer": {"tsumugi-core"},
    "tsumugi-scheduler": {"tsumugi-core"},
    "tsumugi-dev": {"tsumugi-core", "tsumugi-client", "tsumugi-performer", "tsumugi-scheduler"},
    "tsumugi-simulation": {
        "tsumugi-core",
        "tsumugi-client",
        "tsumugi-performer",
        "tsumugi-scheduler",
        "tsumugi-dev",
    },
}
"""For each distribution under packages/: the Tsumugi distributions it may depend on."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _name(requirement: str) -> str:
    found = _NAME.match(requirement.strip())
    assert found is not None, requirement
    return re.sub(r"[-_.]+", "-", found.group(0)).lower()


def _declared(distribution: str) -> list[str]:
    folder = REPO_ROOT / "packages" / distribution
    project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == distribution
    return [_name(text) for text in project.get("dependencies", [])]


def test_every_package_folder_is_listed() -> None:
    folders = {p.name for p in (REPO_ROOT / "packages").iterdir() if (p / "pyproject.toml").is_file()}
    assert folders == set(ALLOWED)


@pytest.mark.parametrize("distribution", sorted(ALLOWED))
def test_a_package_depends_only_on_the_tsumugi_packages_below_it(distribution: str) -> None:
    ours = {name for name in _declared(distribution) if name.startswith("tsumugi")}
    assert ours <= ALLOWED[distribution], sorted(ours - ALLOWED[distribution])


def test_the_scheduler_library_declares_the_core_and_third_party_packages_only() -> None:
    declared = _declared("tsumugi-scheduler")
    assert [name for name in declared if name.startswith("tsumugi")] == ["tsumugi-core"]
    installed = [_name(text) for text in metadata.requires("tsumugi-scheduler") or []]
    assert sorted(installed) == sorted(declared)
    assert "tsumugi-examples" not in installed


def test_no_package_depends_on_the_examples_or_this_repositorys_deployment() -> None:
    for distribution in ALLOWED:
        assert not {"tsumugi-examples", "tsumugi-scheduler-service"} & set(_declared(distribution)), (
            distribution
        )
