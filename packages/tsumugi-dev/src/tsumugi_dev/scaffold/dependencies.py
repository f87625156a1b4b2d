"""What a scaffolded Worker's ``[project.dependencies]`` lists: published Tsumugi packages by version.

pywrangler vendors a Worker's ``[project.dependencies]`` from PyPI (and Pyodide's index) and ignores any
local source, so the scaffold names the Tsumugi distributions at the versions installed here (the ones
``tsumugi dev`` runs) and the third-party pins those declare, read from their metadata (ADR-0049).
"""

from __future__ import annotations

import re
from importlib import metadata
from typing import Final

from tsumugi_dev.scaffold.errors import ScaffoldError

__all__ = ["installed_version", "worker_dependencies"]

_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_TSUMUGI: Final = "tsumugi-"


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_version(distribution: str) -> str:
    """The installed version of ``distribution``.

    Raises:
        ScaffoldError: It is not installed.
    """
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        raise ScaffoldError(
            f"{distribution} is not installed here, so its version is unknown; install it "
            f"(pip install {distribution}) and run the command again"
        ) from None


def _requirements(distribution: str) -> list[str]:
    found: list[str] = []
    for requirement in metadata.requires(distribution) or []:
        spec, _, marker = requirement.partition(";")
        if "extra" in marker:
            continue  # an optional extra's requirement is not needed to run
        # Another marker stays: tsumugi-client's httpx is for programs outside Workers (ADR-0107).
        found.append(spec.replace(" ", "") + (f"; {marker.strip()}" if marker.strip() else ""))
    return found


def worker_dependencies(top: str) -> list[str]:
    """``top`` and everything it needs: Tsumugi distributions pinned ``==`` their installed versions, then
    third-party requirements as the Tsumugi distributions declare them; each sorted by name.

    Raises:
        ScaffoldError: ``top`` or one of its Tsumugi requirements is not installed.
    """
    tsumugi: dict[str, str] = {}
    third_party: dict[str, str] = {}
    pending = [_canonical(top)]
    while pending:
        name = pending.pop()
        if name in tsumugi:
            continue
        tsumugi[name] = f"{name}=={installed_version(name)}"
        for spec in _requirements(name):
            matched = _NAME.match(spec)
            if matched is None:
                continue
            required = _canonical(matched.group(0))
            if required.startswith(_TSUMUGI):
                pending.append(required)
            else:
                third_party.setdefault(required, spec)
    return [tsumugi[n] for n in sorted(tsumugi)] + [third_party[n] for n in sorted(third_party)]
