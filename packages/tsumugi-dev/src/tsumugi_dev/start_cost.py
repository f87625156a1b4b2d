"""What importing a Worker's entry module costs: modules loaded and seconds, on CPython (docs/worker-start.md).

Cloudflare stops a Worker whose global scope (for a Python Worker: importing its entry module and everything
that imports) does not finish within its startup limit. That cannot be measured here (no Pyodide with our
packages offline), so this measures the same import on CPython as a proxy, in a fresh interpreter, with only
what the upload holds: the Worker's built ``src/`` (its code and the vendored packages, `upload_build`) first
on ``sys.path``, the third-party distributions its generated pyproject names (and what they require, extras
aside), the standard library, and the runtime's ``workers``, ``js`` and ``pyodide``. Any other top-level
module is refused as the platform would lack it, so an optional import (httpx's command line, for one) is
skipped here as it is there instead of being counted.

``workers`` is imported first and reported on its own: under ``tsumugi dev`` it brings the runtime's emulation
of what workerd provides natively.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, Final

import msgspec

from tsumugi_dev.upload_build import build_upload
from tsumugi_dev.vendoring import normalize_name, parse_requirement
from tsumugi_dev.worker_source import read_worker_source

__all__ = ["RUNTIME_MODULES", "StartCost", "measure_start", "third_party_modules", "upload_allowed_modules"]

RUNTIME_MODULES: Final = frozenset(
    {"workers", "js", "pyodide", "_pyodide_entrypoint_helper", "_cloudflare_compat_flags", "_cloudflare"}
)
"""Top-level modules an upload may import without holding them: workerd's and the SDK pywrangler adds."""

_PROBE: Final = r"""
import importlib, importlib.abc, importlib.machinery, json, sys, sysconfig, time

args = json.loads(sys.argv[1])
allowed = set(args["allowed"]) | set(sys.stdlib_module_names)
stdlib = tuple(sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib"))
site = tuple(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
refused = set()


def in_stdlib(top):
    found = importlib.machinery.PathFinder.find_spec(top)
    origin = (found.origin or "") if found else ""
    return origin.startswith(stdlib) and not origin.startswith(site)  # _sysconfigdata_..., say


class NotInTheUpload(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in allowed or in_stdlib(top):
            allowed.add(top)
            return None
        refused.add(top)
        raise ModuleNotFoundError(f"No module named {name!r} (not in the upload)", name=name)


start, before = time.perf_counter(), set(sys.modules)
import workers  # noqa: E402,F401
sdk_seconds, sdk_modules = time.perf_counter() - start, set(sys.modules) - before
sys.path.insert(0, args["src"])
sys.meta_path.insert(0, NotInTheUpload())
start, before = time.perf_counter(), set(sys.modules)
importlib.import_module(args["entry"])
seconds = time.perf_counter() - start
print(json.dumps({"sdk_seconds": sdk_seconds, "sdk_modules": sorted(sdk_modules), "seconds": seconds,
                  "modules": sorted(set(sys.modules) - before), "refused": sorted(refused)}))
"""


class StartCost(msgspec.Struct, frozen=True, kw_only=True):
    """One import of one Worker's entry module in a fresh interpreter."""

    worker: str
    seconds: float
    """importing the entry module, ``workers`` already loaded"""
    modules: tuple[str, ...]
    """every module that import loaded (the standard library's included)"""
    sdk_seconds: float
    sdk_modules: int
    refused: tuple[str, ...]
    """top-level modules the entry tried to import that the upload would not hold"""
    upload_roots: frozenset[str]

    def outside_stdlib(self) -> list[str]:
        """The loaded modules that are not the standard library's: the upload's and third-party ones."""
        return [m for m in self.modules if m.partition(".")[0] not in sys.stdlib_module_names]

    def by_root(self) -> dict[str, int]:
        """How many of `outside_stdlib` each top-level package loaded."""
        counts: dict[str, int] = {}
        for module in self.outside_stdlib():
            root = module.partition(".")[0]
            counts[root] = counts.get(root, 0) + 1
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


@cache
def _import_names() -> dict[str, frozenset[str]]:
    names: dict[str, set[str]] = {}
    for top, distributions in metadata.packages_distributions().items():
        for distribution in distributions:
            names.setdefault(normalize_name(distribution), set()).add(top)
    return {name: frozenset(tops) for name, tops in names.items()}


def third_party_modules(requirements: list[str]) -> set[str]:
    """Top-level import names of ``requirements`` and of what they require, transitively (extras aside)."""
    seen: set[str] = set()
    pending = [parse_requirement(text) for text in requirements]
    while pending:
        requirement = pending.pop()
        if requirement.name in seen or (requirement.marker and "extra" in requirement.marker):
            continue
        seen.add(requirement.name)
        try:
            pending.extend(parse_requirement(text) for text in metadata.requires(requirement.name) or ())
        except metadata.PackageNotFoundError:
            continue
    return {top for name in seen for top in _import_names().get(name, frozenset())}


def upload_allowed_modules(folder: Path) -> tuple[frozenset[str], frozenset[str]]:
    """The upload's own top-level names (in ``folder/src``) and every top-level name it may import."""
    src = folder / "src"
    roots = frozenset(p.name.removesuffix(".py") for p in src.iterdir() if p.is_dir() or p.suffix == ".py")
    generated: Any = tomllib.loads((folder / "pyproject.toml").read_text())
    fetched = third_party_modules([str(text) for text in generated["project"]["dependencies"]])
    return roots, roots | fetched | RUNTIME_MODULES


def measure_start(
    config: Path, build_dir: Path, *, python: str = sys.executable, cold: bool = True
) -> StartCost:
    """Build ``config``'s upload in ``build_dir`` and import its entry once in a fresh ``python``.

    ``cold``: every module is compiled from its source, none read from cached bytecode, as for an upload
    (which carries no ``.pyc``; pywrangler installs packages without compiling them either).
    """
    source = read_worker_source(config)
    build = build_upload(source, build_dir)
    roots, allowed = upload_allowed_modules(build.folder)
    entry = source.main.relative_to(source.module_root).with_suffix("").as_posix().replace("/", ".")
    args = json.dumps({"src": str(build.folder / "src"), "entry": entry, "allowed": sorted(allowed)})
    with tempfile.TemporaryDirectory() as no_bytecode:
        environ = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        if cold:
            environ["PYTHONPYCACHEPREFIX"] = no_bytecode  # an empty cache: nothing compiled is found
        done = subprocess.run(
            [python, "-c", _PROBE, args],
            capture_output=True,
            text=True,
            check=False,
            cwd=build_dir,
            env=environ,
            timeout=300,
        )
    if done.returncode != 0:
        raise RuntimeError(f"importing {source.name}'s entry failed:\n{done.stderr[-4000:]}")
    found: Any = json.loads(done.stdout.strip().splitlines()[-1])
    return StartCost(
        worker=source.name,
        seconds=float(found["seconds"]),
        modules=tuple(found["modules"]),
        sdk_seconds=float(found["sdk_seconds"]),
        sdk_modules=len(found["sdk_modules"]),
        refused=tuple(found["refused"]),
        upload_roots=roots,
    )
