"""REST API fixtures: a fresh world (app, shards, migrated D1) per test on a fixed clock."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from api_world import T0, SteppedClock, World

from tsumugi_scheduler import timing


@pytest.fixture
def clock() -> Iterator[SteppedClock]:
    fixed = SteppedClock(T0)
    previous = timing.use_time_source(fixed)
    yield fixed
    timing.use_time_source(previous)


@pytest.fixture
async def world(tmp_path: Path, clock: SteppedClock) -> AsyncIterator[World]:
    built = World(tmp_path, clock)
    yield built
    await built.aclose()
