"""A project's own packages that a Worker depends on by a uv path source, read from their folders (ADR-0112).

An ``init``ed project's scheduler Worker depends on the project's performers package (its flows name the
performer classes). ``uv sync`` installs that package into the project's environment, and the vendoring then
finds it like any distribution installed from a folder. Before that (or from an environment that is not the
project's, such as a CI job that only builds uploads), the root ``pyproject.toml``'s ``[tool.uv.sources]``
says where it is: ``name = { path = "performers" }``. This module reads that folder's ``pyproject.toml`` for the
import name (``[tool.uv.build-backend] module-name``, else the normalised name) and its requirements.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, cast

import msgspec

__all__ = ["LocalPackage", "find_local_package"]


class LocalPackage(msgspec.Struct, frozen=True, kw_only=True):
    """A package of the project, found through a path source: where its code is and what it requires."""

    name: str
    version: str
    import_name: str
    source: Path
    requires: tuple[str, ...]


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def _path_sources(root_pyproject: Path) -> dict[str, Path]:
    sources = _read_toml(root_pyproject).get("tool", {}).get("uv", {}).get("sources", {})
    found: dict[str, Path] = {}
    if isinstance(sources, dict):
        for name, spec in sources.items():  # pyright: ignore[reportUnknownVariableType]
            if isinstance(spec, dict) and isinstance(spec.get("path"), str):  # pyright: ignore[reportUnknownMemberType]
                found[_normalize(str(name))] = (root_pyproject.parent / str(spec["path"])).resolve()  # pyright: ignore[reportUnknownArgumentType]
    return found


def _project_roots(start: Path) -> list[Path]:
    """``pyproject.toml`` files from ``start``'s folder upward (the Worker's own, then the project root's)."""
    folder = start if start.is_dir() else start.parent
    return [f / "pyproject.toml" for f in (folder, *folder.parents) if (f / "pyproject.toml").is_file()]


def find_local_package(name: str, start: Path) -> LocalPackage | None:
    """The package ``name`` as a path source of a ``pyproject.toml`` at or above ``start`` names it, or None."""
    wanted = _normalize(name)
    for pyproject in _project_roots(start):
        folder = _path_sources(pyproject).get(wanted)
        if folder is None:
            continue
        config = _read_toml(folder / "pyproject.toml")
        project = config.get("project", {})
        module = config.get("tool", {}).get("uv", {}).get("build-backend", {}).get("module-name")
        import_name = module if isinstance(module, str) else wanted.replace("-", "_")
        source = folder / "src" / import_name
        if not source.is_dir():
            return None
        requires: object = project.get("dependencies", [])
        return LocalPackage(
            name=wanted,
            version=str(project.get("version", "0")),
            import_name=import_name,
            source=source,
            requires=tuple(str(r) for r in cast("list[object]", requires))
            if isinstance(requires, list)
            else (),
        )
    return None
