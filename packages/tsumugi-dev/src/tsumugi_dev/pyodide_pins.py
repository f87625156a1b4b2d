"""Pyodide 0.28's package set, and the check of a Worker's third-party pins against it (ADR-0040).

Python Workers with a compatibility date from 2025-09-29 run Python 3.13 on Pyodide 0.28; pywrangler resolves
a Worker's packages against PyPI and Pyodide's index. A package Pyodide builds (msgspec, pydantic-core, ...)
exists there in one version only, so a pin to another version cannot be installed; for the pure-Python ones
we hold pins to Pyodide's version too, so the Worker runs what the package set was tested with. The set is
``pyodide_packages.txt`` (its header cites the source).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources

from tsumugi_dev.vendoring import Requirement

__all__ = ["pin_problems", "pyodide_packages"]


@cache
def pyodide_packages() -> Mapping[str, str]:
    """Normalised package name -> the version Pyodide 0.28 ships."""
    text = resources.files("tsumugi_dev").joinpath("pyodide_packages.txt").read_text()
    pairs = (line.partition("==") for line in text.splitlines() if line and not line.startswith("#"))
    return {name: version for name, _, version in pairs}


def pin_problems(requirements: Iterable[Requirement]) -> list[str]:
    """One line per third-party requirement that Pyodide 0.28 ships in another version than it pins.

    A requirement of a package Pyodide ships must pin exactly its version; one Pyodide does not ship comes
    from PyPI and must be pure Python (which only pywrangler's resolution can check).
    """
    shipped = pyodide_packages()
    problems: list[str] = []
    for requirement in requirements:
        version = shipped.get(requirement.name)
        if version is None:
            continue
        if requirement.pin is None:
            problems.append(
                f"{requirement.text}: Pyodide 0.28 ships {requirement.name} {version}; pin it "
                f"({requirement.name}=={version})"
            )
        elif requirement.pin != version:
            problems.append(
                f"{requirement.text}: Pyodide 0.28 ships {requirement.name} {version}, not {requirement.pin}"
            )
    return problems
