"""Which of a Worker's dependencies are vendored into its upload, and where their files are installed (ADR-0040).

pywrangler resolves ``[project.dependencies]`` against PyPI and Pyodide's index only, so a package it cannot
fetch must already be in the upload. Vendored: Tsumugi's own distributions (``tsumugi-*``) and any
distribution installed from a local folder (PEP 610 ``direct_url.json`` with ``dir_info``: workspace members,
editable and path installs such as ``tsumugi-examples``), taken from this environment's installed copy, so the
upload holds exactly the code ``tsumugi dev`` ran. Their own requirements are followed; every other
requirement is left to pywrangler. Files are found through ``importlib.metadata`` and the import system,
never through this repository's layout.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

import msgspec

from tsumugi_dev.local_packages import find_local_package
from tsumugi_dev.pyodide_markers import excluded_on_pyodide

__all__ = [
    "DependencyError",
    "Requirement",
    "Resolution",
    "VendoredPackage",
    "normalize_name",
    "parse_requirement",
    "resolve_dependencies",
]

_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")
_PIN = re.compile(r"^\s*==\s*([^\s,;]+)\s*$")


class DependencyError(ValueError):
    """A dependency cannot be vendored or left to pywrangler; the message names it and the rule."""


class Requirement(msgspec.Struct, frozen=True, kw_only=True):
    """One PEP 508 requirement, as much of it as deploying needs."""

    text: str
    """the requirement as written (what the generated pyproject passes on to pywrangler)"""
    name: str
    """normalised (PEP 503)"""
    pin: str | None
    """the version of an exact ``==`` pin, else None"""
    marker: str | None


class VendoredPackage(msgspec.Struct, frozen=True, kw_only=True):
    """An importable top-level package or module of a vendored distribution, and where it is installed."""

    distribution: str
    version: str
    import_name: str
    source: Path
    """the package folder, or the module file"""


class Resolution(msgspec.Struct, frozen=True, kw_only=True):
    """A Worker's dependencies split into what is copied into its upload and what pywrangler fetches."""

    vendored: tuple[VendoredPackage, ...]
    third_party: tuple[Requirement, ...]


def normalize_name(name: str) -> str:
    """PEP 503: lower case, runs of ``-_.`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_requirement(text: str) -> Requirement:
    """The name, exact pin and marker of a PEP 508 requirement (``"msgspec==0.19.0"``)."""
    requirement, _, marker = text.partition(";")
    found = _NAME.match(requirement)
    if found is None:
        raise DependencyError(f"dependency {text!r}: not a PEP 508 requirement (no package name)")
    rest = requirement[found.end() :]
    if rest.lstrip().startswith("["):
        rest = rest.split("]", 1)[1]
    pin = _PIN.match(rest)
    return Requirement(
        text=text.strip(),
        name=normalize_name(found.group(1)),
        pin=pin.group(1) if pin else None,
        marker=marker.strip() or None,
    )


def _is_vendored(name: str, dist: metadata.Distribution | None) -> bool:
    if name.startswith("tsumugi-"):
        return True
    if dist is None:
        return False
    direct_url = dist.read_text("direct_url.json")
    return bool(direct_url) and "dir_info" in json.loads(direct_url)


def _distribution(name: str) -> metadata.Distribution | None:
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def _import_names(dist: metadata.Distribution, name: str) -> list[str]:
    top_level = dist.read_text("top_level.txt")
    if top_level:
        return sorted({line.strip() for line in top_level.splitlines() if line.strip()})
    # A wheel install lists its files; an editable one lists only a .pth, and by convention (uv_build's
    # module-name default) imports as its normalised name.
    names = {
        Path(str(file)).parts[0].removesuffix(".py")
        for file in dist.files or ()
        if str(file).endswith(".py") and ".dist-info" not in str(file) and not str(file).startswith("..")
    }
    return sorted(names) or [name.replace("-", "_")]


def _packages(name: str, dist: metadata.Distribution) -> list[VendoredPackage]:
    found: list[VendoredPackage] = []
    for import_name in _import_names(dist, name):
        spec = importlib.util.find_spec(import_name)
        locations = list(spec.submodule_search_locations or ()) if spec else []
        if spec is None or (not locations and not spec.origin):
            raise DependencyError(
                f"dependency {name}: its distribution is installed but {import_name!r} cannot be imported"
            )
        source = Path(locations[0]) if locations else Path(str(spec.origin))
        found.append(
            VendoredPackage(distribution=name, version=dist.version, import_name=import_name, source=source)
        )
    return found


def _applies(requirement: Requirement) -> bool:
    # Extras are never requested here, nor is what a platform marker keeps off Pyodide (ADR-0107); other
    # markers (python_version, ...) are left to pywrangler.
    marker = requirement.marker
    return marker is None or ("extra" not in marker and not excluded_on_pyodide(marker))


def resolve_dependencies(dependencies: Sequence[str], *, owner: str) -> Resolution:
    """Split ``dependencies`` (a Worker's ``[project.dependencies]``) and those of what is vendored, transitively.

    ``owner`` names the pyproject in error messages.
    """
    vendored: dict[str, list[VendoredPackage]] = {}
    third_party: dict[str, Requirement] = {}
    pending = [(parse_requirement(text), owner) for text in dependencies]
    while pending:
        requirement, wanted_by = pending.pop(0)
        if not _applies(requirement) or requirement.name in vendored:
            continue
        dist = _distribution(requirement.name)
        local = find_local_package(requirement.name, Path(owner)) if dist is None else None
        if local is not None:  # the project's own package, by its path source (ADR-0112)
            vendored[requirement.name] = [
                VendoredPackage(
                    distribution=local.name,
                    version=local.version,
                    import_name=local.import_name,
                    source=local.source,
                )
            ]
            pending.extend((parse_requirement(text), local.name) for text in local.requires)
            continue
        if not _is_vendored(requirement.name, dist):
            _add_third_party(third_party, requirement, wanted_by)
            continue
        if dist is None:
            raise DependencyError(
                f"dependency {requirement.text!r} of {wanted_by}: not installed in this environment, so it "
                f"cannot be vendored (install it, e.g. `uv add {requirement.text}`, then deploy again)"
            )
        if requirement.pin is not None and requirement.pin != dist.version:
            raise DependencyError(
                f"dependency {requirement.text!r} of {wanted_by}: version {dist.version} is installed; the "
                f"upload is made from the installed copy, so install {requirement.pin} (or change the pin)"
            )
        vendored[requirement.name] = _packages(requirement.name, dist)
        pending.extend((parse_requirement(text), requirement.name) for text in dist.requires or ())
    return Resolution(
        vendored=tuple(package for name in sorted(vendored) for package in vendored[name]),
        third_party=tuple(third_party[name] for name in sorted(third_party)),
    )


def _add_third_party(found: dict[str, Requirement], requirement: Requirement, wanted_by: str) -> None:
    known = found.get(requirement.name)
    if known is None or (known.pin is None and requirement.pin is not None):
        found[requirement.name] = requirement
    elif requirement.pin is not None and requirement.pin != known.pin:
        raise DependencyError(
            f"dependency {requirement.name}: pinned to {known.pin} and to {requirement.pin} (by {wanted_by}); "
            "one upload holds one version"
        )
