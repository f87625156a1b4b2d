"""A Tsumugi project's Workers, as its ``pyproject.toml`` lists them in ``[tool.tsumugi]``.

``tsumugi init`` writes, and this repository's root declares the same way::

    [tool.tsumugi]
    workers = ["scheduler/wrangler.jsonc", "performers/wrangler.jsonc", "producer/wrangler.jsonc"]

Paths are relative to the ``pyproject.toml``; the scheduler comes first, so under ``tsumugi dev`` it gets the
first port. ``tsumugi dev`` without CONFIG runs these Workers; ``tsumugi add-performer`` and
``tsumugi deploy`` find the project's Workers here too (ADR-0049).
"""

from __future__ import annotations

import tomllib
from pathlib import Path, PurePosixPath
from typing import Any, Final, cast

from tsumugi_dev.config import ConfigError

__all__ = ["PROJECT_FILE", "ProjectConfigError", "project_worker_configs"]

PROJECT_FILE: Final = "pyproject.toml"
"""The file that declares a project's Workers."""
_FIELD: Final = "tool.tsumugi.workers"


class ProjectConfigError(ConfigError):
    """``[tool.tsumugi]`` breaks a rule; the message names the file, the field and the rule."""


def _table(path: Path) -> dict[str, Any] | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ProjectConfigError(f"{path}: is not valid TOML ({exc})") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        return None
    found = cast("dict[str, Any]", tool).get("tsumugi")
    if found is None:
        return None
    if not isinstance(found, dict):
        raise ProjectConfigError(f"{path}: tool.tsumugi must be a table, got {type(found).__name__}")
    return cast("dict[str, Any]", found)


def _worker_path(path: Path, index: int, entry: object, seen: set[Path]) -> Path:
    field = f"{_FIELD}[{index}]"
    if not isinstance(entry, str) or not entry.strip():
        raise ProjectConfigError(f"{path}: {field} must be a non-empty string (a wrangler config path)")
    if PurePosixPath(entry).is_absolute() or Path(entry).is_absolute():
        raise ProjectConfigError(f"{path}: {field} must be relative to the project folder, got {entry!r}")
    resolved = (path.parent / entry).resolve()
    if not resolved.is_file():
        raise ProjectConfigError(f"{path}: {field} names {entry!r}, which is not a file")
    if resolved in seen:
        raise ProjectConfigError(f"{path}: {field} repeats {entry!r}; list each Worker once")
    seen.add(resolved)
    return path.parent / entry


def project_worker_configs(root: Path) -> list[Path]:
    """The wrangler configs ``root/pyproject.toml`` lists in ``[tool.tsumugi].workers``, in order.

    Args:
        root: The project folder (where ``pyproject.toml`` is).

    Returns:
        The configs' paths (``root`` joined with each entry); empty when there is no ``pyproject.toml`` or
        it has no ``[tool.tsumugi]`` table.

    Raises:
        ProjectConfigError: The file is not TOML, or ``workers`` is missing, not a non-empty list, or holds an
            entry that is not a relative path to an existing file, or repeats one.
    """
    path = root / PROJECT_FILE
    if not path.is_file():
        return []
    table = _table(path)
    if table is None:
        return []
    workers = table.get("workers")
    if workers is None:
        raise ProjectConfigError(f"{path}: {_FIELD} is missing; list the project's wrangler configs")
    if not isinstance(workers, list) or not workers:
        raise ProjectConfigError(
            f"{path}: {_FIELD} must be a non-empty list of wrangler config paths, got {workers!r}"
        )
    seen: set[Path] = set()
    return [_worker_path(path, i, entry, seen) for i, entry in enumerate(cast("list[object]", workers))]
