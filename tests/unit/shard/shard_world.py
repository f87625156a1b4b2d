"""The shard test world: in-memory DO SQL, fixed clock, sequential ids, fixed jitter."""

from __future__ import annotations

from typing import Any

import msgspec

from tsumugi_core.options import EnqueueItem
from tsumugi_core.testing import FixedClock
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.shard.engine import JobShardEngine
from tsumugi_scheduler.shard.records import DispatchMessage

T0 = 1_000_000


class World(msgspec.Struct, frozen=True, kw_only=True):
    sql: SqlStorage
    clock: FixedClock
    engine: JobShardEngine

    def enqueue(self, **options: Any) -> str:
        options.setdefault("payload", {"n": 1})
        return self.engine.enqueue_many([EnqueueItem(binding="MAIL", **options)])[0].id

    def dispatch(self) -> list[DispatchMessage]:
        return self.engine.tick().dispatches
