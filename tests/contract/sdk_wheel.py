"""The pinned real Python Workers SDK (``workers-runtime-sdk``), read from its wheel without installing it.

``scripts/fetch-sdk-wheel.sh`` (run by ``scripts/test.sh``) downloads the wheel named in
``workers-runtime-sdk.txt`` into ``.cache/sdk-wheel/``; this module checks its hash, reads its sources with
``zipfile`` and describes their public names and signatures with ``ast`` (ADR-0041). Nothing here imports
the real SDK: ``sdk_model`` does that, for the conversion rules only.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import io
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
REQUIREMENTS = Path(__file__).with_name("workers-runtime-sdk.txt")
WHEEL_DIR = REPO / ".cache" / "sdk-wheel"
_PIN = re.compile(
    r"^(?P<name>[A-Za-z0-9_.-]+)==(?P<version>\S+)\s+--hash=sha256:(?P<sha256>[0-9a-f]{64})\s*$"
)

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Pin:
    """The one requirement line: distribution, version and the wheel's sha256."""

    name: str
    version: str
    sha256: str


def pin() -> Pin:
    """The pinned SDK release."""
    lines = [
        line for line in REQUIREMENTS.read_text().splitlines() if line.strip() and not line.startswith("#")
    ]
    match = _PIN.match(lines[0]) if len(lines) == 1 else None
    if match is None:
        raise AssertionError(f"{REQUIREMENTS}: expected one line `name==version --hash=sha256:<hex>`")
    return Pin(match["name"], match["version"], match["sha256"])


@functools.cache
def sources() -> dict[str, str]:
    """Every ``.py`` file of the wheel, by its path inside the wheel. Fails (never skips) without the wheel."""
    wanted = pin()
    prefix = wanted.name.replace("-", "_") + "-" + wanted.version + "-"
    wheels = sorted(WHEEL_DIR.glob(prefix + "*.whl"))
    if not wheels:
        pytest.fail(
            f"The SDK conformance tests need the {wanted.name}=={wanted.version} wheel in {WHEEL_DIR}: "
            "run `bash scripts/test.sh` (or just `bash scripts/fetch-sdk-wheel.sh`) to download it.",
            pytrace=False,
        )
    data = wheels[0].read_bytes()
    got = hashlib.sha256(data).hexdigest()
    if got != wanted.sha256:
        pytest.fail(
            f"{wheels[0]} has sha256 {got}, {REQUIREMENTS.name} pins {wanted.sha256}: delete it and run "
            "`bash scripts/fetch-sdk-wheel.sh`.",
            pytrace=False,
        )
    with zipfile.ZipFile(io.BytesIO(data)) as wheel:
        return {name: wheel.read(name).decode() for name in wheel.namelist() if name.endswith(".py")}


@functools.cache
def module_ast(path: str) -> ast.Module:
    """The parsed source of ``path`` (e.g. ``"workers/rpc.py"``) in the wheel."""
    return ast.parse(sources()[path], filename=path)


def exported_names(path: str = "workers/__init__.py") -> list[str]:
    """The ``__all__`` list of a module of the wheel."""
    for node in module_ast(path).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return list(ast.literal_eval(node.value))
    raise AssertionError(f"{path} has no __all__")


def _classes(path: str) -> dict[str, ast.ClassDef]:
    return {node.name: node for node in module_ast(path).body if isinstance(node, ast.ClassDef)}


def class_members(path: str, class_name: str) -> dict[str, FunctionNode]:
    """The methods a class of ``path`` defines, its bases of the same module included (subclass wins).

    Members inherited from outside the module (e.g. Pyodide's ``FetchResponse``) are not visible here.
    """
    classes = _classes(path)
    node = classes[class_name]
    members: dict[str, FunctionNode] = {}
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id in classes:
            members.update(class_members(path, base.id))
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            members[item.name] = item
    return members


def function(path: str, qualname: str) -> FunctionNode:
    """The definition of ``qualname`` (``"fetch"`` or ``"Response.from_json"``) in ``path``."""
    owner, _, name = qualname.rpartition(".")
    if owner:
        return class_members(path, owner)[name]
    for node in module_ast(path).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return node
    raise KeyError(f"{path} defines no function {qualname}")


def fetch_kwargs() -> frozenset[str]:
    """The keys of the SDK's ``FetchKwargs`` (what ``**other_options: Unpack[FetchKwargs]`` accepts)."""
    node = _classes("workers/types.py")["FetchKwargs"]
    return frozenset(
        item.target.id
        for item in node.body
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
    )


def alias_text(path: str, name: str) -> str:
    """The right-hand side of a module-level ``name: TypeAlias = "..."`` (or ``name = "..."``)."""
    for node in module_ast(path).body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id == name and value is not None:
            return str(ast.literal_eval(value)) if isinstance(value, ast.Constant) else ast.unparse(value)
    raise KeyError(f"{path} defines no alias {name}")


@dataclass(frozen=True)
class Shape:
    """What a caller relies on in a signature: parameters (kind, name, default source), async, decorators.

    The names of ``*args`` / ``**kwargs`` are not part of it (no caller can pass them by name); ``unpacked``
    is the ``TypedDict`` of a ``**kwargs: Unpack[...]`` parameter.
    """

    params: tuple[tuple[str, str, str | None], ...]
    is_async: bool
    decorators: frozenset[str]
    unpacked: str | None = None


_KNOWN_DECORATORS = frozenset({"property", "staticmethod", "classmethod"})


def shape(node: FunctionNode) -> Shape:
    """The `Shape` of a parsed function definition."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params: list[tuple[str, str, str | None]] = []
    for i, arg in enumerate(positional):
        kind = "POSITIONAL_ONLY" if i < len(args.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        default = defaults[i]
        params.append((kind, arg.arg, None if default is None else ast.unparse(default)))
    if args.vararg is not None:
        params.append(("VAR_POSITIONAL", "*", None))
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append(("KEYWORD_ONLY", arg.arg, None if kw_default is None else ast.unparse(kw_default)))
    unpacked = None
    if args.kwarg is not None:
        params.append(("VAR_KEYWORD", "**", None))
        note = args.kwarg.annotation
        if isinstance(note, ast.Subscript) and ast.unparse(note.value).endswith("Unpack"):
            unpacked = ast.unparse(note.slice)
    decorators = frozenset(
        name for name in (ast.unparse(d) for d in node.decorator_list) if name in _KNOWN_DECORATORS
    )
    return Shape(tuple(params), isinstance(node, ast.AsyncFunctionDef), decorators, unpacked)
