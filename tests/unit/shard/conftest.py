"""A fresh shard world per test."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.unit.shard.shard_world import T0, World
from tsumugi_core.testing import FixedClock, FixedRandom, SequentialIds
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.shard.engine import JobShardEngine
from tsumugi_scheduler.shard.records import NoticeConfig


@pytest.fixture
def make_world() -> Iterator[Callable[..., World]]:
    opened: list[SqlStorage] = []

    def make(notices: NoticeConfig | None = None, binding: str = "MAIL") -> World:
        sql = SqlStorage()
        opened.append(sql)
        clock = FixedClock(T0)
        engine = JobShardEngine(
            sql,
            binding=binding,
            shard=0,
            clock=clock,
            ids=SequentialIds(),
            rand=FixedRandom(0.5),
            notices=notices,
        )
        return World(sql=sql, clock=clock, engine=engine)

    yield make
    for sql in opened:
        sql.close()


@pytest.fixture
def world(make_world: Callable[..., World]) -> World:
    return make_world()
