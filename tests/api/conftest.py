"""REST API fixtures: a fresh world (app, shards, migrated D1) per test on a fixed clock."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.api.api_world import T0, SteppedClock, World
from tests.support.clock import installed


@pytest.fixture
def clock() -> Iterator[SteppedClock]:
    with installed(SteppedClock(T0)) as fixed:
        yield fixed


@pytest.fixture
async def world(tmp_path: Path, clock: SteppedClock) -> AsyncIterator[World]:
    built = World(tmp_path, clock)
    yield built
    await built.aclose()
