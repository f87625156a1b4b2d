"""``tsumugi init [DIR]``: a project of your own with a scheduler, a performers and a producer Worker.

Layout (``tsumugi deploy`` and ``tsumugi dev`` rely on it; ADR-0049)::

    pyproject.toml     root uv project: dev dependencies on tsumugi-* and the performers package (path
                       source), where Tsumugi comes from (package_source), [tool.tsumugi] workers
    package.json       wrangler pinned for ``tsumugi deploy`` (``npm install`` puts it in node_modules/)
    README.md, .gitignore, tests/test_hello.py
    scheduler/         wrangler.jsonc, pyproject.toml, src/entry.py, .dev.vars.example, migrations/*.sql
    performers/        wrangler.jsonc, pyproject.toml (a package), src/entry.py,
                       src/<project>_performers/hello.py and flows/greetings.py
    producer/          wrangler.jsonc, pyproject.toml, src/entry.py

Worker names are ``<project>-scheduler`` etc., the project name coming from the folder's (or ``--name``).
The D1 migrations are the installed ``tsumugi_scheduler``'s own copy (``d1_migrations``), so a project
gets the schema its scheduler version expects. Nothing is overwritten: if any file to write exists, nothing
is written.
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath
from typing import Final

import msgspec

from tsumugi_dev.deploy_tools import WRANGLER_VERSION
from tsumugi_dev.scaffold.dependencies import worker_dependencies
from tsumugi_dev.scaffold.errors import ScaffoldError
from tsumugi_dev.scaffold.names import package_name, project_name
from tsumugi_dev.scaffold.package_source import checkout_folder, tsumugi_source_lines
from tsumugi_dev.scaffold.templates import destination, render, template_files, toml_list

__all__ = ["COMPATIBILITY_DATE", "MIGRATIONS_FOLDER", "InitResult", "init_project", "shipped_migrations"]

COMPATIBILITY_DATE: Final = "2026-07-01"
"""The Workers' ``compatibility_date`` (the one this repository's services use; a test keeps them equal)."""
MIGRATIONS_FOLDER: Final = PurePosixPath("scheduler/migrations")
"""Where the D1 read-model migrations go (the scheduler's ``migrations_dir``)."""


class InitResult(msgspec.Struct, frozen=True, kw_only=True):
    """What ``init_project`` made."""

    root: Path
    project: str
    package: str
    written: tuple[PurePosixPath, ...]


def shipped_migrations() -> list[tuple[str, str]]:
    """``(file name, SQL)`` of the D1 migrations the installed ``tsumugi_scheduler`` ships, in name order.

    Raises:
        ScaffoldError: tsumugi_scheduler is not installed, or ships none.
    """
    try:
        folder = resources.files("tsumugi_scheduler").joinpath("d1_migrations")
    except ModuleNotFoundError:
        raise ScaffoldError(
            "tsumugi-scheduler is not installed here; install it (pip install tsumugi-scheduler)"
        ) from None
    items: list[Traversable] = list(folder.iterdir()) if folder.is_dir() else []
    found = sorted(
        (item.name, item.read_text(encoding="utf-8")) for item in items if item.name.endswith(".sql")
    )
    if not found:
        raise ScaffoldError("the installed tsumugi_scheduler ships no D1 migrations (d1_migrations/*.sql)")
    return found


def _files(project: str, package: str) -> dict[PurePosixPath, str]:
    values = {
        "project": project,
        "package": package,
        "dataset": project.replace("-", "_") + "_metrics",
        "compatibility_date": COMPATIBILITY_DATE,
        "wrangler_version": WRANGLER_VERSION,
        "tsumugi_source": tsumugi_source_lines(checkout_folder()),
        # The flows live in the performers package: the scheduler Worker depends on it (ADR-0112).
        "scheduler_dependencies": toml_list(
            [*worker_dependencies("tsumugi-scheduler"), f"{project}-performers"]
        ),
    }
    files = {destination(path, package): render(text, values) for path, text in template_files("project")}
    for name, sql in shipped_migrations():
        files[MIGRATIONS_FOLDER / name] = sql
    return files


def _in_the_way(target: Path, path: PurePosixPath) -> PurePosixPath | None:
    """What under ``target`` stops ``path`` being written as a new file, if anything.

    The file itself when anything is there (a dangling symlink included: writing would go through it to
    wherever it points), else the first folder on the way that is a file or a symlink (a symlinked folder
    would put the project's files outside it).
    """
    if (target / path).exists() or (target / path).is_symlink():
        return path
    for folder in reversed(path.parents[:-1]):  # top-down, "." left out
        on_disk = target / folder
        if on_disk.is_symlink() or (on_disk.exists() and not on_disk.is_dir()):
            return folder
    return None


def init_project(target: Path, *, name: str | None = None) -> InitResult:
    """Write a new project into ``target`` (made if missing; it may hold other files, e.g. ``.git``).

    Args:
        target: The project folder.
        name: The project name (Worker-name prefix); default: from the folder's name.

    Raises:
        ScaffoldError: ``target`` is a file, the name is unusable, a file to write exists already or a folder on
            its way is a file or a symlink (nothing is written then), a file cannot be written, or a Tsumugi
            distribution is not installed.
    """
    if target.exists() and not target.is_dir():
        raise ScaffoldError(f"{target} exists and is not a folder")
    project = project_name(name if name is not None else target.resolve().name)
    package = package_name(project)
    files = _files(project, package)
    existing = sorted({str(blocker) for path in files if (blocker := _in_the_way(target, path)) is not None})
    if existing:
        shown = ", ".join(existing[:5]) + (f" and {len(existing) - 5} more" if len(existing) > 5 else "")
        raise ScaffoldError(
            f"{target} already has {shown}; refusing to overwrite (init writes a new project: "
            "choose an empty or new folder)"
        )
    for path, text in files.items():
        out = target / path
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
        except OSError as exc:  # e.g. a folder without write permission: say which file, not a traceback
            raise ScaffoldError(f"cannot write {out}: {exc.strerror or exc}") from exc
    return InitResult(root=target, project=project, package=package, written=tuple(sorted(files)))
