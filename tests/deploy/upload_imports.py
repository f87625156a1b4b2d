"""Walk the imports of an upload from its entry module, resolving each against the upload's own files.

Independent of tsumugi_dev's build code on purpose: it reads the folder ``wrangler deploy --dry-run --outdir``
wrote (the modules wrangler uploads) with ``ast``, so a package the build forgot shows up as missing.
Imports under ``if TYPE_CHECKING:`` never run and are skipped; every other import counts, including ones
inside functions.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

RUNTIME_MODULES = frozenset({"js", "pyodide", "_pyodide_entrypoint_helper", "_cloudflare_compat_flags"})
"""Provided by workerd's Python runtime itself."""
MANAGED_MODULES = {"workers": "workers-runtime-sdk"}
"""pywrangler adds workers-runtime-sdk to every Worker's packages (workers-py 1.17.9, resolve.MANAGED_SDK_PACKAGE)."""


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _statements(tree: ast.AST) -> Iterator[ast.stmt]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from (n for child in node.orelse for n in (child, *_statements(child)))
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


def _imported(module: str, path: Path, root: Path) -> Iterator[tuple[str, bool]]:
    """(dotted name, may be an attribute rather than a module) for each import in ``path``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in _statements(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, False
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            yield target, False
            for alias in node.names:
                if alias.name != "*":
                    yield f"{target}.{alias.name}", True


def walk_imports(root: Path, entry: str) -> tuple[set[str], set[str]]:
    """From ``root/entry``: (top-level names imported that the upload does not hold, dotted modules missing).

    The first set is what must come from elsewhere (stdlib, the runtime, pywrangler); the second lists
    imports of modules inside packages the upload does hold but without that module's file.
    """
    outside, missing, _ = _walk(root, entry)
    return outside, missing


def reached_modules(root: Path, entry: str) -> set[str]:
    """The dotted names of the upload's own modules that ``root/entry`` imports, transitively (itself too)."""
    return _walk(root, entry)[2]


def _walk(root: Path, entry: str) -> tuple[set[str], set[str], set[str]]:
    outside: set[str] = set()
    missing: set[str] = set()
    seen: set[str] = set()
    pending: list[tuple[str, Path]] = [(Path(entry).stem, root / entry)]
    while pending:
        module, path = pending.pop()
        if module in seen:
            continue
        seen.add(module)
        for dotted, maybe_attribute in _imported(module, path, root):
            top = dotted.split(".")[0]
            if _module_file(root, top) is None:
                outside.add(top)
                continue
            parts = dotted.split(".")
            for depth in range(1, len(parts) + 1):
                name = ".".join(parts[:depth])
                found = _module_file(root, name)
                if found is None:
                    if not (maybe_attribute and depth == len(parts)):
                        missing.add(name)
                    break
                pending.append((name, found))
    return outside, missing, seen


def stdlib_modules() -> frozenset[str]:
    """The standard library's top-level modules (this interpreter's list)."""
    return frozenset(sys.stdlib_module_names)


def _module_scope(tree: ast.AST) -> Iterator[ast.stmt]:
    """The statements that run when a module is imported: not function bodies, not ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from (n for child in node.orelse for n in (child, *_module_scope(child)))
            continue
        if isinstance(node, ast.stmt):
            yield node
        yield from _module_scope(node)


def import_time_imports(root: Path, entry: str) -> set[str]:
    """Top-level names outside the upload that importing ``root/entry`` imports at once, transitively.

    Only imports in module or class scope are followed: one inside a function runs when the function does,
    so these are the modules a Worker cannot start without.
    """
    found: set[str] = set()
    seen: set[str] = set()
    pending: list[tuple[str, Path]] = [(Path(entry).stem, root / entry)]
    while pending:
        module, path = pending.pop()
        if module in seen:
            continue
        seen.add(module)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in _module_scope(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1])
                    target = f"{base}.{node.module}" if node.module else base
                else:
                    target = node.module or ""
                targets = [target, *(f"{target}.{a.name}" for a in node.names if a.name != "*")]
            else:
                continue
            for dotted in targets:
                parts = dotted.split(".")
                if _module_file(root, parts[0]) is None:
                    found.add(parts[0])
                    continue
                for depth in range(1, len(parts) + 1):
                    name = ".".join(parts[:depth])
                    file = _module_file(root, name)
                    if file is not None:
                        pending.append((name, file))
    return found


PYODIDE_ENVIRONMENT = {
    "sys_platform": "emscripten",
    "platform_system": "Emscripten",
    "python_version": "3.13",
    "python_full_version": "3.13.2",
    "implementation_name": "cpython",
    "os_name": "posix",
    "platform_machine": "wasm32",
    "extra": "",
}
"""PEP 508 marker values on Pyodide 0.28 (Python 3.13.2, Emscripten, wasm32), where pywrangler resolves."""


def off_pyodide_modules(root: Path) -> set[str]:
    """Top-level modules that the distributions vendored in ``root`` require only off Pyodide.

    Read from the installed metadata with ``packaging`` (independent of tsumugi_dev's own marker check):
    tsumugi-client requires httpx with ``sys_platform != 'emscripten'``, for its HTTP clients.
    """
    from importlib import metadata

    from packaging.requirements import Requirement

    owners = metadata.packages_distributions()
    vendored: set[str] = set()
    for top in (p.stem for p in root.iterdir()):
        try:  # an editable install (a workspace member) names no files: its import name is its own name
            vendored.add(metadata.distribution(top.replace("_", "-")).name)
        except metadata.PackageNotFoundError:
            vendored.update(owners.get(top, []))
    excluded: set[str] = set()
    for distribution in vendored:
        for text in metadata.requires(distribution) or ():
            requirement = Requirement(text)
            if requirement.marker is not None and not requirement.marker.evaluate(PYODIDE_ENVIRONMENT):
                excluded.add(requirement.name)
    names = {top for top, dists in owners.items() for d in dists if d in excluded}
    return names | {n.replace("-", "_") for n in excluded}
