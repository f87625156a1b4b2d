"""Build one Worker's upload folder: its own code, Tsumugi's packages vendored, and generated configs (ADR-0040).

``<out>/<worker name>/`` holds ``src/`` (the Worker's module root, copied, plus each vendored package),
``wrangler.jsonc`` (the Worker's config with ``main`` and the paths in it pointing back at the sources) and
``pyproject.toml`` (only the third-party requirements, with ``workers-runtime-sdk`` pinned to the local
runtime's, for ``pywrangler sync``, which puts them in ``python_modules/`` next to it, where wrangler picks them
up). The build never writes into the sources.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import msgspec

from tsumugi_dev.module_rules import ModuleMatch, Rule, effective_rules, match_modules, rules_from_config
from tsumugi_dev.raw_config import objects_at
from tsumugi_dev.sdk_pin import with_sdk_pinned
from tsumugi_dev.vendoring import DependencyError, Requirement, Resolution, resolve_dependencies
from tsumugi_dev.worker_source import DeployError, WorkerSource

__all__ = ["SKIPPED_DIRS", "UploadBuild", "build_upload", "upload_files"]

SKIPPED_DIRS: Final = frozenset({"__pycache__", "python_modules", "node_modules"})
"""Folders never copied from a module root or a vendored package (nor is any name starting with a dot)."""
_TYPING_ONLY: Final = ("py.typed", ".pyi")
"""Package files only type checkers read: not uploaded, so they need no rule."""


class UploadBuild(msgspec.Struct, frozen=True, kw_only=True):
    """A built upload folder and what went into it."""

    source: WorkerSource
    folder: Path
    config: Path
    """the generated wrangler config"""
    resolution: Resolution
    modules: ModuleMatch
    """what wrangler uploads from ``folder/src`` (the entry module aside)"""
    data_rule: Rule | None
    """the rule added so vendored package data uploads, if one was needed"""


def _skipped(name: str) -> bool:
    # Dot names too: .dev.vars holds secrets, .tsumugi the build itself when the module root is the project's.
    return name in SKIPPED_DIRS or name.startswith(".") or name.endswith(".pyc")


def _copy_tree(source: Path, target: Path) -> None:
    shutil.copytree(
        source, target, ignore=lambda _dir, names: [n for n in names if _skipped(n)], dirs_exist_ok=True
    )


def upload_files(root: Path) -> Iterator[str]:
    """The files under ``root`` as module names (``/``-separated, relative), sorted, skipped names left out."""
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and not any(_skipped(part) for part in relative.parts):
            yield relative.as_posix()


def _vendor(resolution: Resolution, src: Path) -> None:
    for package in resolution.vendored:
        target = src / (package.import_name if package.source.is_dir() else package.source.name)
        if target.exists():
            # The Worker's own code provides this name (its module root holds a package of that name).
            continue
        if package.source.is_dir():
            _copy_tree(package.source, target)
        else:
            shutil.copy2(package.source, target)


def _data_rule(src: Path, resolution: Resolution, user_rules: tuple[Rule, ...]) -> Rule | None:
    vendored_roots = tuple(p.import_name for p in resolution.vendored if p.source.is_dir())
    files = [
        name
        for name in upload_files(src)
        if name.split("/", 1)[0] in vendored_roots and not name.endswith(_TYPING_ONLY)
    ]
    unmatched = match_modules(files, effective_rules(user_rules)).unmatched
    if not unmatched:
        return None
    # Package data (the dashboard's .js and .css, say) that no rule of the Worker's config uploads: as text,
    # which is how importlib.resources-style readers in our packages read it.
    return Rule(type="Text", globs=tuple(unmatched), fallthrough=True)


def _relative(target: Path, start: Path) -> str:
    return Path(os.path.relpath(target, start)).as_posix()


def _generated_config(source: WorkerSource, folder: Path, rules: tuple[Rule, ...]) -> dict[str, Any]:
    raw = dict(source.raw)
    raw.pop("$schema", None)  # a path relative to the sources, for editors only
    raw["main"] = "src/" + source.main.relative_to(source.module_root).as_posix()
    if "base_dir" in raw:
        raw["base_dir"] = "src"
    if rules:
        raw["rules"] = [msgspec.to_builtins(rule) for rule in rules]
    if "d1_databases" in raw:
        rewritten: list[dict[str, Any]] = []
        for database in objects_at(raw, "d1_databases"):
            database = dict(database)
            migrations = source.directory / str(database.get("migrations_dir", "migrations"))
            if migrations.is_dir():
                database["migrations_dir"] = _relative(migrations, folder)
            else:
                database.pop("migrations_dir", None)
            rewritten.append(database)
        raw["d1_databases"] = rewritten
    return raw


def _pyproject(source: WorkerSource, third_party: tuple[Requirement, ...]) -> str:
    lines = [
        f"# Generated by `tsumugi deploy` from {source.pyproject}: the packages pywrangler fetches. Tsumugi's",
        "# own packages are vendored in src/ (ADR-0040); workers-runtime-sdk is pinned to the local runtime's",
        "# (ADR-0109).",
        "[project]",
        f"name = {json.dumps(source.name)}",
        'version = "0.0.0"',
        "dependencies = [",
        *(f"    {json.dumps(requirement.text)}," for requirement in third_party),
        "]",
    ]
    return "\n".join(lines) + "\n"


def build_upload(source: WorkerSource, out: Path) -> UploadBuild:
    """Build ``source``'s upload in ``out/<name>``; raise ``DeployError`` on a dependency or rule problem."""
    try:
        resolution = resolve_dependencies(source.dependencies, owner=str(source.pyproject))
        fetched = with_sdk_pinned(resolution.third_party, owner=str(source.pyproject))
    except DependencyError as exc:
        raise DeployError(str(exc)) from None
    folder = (out / source.name).resolve()
    src = folder / "src"
    if src.exists():
        shutil.rmtree(src)  # python_modules/ and pywrangler's venvs stay: they are its cache
    _copy_tree(source.module_root, src)
    _vendor(resolution, src)
    user_rules = rules_from_config(source.raw)
    data_rule = _data_rule(src, resolution, user_rules)
    rules = (*user_rules, data_rule) if data_rule else user_rules
    config = folder / "wrangler.jsonc"
    config.write_text(json.dumps(_generated_config(source, folder, rules), indent=2) + "\n")
    (folder / "pyproject.toml").write_text(_pyproject(source, fetched))
    entry = source.main.relative_to(source.module_root).as_posix()
    modules = match_modules((f for f in upload_files(src) if f != entry), effective_rules(rules))
    if modules.duplicates:
        raise DeployError(
            f"{source.config_path}: rules: {', '.join(sorted(set(modules.duplicates)))} matched by more than one "
            'glob (wrangler would warn "Ignoring duplicate module"); narrow the globs so each file matches one'
        )
    return UploadBuild(
        source=source,
        folder=folder,
        config=config,
        resolution=resolution,
        modules=modules,
        data_rule=data_rule,
    )
