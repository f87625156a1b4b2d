"""Every exception the packages define or raise derives from TsumugiError (ADR-0141).

The walk imports every module of the library packages and reads its source: each exception class a module
defines must subclass `TsumugiError`, and each ``raise X(...)`` must name such a class. A built-in exception is
allowed only where Python's protocols require that very type (``AttributeError`` from a module's
``__getattr__``, ``KeyError`` from ``__getitem__``, ``StopIteration``), listed below. tsumugi_dev is not walked:
it stands in for the platform, whose errors (``JsException``, the SQL and queue errors) are workerd's, not ours.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tsumugi_core.exceptions import InvalidFieldError, TsumugiError

REPO_ROOT = Path(__file__).resolve().parents[3]
PACKAGES = {
    "tsumugi_core": "packages/tsumugi-core/src",
    "tsumugi_client": "packages/tsumugi-client/src",
    "tsumugi_performer": "packages/tsumugi-performer/src",
    "tsumugi_scheduler": "packages/tsumugi-scheduler/src",
    "tsumugi_simulation": "packages/tsumugi-simulation/src",
}
PROTOCOL_RAISES = {
    ("AttributeError", "__getattr__"),
    ("KeyError", "__getitem__"),
    ("StopIteration", "__next__"),
    ("StopAsyncIteration", "__anext__"),
}
"""(built-in exception, the method whose protocol requires it)."""
FRAMEWORK_RAISES = {"HTTPException": "Starlette's: it answers the request (a 405 with its Allow header)"}
CONTROL_FLOW = {
    "tsumugi_performer._steps.SuspendSignal": "a BaseException that ends the invocation so a job sleeps; a performer's "
    "`except Exception` must not swallow it (ADR-0145), and TsumugiError is an Exception",
}
"""Signals that are not errors, with why they cannot derive from TsumugiError."""
ENTRY_MODULES = ("tsumugi_simulation.workers.",)
"""Worker entry modules the local runtime loads for a simulation; importing them elsewhere is refused."""


def modules() -> Iterator[tuple[str, Path]]:
    for package, src in PACKAGES.items():
        root = REPO_ROOT / src
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            yield name, path


def _is_exception(value: object) -> bool:
    return inspect.isclass(value) and issubclass(value, BaseException)


def class_problems(module: ModuleType) -> list[str]:
    """Exception classes ``module`` defines that do not derive from TsumugiError."""
    return [
        f"{module.__name__}.{name} does not derive from TsumugiError"
        for name, value in vars(module).items()
        if _is_exception(value)
        and value.__module__ == module.__name__
        and not issubclass(value, TsumugiError)
        and f"{module.__name__}.{name}" not in CONTROL_FLOW
    ]


def raise_problems(module: ModuleType, source: str) -> list[str]:
    """``raise X(...)`` in ``source`` whose X is not a TsumugiError and not a protocol's built-in."""
    problems: list[str] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.Raise) and isinstance(child.exc, ast.Call):
                problem = _raised_problem(module, child.exc.func, function)
                if problem:
                    problems.append(f"{module.__name__}:{child.lineno}: {problem}")
            visit(child, inner)

    visit(ast.parse(source), "")
    return problems


def _raised_problem(module: ModuleType, func: ast.expr, function: str) -> str | None:
    if not isinstance(func, ast.Name):
        return None  # ``raise module.Error(...)``: the module's own walk checks the class
    value = vars(module).get(func.id, getattr(builtins, func.id, None))
    if not inspect.isclass(value) or not issubclass(value, BaseException):
        return None  # a factory call (``raise refusal_error(...)``) answers a checked class
    if issubclass(value, TsumugiError) or f"{value.__module__}.{value.__name__}" in CONTROL_FLOW:
        return None
    if value is getattr(builtins, func.id, None) and (func.id, function) in PROTOCOL_RAISES:
        return None
    if func.id in FRAMEWORK_RAISES and value.__module__.startswith("starlette"):
        return None
    return f"raises {func.id}, which does not derive from TsumugiError"


@pytest.mark.parametrize(("name", "path"), list(modules()), ids=lambda value: str(value).split("/")[-1])
def test_every_exception_a_module_defines_or_raises_is_a_tsumugi_error(name: str, path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    if name.startswith(ENTRY_MODULES):
        assert raise_problems(ModuleType(name), source) == []
        return
    module = importlib.import_module(name)
    assert class_problems(module) + raise_problems(module, source) == []


def test_the_walk_finds_every_package() -> None:
    found = {name.split(".")[0] for name, _ in modules()}
    assert found == set(PACKAGES)
    assert len(list(modules())) > 100


def test_a_plain_exception_class_or_raise_is_a_problem() -> None:
    source = (
        "class Oops(ValueError):\n    pass\n"
        "def f():\n    raise ValueError('x must be positive')\n"
        "def __getattr__(name):\n    raise AttributeError(name)\n"
        "def g():\n    raise InvalidFieldError('x', 'must be positive')\n"
    )
    module = ModuleType("planted")
    exec(compile(source, "planted", "exec"), vars(module))  # a planted module for the checker
    vars(module)["InvalidFieldError"] = InvalidFieldError
    assert class_problems(module) == ["planted.Oops does not derive from TsumugiError"]
    assert raise_problems(module, source) == [
        "planted:4: raises ValueError, which does not derive from TsumugiError"
    ]


def test_a_field_error_carries_the_field_as_sent_and_the_rule() -> None:
    error = InvalidFieldError("items[2].timeout_ms", "must be at least 1, got 0")
    assert (error.field, error.rule, str(error)) == (
        "items[2].timeout_ms",
        "must be at least 1, got 0",
        "items[2].timeout_ms must be at least 1, got 0",
    )
    assert isinstance(error, ValueError)
    assert isinstance(error, TsumugiError)
