"""Fixtures of the client's RPC tests: a fake scheduler behind an env binding."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from client_fakes import FakeScheduler


@pytest.fixture
def scheduler() -> FakeScheduler:
    return FakeScheduler()


@pytest.fixture
def env(scheduler: FakeScheduler) -> SimpleNamespace:
    return SimpleNamespace(TSUMUGI=scheduler)
