"""The Workers SDK an upload carries is the one the local runtime runs (issue 31, item 1; ADR-0109).

pywrangler adds ``workers-runtime-sdk`` to every Worker's requirements unpinned (workers-py 1.17.9,
``resolve.MANAGED_SDK_PACKAGE``), so without a pin an upload would carry whichever SDK is newest on the day of
the deploy, not the one every test ran. `WORKERS_RUNTIME_SDK_VERSION` is the deploy's pin, the one place the
deploy reads it; `pin_problems_in` lists every pin of the SDK in a project's files (``uv.lock``, the
pyprojects, a requirements file) that says otherwise, and a test keeps this repository's agreeing.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from tsumugi_dev.vendoring import DependencyError, Requirement, parse_requirement

__all__ = [
    "SDK_DISTRIBUTION",
    "WORKERS_RUNTIME_SDK_VERSION",
    "lock_pins",
    "pin_problems_in",
    "requirement_pins",
    "sdk_line",
    "sdk_requirement",
    "upload_sdk_pins",
    "with_sdk_pinned",
]

SDK_DISTRIBUTION: Final = "workers-runtime-sdk"
WORKERS_RUNTIME_SDK_VERSION: Final = "1.9.5"
"""The ``workers-runtime-sdk`` every upload pins: the version tsumugi-dev depends on, which ``tsumugi dev`` and
every test import as ``workers`` (uv.lock holds its wheel's hash; ADR-0097)."""
_PIN: Final = re.compile(r"(?<![\w.-])workers[-_.]runtime[-_.]sdk\s*==\s*([^\s;#\"',\]]+)", re.IGNORECASE)


def sdk_requirement() -> Requirement:
    """``workers-runtime-sdk==<WORKERS_RUNTIME_SDK_VERSION>``, as an upload's generated pyproject lists it."""
    return parse_requirement(f"{SDK_DISTRIBUTION}=={WORKERS_RUNTIME_SDK_VERSION}")


def with_sdk_pinned(third_party: Iterable[Requirement], *, owner: str) -> tuple[Requirement, ...]:
    """``third_party`` with the SDK pinned: added when missing, kept when it names the same version.

    Raises:
        DependencyError: a requirement of the Worker pins or ranges the SDK otherwise (``owner`` names it).
    """
    pinned = sdk_requirement()
    kept: list[Requirement] = []
    for requirement in third_party:
        if requirement.name != SDK_DISTRIBUTION:
            kept.append(requirement)
        elif requirement.pin != WORKERS_RUNTIME_SDK_VERSION:
            raise DependencyError(
                f"dependency {requirement.text!r} of {owner}: the local runtime runs {pinned.text}, and the "
                f"upload carries the SDK the tests ran; require {pinned.text} (or nothing: the deploy adds it)"
            )
    return tuple(sorted([*kept, pinned], key=lambda r: r.name))


def upload_sdk_pins(pyproject_text: str) -> list[str]:
    """The SDK versions an upload's generated ``pyproject.toml`` hands pywrangler (what the dry run reports)."""
    dependencies: list[Any] = tomllib.loads(pyproject_text).get("project", {}).get("dependencies", [])
    found = [parse_requirement(str(text)) for text in dependencies]
    return [r.pin or r.text for r in found if r.name == SDK_DISTRIBUTION]


def sdk_line(pyproject: Path) -> str:
    """The dry run's line for the SDK version an upload's generated ``pyproject.toml`` pins."""
    pins = upload_sdk_pins(pyproject.read_text())
    return f"  {SDK_DISTRIBUTION}: {', '.join(pins) or 'not pinned'} (the version tsumugi dev runs)"


def lock_pins(lock_text: str) -> list[str]:
    """The versions of the SDK that a ``uv.lock`` holds (one per ``[[package]]`` of that name)."""
    packages: list[Any] = tomllib.loads(lock_text).get("package", [])
    entries: list[dict[str, Any]] = [p for p in packages if isinstance(p, dict)]
    return [str(p.get("version")) for p in entries if p.get("name") == SDK_DISTRIBUTION]


def requirement_pins(text: str) -> list[str]:
    """The ``==`` versions of the SDK written in a pyproject or a requirements file (wherever they stand)."""
    return _PIN.findall(text)


def pin_problems_in(files: Mapping[str, str]) -> list[str]:
    """One line per pin of the SDK in ``files`` (name -> text) that is not `WORKERS_RUNTIME_SDK_VERSION`.

    ``uv.lock`` files are read as locks, every other file as text; files that pin nothing are fine.
    """
    problems: list[str] = []
    for name, text in files.items():
        pins = lock_pins(text) if name.endswith("uv.lock") else requirement_pins(text)
        problems.extend(
            f"{name}: pins {SDK_DISTRIBUTION} {pin}, the deploy pins {WORKERS_RUNTIME_SDK_VERSION}"
            for pin in pins
            if pin != WORKERS_RUNTIME_SDK_VERSION
        )
    return problems
