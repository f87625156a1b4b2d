"""The dependency direction holds: import-linter contracts exist and are kept (ADR-0002).

Source: docs/design/architecture.md#layout.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[3]


def _contracts() -> list[dict[str, Any]]:
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["importlinter"]["contracts"]


def _forbidden_for(source: str) -> set[str]:
    forbidden: set[str] = set()
    for contract in _contracts():
        if contract["type"] == "forbidden" and source in contract["source_modules"]:
            forbidden.update(contract["forbidden_modules"])
    return forbidden


def test_core_is_forbidden_io_runtime_and_sibling_imports() -> None:
    required = {
        "tsumugi_client",
        "tsumugi_performer",
        "tsumugi_scheduler",
        "tsumugi_dev",
        "httpx",
        "sqlite3",
        "js",
        "pyodide",
        "workers",
        "random",
        "uuid",
        "secrets",
    }
    assert required <= _forbidden_for("tsumugi_core")


def test_client_and_performer_are_independent() -> None:
    independent = [set(c["modules"]) for c in _contracts() if c["type"] == "independence"]
    assert any({"tsumugi_client", "tsumugi_performer"} <= modules for modules in independent)


def test_worker_side_packages_never_import_the_local_runtime() -> None:
    for package in ("tsumugi_core", "tsumugi_client", "tsumugi_performer", "tsumugi_scheduler"):
        assert "tsumugi_dev" in _forbidden_for(package), package


def test_external_packages_are_analysed() -> None:
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    # Without this flag, forbidding httpx or random in the core would silently check nothing.
    assert config["tool"]["importlinter"]["include_external_packages"] is True


def test_lint_imports_keeps_every_contract() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint_imports), "--no-cache"],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO_ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(_contracts())} kept, 0 broken" in result.stdout


def test_each_arrow_of_the_package_graph_has_a_contract() -> None:
    # ADR-0111: client -> core, performer -> core, scheduler library -> core; the runtime imports no tsumugi_*.
    ours = {"tsumugi_core", "tsumugi_client", "tsumugi_performer", "tsumugi_scheduler", "tsumugi_dev"}
    above = {"tsumugi_dev", "tsumugi_simulation", "tsumugi_examples"}
    assert above | (ours - {"tsumugi_core", "tsumugi_client"}) <= _forbidden_for("tsumugi_client")
    assert above | (ours - {"tsumugi_core", "tsumugi_performer"}) <= _forbidden_for("tsumugi_performer")
    assert above | {"tsumugi_client", "tsumugi_performer"} <= _forbidden_for("tsumugi_scheduler")
    assert (ours - {"tsumugi_dev"}) | {"tsumugi_simulation", "tsumugi_examples"} <= _forbidden_for(
        "tsumugi_dev"
    )
    assert "tsumugi_examples" in _forbidden_for("tsumugi_simulation")


def test_the_simulation_may_reach_only_the_schedulers_public_modules() -> None:
    (contract,) = [c for c in _contracts() if c.get("source_modules") == ["tsumugi_simulation"]]
    assert contract["forbidden_modules"] == ["tsumugi_scheduler.*"]
    allowed = {line.split("->")[1].strip() for line in contract["ignore_imports"]}
    assert allowed == {
        "tsumugi_scheduler.definition",
        "tsumugi_scheduler.definition_types",
        "tsumugi_scheduler.entrypoints",
        "tsumugi_scheduler.schedule_entrypoints",
        "tsumugi_scheduler.timing",
    }


def test_the_runtime_contract_excuses_only_the_clis_name_check() -> None:
    (contract,) = [c for c in _contracts() if c.get("source_modules") == ["tsumugi_dev"]]
    assert contract["ignore_imports"] == ["tsumugi_dev.scaffold.names -> tsumugi_core.ids"]
