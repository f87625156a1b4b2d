"""Every public module of the Worker-side packages declares ``__all__`` and it matches what the module defines.

Read from the source (AST), not by importing, so a module that needs the Workers runtime is still checked.
Sorting of ``__all__`` is ruff's job (RUF022).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
PACKAGE_SOURCES = [
    REPO_ROOT / "packages" / name / "src" / name.replace("-", "_")
    for name in ("tsumugi-core", "tsumugi-client", "tsumugi-performer")
]


def _is_public(name: str) -> bool:
    return not name.startswith("_")


def _top_level_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(names defined by def/class/assignment, names bound by imports) at module level."""
    defined: set[str] = set()
    imported: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            imported.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            # Names a module's __getattr__ loads on first use are imported here for type checkers (PEP 562).
            imported.update(
                (a.asname or a.name).split(".")[0]
                for child in node.body
                if isinstance(child, ast.Import | ast.ImportFrom)
                for a in child.names
            )
    return defined, imported


def _declared_all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            assert isinstance(node, ast.Assign)
            if not isinstance(node.value, ast.List | ast.Tuple):
                return ["<__all__ must be a literal list>"]
            return [
                e.value if isinstance(e, ast.Constant) and isinstance(e.value, str) else "<non-literal>"
                for e in node.value.elts
            ]
    return None


def public_name_problems(source: str) -> list[str]:
    """What is wrong with a module's ``__all__``, as messages."""
    tree = ast.parse(source)
    defined, imported = _top_level_names(tree)
    public_defined = {name for name in defined if _is_public(name)} - {"__all__"}
    exported = _declared_all(tree)
    if exported is None:
        return [f"no __all__ but defines {sorted(public_defined)}"] if public_defined else []
    problems = [f"__all__ lists {name!r} twice" for name in sorted(set(exported)) if exported.count(name) > 1]
    problems += [f"__all__ lists undefined {name!r}" for name in exported if name not in defined | imported]
    problems += [
        f"public {name!r} is missing from __all__" for name in sorted(public_defined - set(exported))
    ]
    return problems


def _public_modules() -> list[Path]:
    modules: list[Path] = []
    for source in PACKAGE_SOURCES:
        for path in sorted(source.rglob("*.py")):
            relative = path.relative_to(source)
            if all(_is_public(part) or part == "__init__.py" for part in relative.parts):
                modules.append(path)
    return modules


def test_packages_have_modules() -> None:
    assert len(_public_modules()) >= 3


@pytest.mark.parametrize(
    "module", _public_modules(), ids=lambda path: str(path.relative_to(REPO_ROOT / "packages"))
)
def test_module_exports_match_its_public_names(module: Path) -> None:
    assert public_name_problems(module.read_text(encoding="utf-8")) == []


def test_checker_accepts_a_well_formed_module() -> None:
    source = (
        "from x import y as Z\n__all__ = ['A', 'Z', 'f']\nA: int = 1\n_b = 2\ndef f(): ...\nclass _C: ...\n"
    )
    assert public_name_problems(source) == []


def test_checker_accepts_a_module_with_nothing_public() -> None:
    assert public_name_problems('"""Docstring only."""\nimport os\n_x = 1\n') == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(): ...\n", "no __all__ but defines ['f']"),
        ("__all__ = ['f', 'f']\ndef f(): ...\n", "__all__ lists 'f' twice"),
        ("__all__ = ['g']\n", "__all__ lists undefined 'g'"),
        ("__all__ = []\nclass K: ...\n", "public 'K' is missing from __all__"),
        ("__all__ = []\nX = 1\n", "public 'X' is missing from __all__"),
        (
            "__all__ = ['f'] + []\ndef f(): ...\n",
            "__all__ lists undefined '<__all__ must be a literal list>'",
        ),
    ],
)
def test_checker_reports_problems(source: str, expected: str) -> None:
    assert expected in public_name_problems(source)
