"""Suite-wide guard: whatever a test leaves unclosed fails that test, not a later one (ADR-0089).

A connection, file or socket nobody closed warns (``ResourceWarning``; for ``sqlite3`` connections from Python
3.13 on) only when it is freed. Freed by reference counting, that happens inside the test that dropped it; but
an object caught in a reference cycle waits for the cyclic collector, which runs at some later allocation, in
some later test. Collecting after every test makes the warning (an error under ``filterwarnings = error``) land
in the teardown of the test that leaked.

A full collection walks every tracked object (modules, classes, Hypothesis and pydantic tables: tens of
thousands), so what is alive after each collection is frozen out of the next ones: each test's collection walks
only what that test made, and costs nothing measurable. What a wider-scoped fixture holds is frozen with it;
the session's end unfreezes and collects everything once more, so a cyclic leak there still fails the run.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

pytest_plugins = ["pytester"]  # tests/unit/repo/test_leak_guard.py runs the guard on a leaking test


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _nothing_left_open() -> Iterator[None]:
    yield
    gc.collect()
    gc.freeze()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    gc.unfreeze()
    gc.collect()
