"""The scaffold's template files (package data under ``templates/``) and how placeholders are filled.

A template ``a/b.py.tmpl`` becomes ``a/b.py``; ``dot-x`` becomes ``.x`` and a ``__package__`` folder the
performers package (dotfiles and packages under ``templates/`` would otherwise act on this repository).
Placeholders are ``{{key}}`` or ``{{key:distribution}}``: ``{{version:tsumugi-dev}}`` is an installed version,
``{{dependencies:tsumugi-scheduler}}`` a TOML list of `worker_dependencies`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import PurePosixPath
from typing import Final

from tsumugi_dev.scaffold.dependencies import installed_version, worker_dependencies

__all__ = ["TEMPLATE_SUFFIX", "destination", "render", "template_files", "toml_list"]

TEMPLATE_SUFFIX: Final = ".tmpl"
_PLACEHOLDER: Final = re.compile(r"\{\{([a-z_]+)(?::([a-z0-9-]+))?\}\}")
_ROOT: Final = "templates"


def _walk(folder: Traversable, prefix: PurePosixPath) -> Iterator[tuple[PurePosixPath, Traversable]]:
    for item in sorted(folder.iterdir(), key=lambda t: t.name):
        if item.is_dir():
            yield from _walk(item, prefix / item.name)
        elif item.name.endswith(TEMPLATE_SUFFIX):
            yield prefix / item.name, item


def template_files(kind: str) -> list[tuple[PurePosixPath, str]]:
    """``(relative template path, text)`` of every template under ``templates/<kind>``, in path order."""
    folder = resources.files("tsumugi_dev.scaffold").joinpath(_ROOT, kind)
    return [(path, item.read_text(encoding="utf-8")) for path, item in _walk(folder, PurePosixPath())]


def toml_list(items: list[str]) -> str:
    """``items`` as a TOML array of strings, one a line."""
    return "[\n" + "".join(f'    "{item}",\n' for item in items) + "]"


def render(text: str, values: Mapping[str, str]) -> str:
    """``text`` with every placeholder filled.

    Raises:
        KeyError: A ``{{key}}`` that ``values`` lacks (a template bug, caught by the scaffold's tests).
        ScaffoldError: A distribution a placeholder names is not installed.
    """

    def fill(match: re.Match[str]) -> str:
        key, argument = match.group(1), match.group(2)
        if argument is None:
            return values[key]
        if key == "version":
            return installed_version(argument)
        if key == "dependencies":
            return toml_list(worker_dependencies(argument))
        raise KeyError(match.group(0))

    return _PLACEHOLDER.sub(fill, text)


def destination(template: PurePosixPath, package: str) -> PurePosixPath:
    """Where a template lands in the project: suffix dropped, ``dot-`` and ``__package__`` resolved."""
    parts = [package if part == "__package__" else part for part in template.parts]
    name = parts[-1].removesuffix(TEMPLATE_SUFFIX)
    parts[-1] = "." + name.removeprefix("dot-") if name.startswith("dot-") else name
    return PurePosixPath(*parts)
