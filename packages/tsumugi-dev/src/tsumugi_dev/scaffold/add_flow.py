"""``tsumugi add-flow NAME [--performer BINDING ...]``: a flow skeleton where the scheduler imports it.

Three places change, each only if it lacks the flow (a second run changes nothing and says so):

1. ``<performers>/src/<package>/flows/<module>.py``: the flow, from a template: one node per ``--performer``
   (default: the first performer ``define_tsumugi`` lists), each after the one before (an existing file is
   never overwritten: it must already define the flow's variable, or the command stops);
2. the scheduler's entry module: ``from <package>.flows.<module> import <variable>``;
3. the same module: ``<variable>`` in ``define_tsumugi(flows=[...])``.

The flows live in the performers package because their nodes name performer classes; the scheduler Worker
depends on that package (its pyproject, as ``tsumugi init`` writes it), so ``tsumugi dev`` imports it and
``tsumugi deploy`` vendors it (ADR-0112). Edits are planned first and re-parsed, as add-performer's are.
"""

from __future__ import annotations

import ast
import keyword
import re
import tomllib
from pathlib import Path
from typing import Final

import msgspec

from tsumugi_dev.config import WorkerConfig
from tsumugi_dev.scaffold import python_edit
from tsumugi_dev.scaffold.add_performer import define_call, listed_name, performers_package, project_workers
from tsumugi_dev.scaffold.errors import ScaffoldError
from tsumugi_dev.scaffold.names import module_name
from tsumugi_dev.scaffold.templates import render, template_files

__all__ = ["FLOW_NAME_MAX", "AddedFlow", "add_flow", "flow_variable", "validate_flow_name"]

FLOW_NAME_MAX: Final = 64
_FLOW_NAME: Final = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_FLOWS: Final = "flows"


class AddedFlow(msgspec.Struct, frozen=True, kw_only=True):
    """What ``add_flow`` did: the files it changed (empty when the flow was already there)."""

    name: str
    changed: tuple[Path, ...]
    notes: tuple[str, ...] = ()


def validate_flow_name(name: str) -> str:
    """``name`` if it can name a flow and its module; else ScaffoldError naming the rule.

    Rules: 1 to 64 of letters, digits, ``_`` and ``-``, starting with a letter (a run id is ``<flow>:<local>``,
    and the module and variable are the name with ``-`` as ``_``), and not a Python keyword.
    """
    if not _FLOW_NAME.fullmatch(name) or len(name) > FLOW_NAME_MAX:
        raise ScaffoldError(
            f"flow name {name!r}: must be 1 to {FLOW_NAME_MAX} letters, digits, '_' or '-', starting with a letter"
        )
    if keyword.iskeyword(flow_variable(name)):
        raise ScaffoldError(
            f"flow name {name!r}: its module name {flow_variable(name)!r} is a Python keyword"
        )
    return name


def flow_variable(name: str) -> str:
    """The module and variable name of flow ``name`` (``resize-all`` -> ``resize_all``)."""
    return name.replace("-", "_").lower()


def _read(path: Path, what: str) -> str:
    if not path.is_file():
        raise ScaffoldError(f"{path}: {what} is missing")
    return path.read_text(encoding="utf-8")


def _exported_modules(performers: WorkerConfig) -> dict[str, str]:
    """Performer class name -> the module the performers entry imports it from."""
    path = performers.main
    tree = python_edit.parse_module(_read(path, "the performers Worker's entry module"), str(path))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            found.update({alias.name: node.module for alias in node.names})
    return found


def _registered_performers(tree: ast.Module, path: Path) -> list[str]:
    call = define_call(tree, path)
    for kw in call.keywords:
        if kw.arg == "performers" and isinstance(kw.value, ast.List | ast.Tuple):
            return [n for n in (listed_name(e) for e in kw.value.elts) if n is not None]
    return []


def _flows_list(tree: ast.Module, path: Path) -> ast.List | ast.Tuple:
    call = define_call(tree, path)
    found = [kw.value for kw in call.keywords if kw.arg == _FLOWS]
    if not found:
        raise ScaffoldError(
            f"{path}: define_tsumugi(...) has no flows=[...] list; add `flows=[]` to it and run add-flow again"
        )
    if not isinstance(found[0], ast.List | ast.Tuple):
        raise ScaffoldError(
            f"{path}: line {found[0].lineno}: define_tsumugi(flows=...) is not a list literal; add the flow by hand"
        )
    return found[0]


