"""Can an upload start? Every module its entry imports, transitively, is in it or provided (ADR-0113).

Cloudflare imports a Python Worker's entry module at start; a module missing from the upload is a
``ModuleNotFoundError`` there, after the deploy. So the build walks the imports of the upload's ``src/`` from the
entry module with ``ast`` and accepts a module only if it is:

- a file of the upload (``a/b.py`` or ``a/b/__init__.py``);
- the standard library (this interpreter's ``sys.stdlib_module_names``);
- the platform's own (``js``, ``pyodide``, workerd's entrypoint helpers; ``workers``, which pywrangler adds);
- provided by a requirement pywrangler fetches for this upload (its distribution's top-level names, from the
  installed metadata, else the distribution's normalised name).

Imports under ``if TYPE_CHECKING:`` never run and are skipped; imports inside ``try:`` with an ``except
ImportError`` / ``ModuleNotFoundError`` handler are optional and skipped too. Every other import counts, also
inside functions (a request that reaches it would fail). Relative imports are resolved against the package.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Final

import msgspec

__all__ = ["PLATFORM_MODULES", "MissingModule", "missing_modules", "provided_names"]

PLATFORM_MODULES: Final = frozenset(
    {"js", "pyodide", "_pyodide", "_pyodide_entrypoint_helper", "_cloudflare_compat_flags", "workers"}
)
"""Top-level modules a Python Worker gets without uploading them: workerd's runtime and the SDK pywrangler adds."""
_OPTIONAL: Final = frozenset({"ImportError", "ModuleNotFoundError"})


class MissingModule(msgspec.Struct, frozen=True, kw_only=True):
    """A module an upload's code imports that nothing provides."""

    module: str
    importer: str
    """the upload's module (dotted) that imports it"""
    line: int


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _guards_imports(node: ast.Try) -> bool:
    for handler in node.handlers:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(isinstance(k, ast.Name) and k.id in _OPTIONAL for k in kinds):
            return True
    return False


def _statements(tree: ast.AST) -> Iterator[ast.stmt]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield child
                yield from _statements(child)
            continue
        if isinstance(node, ast.Try) and _guards_imports(node):
            for child in (*node.handlers, *node.orelse, *node.finalbody):
                yield from _statements(child)
            continue
        if isinstance(node, ast.stmt):
            yield node
        yield from _statements(node)


def _module_file(root: Path, dotted: str) -> Path | None:
    base = root.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(module: str, path: Path) -> Iterator[tuple[str, bool, int]]:
    """(dotted name, may be an attribute rather than a module, line) for each import ``path`` runs."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in _statements(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, False, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                base = ".".join(parts[: len(parts) - node.level + 1])
                target = ".".join(p for p in (base, node.module) if p)
            else:
                target = node.module or ""
            yield target, False, node.lineno
            for alias in node.names:
                if alias.name != "*":
                    yield f"{target}.{alias.name}", True, node.lineno


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def provided_names(requirements: Iterable[str]) -> frozenset[str]:
    """The top-level import names the distributions ``requirements`` (normalised names) provide."""
    wanted = {_normalize(name) for name in requirements}
    names = {name.replace("-", "_") for name in wanted}
    for top, distributions in metadata.packages_distributions().items():
        if any(_normalize(d) in wanted for d in distributions):
            names.add(top)
    return frozenset(names)


def missing_modules(src: Path, entry: str, provided: frozenset[str]) -> list[MissingModule]:
    """Modules that ``src/entry`` imports, transitively, which neither ``src`` nor the platform, the standard
    library or ``provided`` (top-level names) hold; in the order found, each once."""
    allowed = provided | PLATFORM_MODULES | frozenset(sys.stdlib_module_names)
    found: dict[str, MissingModule] = {}
    seen: set[str] = set()
    pending: list[tuple[str, Path]] = [(entry.removesuffix(".py").replace("/", "."), src / entry)]
    while pending:
        module, path = pending.pop(0)
        if module in seen:
            continue
        seen.add(module)
        for dotted, maybe_attribute, line in _imports(module, path):
            parts = dotted.split(".")
            if _module_file(src, parts[0]) is None:
                if parts[0] not in allowed and parts[0] not in found:
                    found[parts[0]] = MissingModule(module=parts[0], importer=module, line=line)
                continue
            for depth in range(1, len(parts) + 1):
                name = ".".join(parts[:depth])
                file = _module_file(src, name)
                if file is None:
                    if not (maybe_attribute and depth == len(parts)) and name not in found:
                        found[name] = MissingModule(module=name, importer=module, line=line)
                    break
                pending.append((name, file))
    return list(found.values())
