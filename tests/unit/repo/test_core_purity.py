"""tsumugi_core reads no clock, randomness or environment (docs/reference/conventions.md item 1, ADR-0005).

Two independent guards: an AST scan of every core module written here, and the ruff banned-api configuration
in packages/tsumugi-core/pyproject.toml (checked by running ruff on a sample that uses every banned name).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
CORE_SRC = REPO_ROOT / "packages" / "tsumugi-core" / "src" / "tsumugi_core"
CORE_PYPROJECT = REPO_ROOT / "packages" / "tsumugi-core" / "pyproject.toml"

BANNED = frozenset(
    {
        "time.time",
        "time.time_ns",
        "time.monotonic",
        "time.monotonic_ns",
        "time.perf_counter",
        "datetime.datetime.now",
        "datetime.datetime.utcnow",
        "datetime.datetime.today",
        "datetime.date.today",
        "random",
        "secrets",
        "os.urandom",
        "uuid.uuid1",
        "uuid.uuid4",
        "os.environ",
        "os.getenv",
    }
)


def _banned(qualified: str) -> str | None:
    for name in BANNED:
        if qualified == name or qualified.startswith(name + "."):
            return name
    return None


class _Scanner(ast.NodeVisitor):
    """Collects uses of banned names, resolving import aliases (``import datetime as dt``)."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.found: list[tuple[int, str]] = []

    def _report(self, line: int, qualified: str) -> None:
        banned = _banned(qualified)
        if banned is not None:
            self.found.append((line, banned))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._report(node.lineno, alias.name)
            local = alias.asname or alias.name.split(".")[0]
            self.aliases[local] = alias.name if alias.asname else local

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for alias in node.names:
            qualified = f"{module}.{alias.name}"
            self._report(node.lineno, module)
            self._report(node.lineno, qualified)
            self.aliases[alias.asname or alias.name] = qualified

    def visit_Attribute(self, node: ast.Attribute) -> None:
        parts: list[str] = [node.attr]
        value = node.value
        while isinstance(value, ast.Attribute):
            parts.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in self.aliases:
            self._report(node.lineno, ".".join([self.aliases[value.id], *reversed(parts)]))
        self.generic_visit(node)


def banned_uses(source: str) -> list[tuple[int, str]]:
    """(line, banned name) for every banned import or attribute use in `source`."""
    scanner = _Scanner()
    scanner.visit(ast.parse(source))
    return sorted(set(scanner.found))


def core_modules() -> list[Path]:
    return sorted(CORE_SRC.rglob("*.py"))


def test_core_has_modules() -> None:
    assert CORE_SRC / "ids.py" in core_modules()


@pytest.mark.parametrize("module", core_modules(), ids=lambda path: path.name)
def test_core_module_uses_no_banned_api(module: Path) -> None:
    assert banned_uses(module.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import time\ntime.time()", "time.time"),
        ("import time as t\nt.monotonic()", "time.monotonic"),
        ("from time import monotonic", "time.monotonic"),
        ("from time import time as now", "time.time"),
        ("import datetime\ndatetime.datetime.now()", "datetime.datetime.now"),
        ("import datetime as dt\ndt.datetime.utcnow()", "datetime.datetime.utcnow"),
        ("from datetime import datetime\ndatetime.now(tz=None)", "datetime.datetime.now"),
        ("from datetime import datetime as D\nD.utcnow", "datetime.datetime.utcnow"),
        ("from datetime import date\ndate.today()", "datetime.date.today"),
        ("import random", "random"),
        ("from random import random", "random"),
        ("import random as r", "random"),
        ("import secrets", "secrets"),
        ("import uuid\nuuid.uuid4()", "uuid.uuid4"),
        ("from uuid import uuid4", "uuid.uuid4"),
        ("import os\nos.environ['X']", "os.environ"),
        ("import os\nos.environ.get('X')", "os.environ"),
        ("from os import environ", "os.environ"),
        ("import os\nos.getenv('X')", "os.getenv"),
        ("import os.path\nos.urandom(8)", "os.urandom"),
    ],
)
def test_scanner_finds_each_banned_form(source: str, expected: str) -> None:
    assert expected in {name for _, name in banned_uses(source)}


@pytest.mark.parametrize(
    "source",
    [
        "import datetime as dt\ndt.date(2026, 1, 1) + dt.timedelta(days=1)",
        "import datetime as dt\ndt.datetime.fromtimestamp(0, dt.UTC)",
        "import time\ntime.gmtime(0)",
        "import uuid\nuuid.UUID(int=0)",
        "import os.path\nos.path.join('a', 'b')",
        "class X:\n    environ = 1\nX.environ",
        "def time():\n    return 1\ntime()",
        "import randomness_free_module",
    ],
)
def test_scanner_allows_pure_uses(source: str) -> None:
    assert banned_uses(source) == []


def test_ruff_config_bans_each_name_in_core(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os\nimport random\nimport secrets\nimport time\nimport uuid\nfrom datetime import date, datetime\n"
        "a = time.time()\nb = time.monotonic()\nc = datetime.now()\nd = datetime.utcnow()\n"
        "e = uuid.uuid4()\nf = os.environ\ng = os.urandom(1)\nh = date.today()\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--config",
            str(CORE_PYPROJECT),
            "--select",
            "TID251",
            "--output-format",
            "concise",
            str(sample),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    for name in [
        "random",
        "secrets",
        "time.time",
        "time.monotonic",
        "datetime.datetime.now",
        "datetime.datetime.utcnow",
        "uuid.uuid4",
        "os.environ",
        "os.urandom",
        "datetime.date.today",
    ]:
        assert f"`{name}` is banned" in result.stdout, result.stdout + result.stderr


def test_core_source_passes_the_ruff_banned_api_check() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--select",
            "TID251",
            "--output-format",
            "concise",
            str(CORE_SRC),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO_ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
