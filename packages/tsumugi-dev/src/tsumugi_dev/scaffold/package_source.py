"""Where an ``init``ed project gets Tsumugi's packages: the checkout ``tsumugi init`` ran from, or PyPI (ADR-0112).

Until the packages are published, a project made by a ``tsumugi`` installed from a checkout (a uv workspace
member: PEP 610 ``direct_url.json`` with ``dir_info``) names that checkout's ``packages/tsumugi-dev`` as a uv
path source. uv follows the workspace's own sources from there, so every ``tsumugi-*`` package the project
needs comes from the same checkout, editable. Deleting that one line switches the project to the published
versions its ``==`` pins name. A ``tsumugi`` installed from an index or a wheel writes no source line.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["SOURCE_DISTRIBUTION", "checkout_folder", "tsumugi_source_lines"]

SOURCE_DISTRIBUTION = "tsumugi-dev"
"""The distribution whose install location decides where the project's Tsumugi packages come from."""


def checkout_folder(distribution: str = SOURCE_DISTRIBUTION) -> Path | None:
    """The folder ``distribution`` was installed from (a checkout's package folder), or None.

    None when it was installed from an index or a wheel (no ``direct_url.json``, or one without ``dir_info``).
    """
    try:
        text = metadata.distribution(distribution).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not text:
        return None
    info = json.loads(text)
    url = info.get("url")
    if "dir_info" not in info or not isinstance(url, str) or not url.startswith("file:"):
        return None
    folder = Path(unquote(urlsplit(url).path))
    return folder if (folder / "pyproject.toml").is_file() else None


def tsumugi_source_lines(folder: Path | None) -> str:
    """The ``[tool.uv.sources]`` lines (with their comment) that take Tsumugi from ``folder``; a comment only
    when ``folder`` is None (published packages)."""
    if folder is None:
        return "# Tsumugi's packages come from PyPI, at the versions pinned above."
    path = json.dumps(folder.resolve().as_posix())
    return (
        "# Tsumugi's packages come from the checkout `tsumugi init` ran from (they are not on PyPI yet); delete\n"
        "# the next line to use the published versions pinned above instead (ADR-0112).\n"
        f"{SOURCE_DISTRIBUTION} = {{ path = {path}, editable = true }}"
    )
