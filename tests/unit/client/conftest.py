"""Fixtures of the client's RPC tests: a fake scheduler behind an env binding."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from types import SimpleNamespace

import pytest
import respx

from tests.unit.client.client_fakes import FakeScheduler
from tests.unit.client.http_harness import BASE, Harness


@pytest.fixture
def scheduler() -> FakeScheduler:
    return FakeScheduler()


@pytest.fixture
def env(scheduler: FakeScheduler) -> SimpleNamespace:
    return SimpleNamespace(TSUMUGI=scheduler)


@pytest.fixture(params=["sync", "async"])
async def h(request: pytest.FixtureRequest) -> AsyncIterator[Harness]:
    harness = Harness(request.param)
    try:
        yield harness
    finally:
        await harness.close()


@pytest.fixture
def api() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE, assert_all_called=False, assert_all_mocked=True) as mock:
        yield mock
