"""Runs FFI cases and records each outcome (ADR-0103): the same code in real Pyodide (`run_pyodide.mjs`) and
over the emulation (`test_ffi_differential.py`)."""

from __future__ import annotations

import inspect
import json
from typing import Any

import ffi_cases_access
import ffi_cases_async
import ffi_cases_calls
import ffi_cases_to_js
import ffi_cases_to_py
from ffi_case import CASES
from ffi_describe import describe, raised

# Importing a case module registers its cases; this names them so the imports are plainly used.
CASE_MODULES = (ffi_cases_to_js, ffi_cases_to_py, ffi_cases_access, ffi_cases_calls, ffi_cases_async)


async def outcome(name: str) -> Any:
    """The described result of case `name`, or the description of what it raised."""
    try:
        value = CASES[name]()
        if inspect.iscoroutine(value):
            value = await value
        return describe(value)
    except Exception as error:  # whatever the case raises is its outcome
        return raised(error)


def case_names() -> list[str]:
    """Every case's name: module by module in `CASE_MODULES` order, each module's in definition order."""
    modules = [module.__name__ for module in CASE_MODULES]
    return sorted(CASES, key=lambda name: modules.index(CASES[name].__module__))


async def run_all_json() -> str:
    """Every case's outcome by name, as one JSON object."""
    return json.dumps({name: await outcome(name) for name in case_names()}, ensure_ascii=True)
