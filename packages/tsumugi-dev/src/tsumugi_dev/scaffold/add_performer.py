"""``tsumugi add-performer NAME [--worker DIR]``: a performer class, its entrypoint, binding and registration.

Four places change, each only if it lacks the performer (so a second run changes nothing and says so):

1. ``<performers>/src/<package>/<name>.py``: the class, from a template (an existing file is never
   overwritten: it must already define the class, or the command stops);
2. ``<performers>/src/entry.py``: ``from <package>.<name> import NAME as NAMEPerformer`` and
   ``NAME = performer_entrypoint(WorkerEntrypoint, NAMEPerformer)``;
3. the scheduler's wrangler config: ``{"binding": NAME, "service": <performers Worker>, "entrypoint": NAME}``;
4. the scheduler's entry module: ``NAME`` in ``define_tsumugi(performers=[...])``.

Every edit is planned before anything is written and checked by parsing its result; a file that no longer
has the expected shape stops the command with its path and what was expected (ADR-0049). The project's
Workers come from ``[tool.tsumugi]``: the scheduler is the one binding the ``JOB_SHARD`` Durable Object, and
the default performers Worker the one its Service Bindings already point to.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any, Final

import msgspec

from tsumugi_dev.config import ConfigError, WorkerConfig, find_configs, load_config
from tsumugi_dev.jsonc import loads_jsonc
from tsumugi_dev.project import project_worker_configs
from tsumugi_dev.scaffold import python_edit
from tsumugi_dev.scaffold.errors import ScaffoldError
from tsumugi_dev.scaffold.jsonc_edit import JsoncEditError, checked_append, locate
from tsumugi_dev.scaffold.names import module_name, validate_performer_name
from tsumugi_dev.scaffold.templates import render, template_files

__all__ = ["SHARD_BINDING", "AddedPerformer", "add_performer"]

SHARD_BINDING: Final = "JOB_SHARD"
"""The Durable Object binding tsumugi_scheduler reaches its shards by: it marks the scheduler Worker."""
_DEFINE: Final = "define_tsumugi"
_ENTRYPOINT_FACTORY: Final = "performer_entrypoint"


class AddedPerformer(msgspec.Struct, frozen=True, kw_only=True):
    """What ``add_performer`` did: the files it changed (empty when the performer was already there)."""

    name: str
    changed: tuple[Path, ...]
    notes: tuple[str, ...] = ()


class _Plan:
    def __init__(self) -> None:
        self.writes: dict[Path, str] = {}
        self.notes: list[str] = []


def _read(path: Path, what: str) -> str:
    if not path.is_file():
        raise ScaffoldError(f"{path}: {what} is missing")
    return path.read_text(encoding="utf-8")


def _workers(root: Path) -> list[WorkerConfig]:
    try:
        paths = project_worker_configs(root)
        if not paths:
            raise ScaffoldError(
                f"{root / 'pyproject.toml'}: no [tool.tsumugi] workers list; run add-performer at the root of "
                "a project made by `tsumugi init`"
            )
        return [load_config(path) for path in paths]
    except ConfigError as exc:
        raise ScaffoldError(str(exc)) from None


def _scheduler(configs: list[WorkerConfig]) -> WorkerConfig:
    found = [c for c in configs if any(d.name == SHARD_BINDING for d in c.durable_objects)]
    if len(found) != 1:
        raise ScaffoldError(
            f"expected one scheduler Worker (binding the {SHARD_BINDING} Durable Object) among "
            f"[tool.tsumugi] workers, found {len(found)}"
        )
    return found[0]


def _performers_worker(
    configs: list[WorkerConfig], scheduler: WorkerConfig, worker: Path | None
) -> WorkerConfig:
    if worker is not None:
        paths = find_configs(worker)
        if not paths:
            raise ScaffoldError(
                f"--worker {worker}: no wrangler config (wrangler.json, .jsonc or .toml) there"
            )
        try:
            return load_config(paths[0])
        except ConfigError as exc:
            raise ScaffoldError(str(exc)) from None
    targets = {s.service for s in scheduler.services}
    found = [c for c in configs if c.name in targets]
    if len(found) != 1:
        raise ScaffoldError(
            f"{scheduler.path}: its Service Bindings point to {len(found)} of the project's Workers; "
            "pass --worker DIR to say which one gets the performer"
        )
    return found[0]


def _package_dir(performers: WorkerConfig) -> Path:
    src = performers.main.parent
    packages = sorted(
        d for d in src.iterdir() if d.is_dir() and (d / "__init__.py").is_file() and d.name != "vendor"
    )
    if len(packages) != 1:
        shown = ", ".join(p.name for p in packages) or "none"
        raise ScaffoldError(
            f"{src}: expected one performers package (a folder with __init__.py) to put the class in, "
            f"found {shown}"
        )
    return packages[0]


def _plan_module(plan: _Plan, package_dir: Path, name: str) -> str:
    path = package_dir / f"{module_name(name)}.py"
    if (package_dir / module_name(name)).is_dir():  # the package would win the import: the class never loads
        raise ScaffoldError(
            f"{package_dir / module_name(name)} is a package of the same name as the module {path.name}: "
            f"choose another performer name"
        )
    if path.exists():
        tree = python_edit.parse_module(_read(path, "the performer module"), str(path))
        if not any(isinstance(n, ast.ClassDef) and n.name == name for n in tree.body):
            raise ScaffoldError(f"{path} exists and does not define class {name}; refusing to overwrite it")
        return f"{package_dir.name}.{path.stem}"
    ((_, template),) = template_files("performer")
    plan.writes[path] = render(template, {"name": name})
    return f"{package_dir.name}.{path.stem}"


def _bound_names(tree: ast.Module) -> dict[str, ast.stmt]:
    bound: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound.update({t.id: node for t in targets if isinstance(t, ast.Name)})
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.update({(a.asname or a.name).split(".")[0]: node for a in node.names})
        elif isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            bound[node.name] = node
    return bound


def _factory_calls(tree: ast.Module) -> list[ast.Assign]:
    return [
        node
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == _ENTRYPOINT_FACTORY
    ]


def _plan_entry(plan: _Plan, performers: WorkerConfig, name: str, module: str) -> None:
    path = performers.main
    source = _read(path, "the performers Worker's entry module")
    tree = python_edit.parse_module(source, str(path))
    bound = _bound_names(tree)
    alias = f"{name}Performer"
    exported = [
        n for n in _factory_calls(tree) if any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
    ]
    if exported:
        return
    for taken in (name, alias):
        if taken in bound:
            raise ScaffoldError(
                f"{path}: line {bound[taken].lineno} already defines {taken}; refusing to add it"
            )
    for needed in (_ENTRYPOINT_FACTORY, "WorkerEntrypoint"):
        if needed not in bound:
            raise ScaffoldError(f"{path}: does not import {needed}, which the new entrypoint line needs")
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    if not imports:
        raise ScaffoldError(f"{path}: has no import statements to add the performer's import after")
    factories = _factory_calls(tree)
    import_line = f"from {module} import {name} as {alias}"
    export_line = f"{name} = {_ENTRYPOINT_FACTORY}(WorkerEntrypoint, {alias})"
    # Insert the lower one first, so the upper one's position still holds.
    if factories and factories[-1].lineno > imports[-1].lineno:
        source = python_edit.insert_line_after(source, factories[-1], export_line)
        source = python_edit.insert_line_after(source, imports[-1], import_line)
    else:
        source = python_edit.insert_line_after(source, imports[-1], import_line + "\n\n" + export_line)
    check = python_edit.parse_module(source, str(path))
    if not any(isinstance(t, ast.Name) and t.id == name for n in _factory_calls(check) for t in n.targets):
        raise ScaffoldError(f"{path}: could not add the {name} entrypoint safely; nothing written")
    plan.writes[path] = source


def _binding_item(name: str, service: str) -> dict[str, Any]:
    return {"binding": name, "service": service, "entrypoint": name}


def _plan_binding(plan: _Plan, scheduler: WorkerConfig, name: str, service: str) -> None:
    path = scheduler.path
    if path.suffix not in (".json", ".jsonc"):
        raise ScaffoldError(
            f"{path}: only wrangler.json / wrangler.jsonc are edited; add the binding {name} by hand"
        )
    text = _read(path, "the scheduler's wrangler config")
    wanted = _binding_item(name, service)
    try:
        root = locate(text)
        if root.kind != "object":
            raise JsoncEditError(f"{path}: expected a JSON object at the top")
        services = root.member("services")
        before: dict[str, Any] = loads_jsonc(text)
        existing: list[dict[str, Any]] = list(before.get("services") or [])
        same = [s for s in existing if s.get("binding") == name]
        if same:
            if same[0] == wanted:
                return
            raise ScaffoldError(f"{path}: services already binds {name} as {same[0]}; refusing to change it")
        expected = {**before, "services": [*existing, wanted]}

        def expect(parsed: Any) -> None:
            if parsed != expected:
                raise JsoncEditError(f"{path}: could not add the binding {name} safely; nothing written")

        item = "{ " + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in wanted.items()) + " }"
        if services is None:
            plan.writes[path] = checked_append(text, root, f'"services": [{item}]', expect, str(path))
        elif services.kind != "array":
            raise JsoncEditError(f"{path}: services must be a list of Service Bindings")
        else:
            plan.writes[path] = checked_append(text, services, item, expect, str(path))
    except JsoncEditError as exc:
        raise ScaffoldError(str(exc) if str(exc).startswith(str(path)) else f"{path}: {exc}") from None


def _define_call(tree: ast.Module, path: Path) -> ast.Call:
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and (
            (isinstance(n.func, ast.Name) and n.func.id == _DEFINE)
            or (isinstance(n.func, ast.Attribute) and n.func.attr == _DEFINE)
        )
    ]
    if len(calls) != 1:
        raise ScaffoldError(f"{path}: expected one {_DEFINE}(...) call, found {len(calls)}")
    return calls[0]


def _listed(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def _registered(tree: ast.Module, path: Path) -> tuple[ast.List | ast.Tuple | None, list[str]]:
    call = _define_call(tree, path)
    found = [k.value for k in call.keywords if k.arg == "performers"]
    if not found:
        return None, []
    value = found[0]
    if not isinstance(value, ast.List | ast.Tuple):
        raise ScaffoldError(
            f"{path}: line {value.lineno}: {_DEFINE}(performers=...) is not a list literal; add the name by hand"
        )
    return value, [n for n in (_listed(e) for e in value.elts) if n is not None]


def _plan_registration(plan: _Plan, scheduler: WorkerConfig, name: str) -> None:
    path = scheduler.main
    source = _read(path, "the scheduler Worker's entry module")
    node, names = _registered(python_edit.parse_module(source, str(path)), path)
    if node is None:
        plan.notes.append(f"{path}: {_DEFINE}() lists no performers, so it accepts {name} already")
        return
    if name in names:
        return
    last = node.elts[-1] if node.elts else None
    quote = "'" if last is not None and (ast.get_source_segment(source, last) or "").startswith("'") else '"'
    try:
        edited = python_edit.append_to_list(source, node, f"{quote}{name}{quote}", str(path))
    except python_edit.PythonEditError as exc:
        raise ScaffoldError(str(exc)) from None
    if name not in _registered(python_edit.parse_module(edited, str(path)), path)[1]:
        raise ScaffoldError(f"{path}: could not register {name} safely; nothing written")
    plan.writes[path] = edited


def add_performer(root: Path, name: str, *, worker: Path | None = None) -> AddedPerformer:
    """Add performer ``name`` to the project at ``root`` (see the module docstring for the four places).

    Args:
        root: The project folder (its ``pyproject.toml`` has ``[tool.tsumugi]`` workers).
        name: The performer's class, entrypoint and binding name.
        worker: The performers Worker's folder; default: the one the scheduler's bindings point to.

    Returns:
        The files changed, empty when everything was there already.

    Raises:
        ScaffoldError: A bad name, a missing file, a file of unexpected shape or a conflicting definition;
            nothing was written.
    """
    validate_performer_name(name)
    configs = _workers(root)
    scheduler = _scheduler(configs)
    performers = _performers_worker(configs, scheduler, worker)
    plan = _Plan()
    try:
        module = _plan_module(plan, _package_dir(performers), name)
        _plan_entry(plan, performers, name, module)
        _plan_binding(plan, scheduler, name, performers.name)
        _plan_registration(plan, scheduler, name)
    except python_edit.PythonEditError as exc:
        raise ScaffoldError(str(exc)) from None
    for path, text in plan.writes.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return AddedPerformer(name=name, changed=tuple(plan.writes), notes=tuple(plan.notes))


def project_workers(root: Path, worker: Path | None = None) -> tuple[WorkerConfig, WorkerConfig]:
    """The project's scheduler Worker and its performers Worker (``worker``, else the one its bindings name).

    Raises:
        ScaffoldError: No ``[tool.tsumugi]`` workers, not exactly one scheduler, or no unique performers Worker.
    """
    configs = _workers(root)
    scheduler = _scheduler(configs)
    return scheduler, _performers_worker(configs, scheduler, worker)


def performers_package(performers: WorkerConfig) -> Path:
    """The performers Worker's one package folder (``src/<package>``).

    Raises:
        ScaffoldError: Not exactly one package folder there.
    """
    return _package_dir(performers)


def define_call(tree: ast.Module, path: Path) -> ast.Call:
    """The one ``define_tsumugi(...)`` call of a scheduler entry module.

    Raises:
        ScaffoldError: None or several.
    """
    return _define_call(tree, path)


def listed_name(node: ast.expr) -> str | None:
    """The name a list element of ``define_tsumugi`` spells (a string, a name or an attribute), else None."""
    return _listed(node)
