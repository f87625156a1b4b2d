"""Suite-wide guard: whatever a test leaves unclosed fails that test, not a later one (ADR-0092).

A connection, file or socket nobody closed warns (``ResourceWarning``; for ``sqlite3`` connections from Python
3.13 on) only when it is freed. Freed by reference counting, that happens inside the test that dropped it; but
an object caught in a reference cycle waits for the cyclic collector, which runs at some later allocation, in
some later test. Collecting after every test makes the warning (an error under ``filterwarnings = error``) land
in the teardown of the test that leaked.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _nothing_left_open() -> Iterator[None]:
    yield
    gc.collect()