def _node_lines(performers: list[str]) -> str:
    lines: list[str] = []
    used: set[str] = set()
    previous: str | None = None
    for index, name in enumerate(performers, start=1):
        node_id = module_name(name)
        if node_id in used:
            node_id = f"{node_id}_{index}"
        used.add(node_id)
        ref = f"step{index}"
        if previous is None:
            lines.append(f'    {ref} = f.node("{node_id}", {name}, input=lambda run, deps: run)')
        else:
            lines.append(
                f'    {ref} = f.node("{node_id}", {name}, after=[{previous}], '
                f"input=lambda run, deps: deps[{previous}])"
            )
        previous = ref
    lines.append(f"    f.output({previous})")
    return "\n".join(lines)


def _module_text(name: str, performers: list[str], modules: dict[str, str]) -> str:
    imports = "\n".join(
        f"from {module} import {', '.join(sorted(n for n in set(performers) if modules[n] == module))}"
        for module in sorted({modules[p] for p in performers})
    )
    ((_, template),) = template_files("flow")
    values = {
        "flow": name,
        "variable": flow_variable(name),
        "imports": imports,
        "nodes": _node_lines(performers),
    }
    return render(template, values)


def _scheduler_depends_on_performers(scheduler: WorkerConfig, performers: WorkerConfig) -> str | None:
    """A note when the scheduler's pyproject does not list the performers distribution, else None."""
    own = performers.path.parent / "pyproject.toml"
    theirs = scheduler.path.parent / "pyproject.toml"
    if not own.is_file() or not theirs.is_file():
        return None
    distribution = tomllib.loads(own.read_text(encoding="utf-8")).get("project", {}).get("name")
    wanted = tomllib.loads(theirs.read_text(encoding="utf-8")).get("project", {}).get("dependencies", [])
    if not isinstance(distribution, str) or any(str(d).split("=")[0].strip() == distribution for d in wanted):
        return None
    return f"{theirs}: add {distribution!r} to [project] dependencies, so the scheduler's upload carries the flow"


def add_flow(
    root: Path, name: str, *, performers: list[str] | None = None, worker: Path | None = None
) -> AddedFlow:
    """Add flow ``name`` to the project at ``root`` (see the module docstring for the three places).

    Raises:
        ScaffoldError: A bad name, an unknown performer, a missing file, a file of unexpected shape or a
            conflicting definition; nothing was written.
    """
    validate_flow_name(name)
    scheduler, performers_worker = project_workers(root, worker)
    package_dir = performers_package(performers_worker)
    entry = scheduler.main
    source = _read(entry, "the scheduler Worker's entry module")
    tree = python_edit.parse_module(source, str(entry))
    chosen = performers or _registered_performers(tree, entry)[:1]
    if not chosen:
        raise ScaffoldError(f"{entry}: define_tsumugi lists no performers; pass --performer NAME")
    modules = _exported_modules(performers_worker)
    missing = [p for p in chosen if p not in modules]
    if missing:
        raise ScaffoldError(
            f"performer {missing[0]}: {performers_worker.main} does not import it; run "
            f"`tsumugi add-performer {missing[0]}` first"
        )
    variable = flow_variable(name)
    writes: dict[Path, str] = {}
    flows_dir = package_dir / _FLOWS
    if not (flows_dir / "__init__.py").exists():
        writes[flows_dir / "__init__.py"] = (
            '"""The flows: one module per flow (`tsumugi add-flow NAME`)."""\n'
        )
    path = flows_dir / f"{variable}.py"
    if path.exists():
        existing = python_edit.parse_module(_read(path, "the flow module"), str(path))
        if not any(isinstance(n, ast.FunctionDef) and n.name == variable for n in existing.body):
            raise ScaffoldError(f"{path} exists and does not define {variable}; refusing to overwrite it")
    else:
        writes[path] = _module_text(name, chosen, modules)
    import_line = f"from {package_dir.name}.{_FLOWS}.{variable} import {variable}"
    edited = source
    listed = _flows_list(tree, entry)
    if variable not in [listed_name(e) for e in listed.elts]:
        try:
            edited = python_edit.append_to_list(edited, listed, variable, str(entry))
        except python_edit.PythonEditError as exc:
            raise ScaffoldError(str(exc)) from None
    if import_line not in source.splitlines():
        imports = [
            n
            for n in python_edit.parse_module(edited, str(entry)).body
            if isinstance(n, ast.Import | ast.ImportFrom)
        ]
        if not imports:
            raise ScaffoldError(f"{entry}: has no import statements to add the flow's import after")
        edited = python_edit.insert_line_after(edited, imports[-1], import_line)
    if edited != source:
        check = python_edit.parse_module(edited, str(entry))
        if variable not in [listed_name(e) for e in _flows_list(check, entry).elts]:
            raise ScaffoldError(f"{entry}: could not register {variable} safely; nothing written")
        writes[entry] = edited
    for target, text in writes.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    note = _scheduler_depends_on_performers(scheduler, performers_worker)
    return AddedFlow(name=name, changed=tuple(writes), notes=(note,) if note else ())
