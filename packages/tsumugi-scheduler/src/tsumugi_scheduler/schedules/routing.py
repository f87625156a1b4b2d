"""Which Scheduler Durable Object holds a schedule: ``fnv1a32(name) % schedule_shards`` (ADR-0079)."""

from __future__ import annotations

from typing import Final

from tsumugi_core.sharding import fnv1a32

__all__ = ["SCHEDULER_OBJECT_PREFIX", "object_name", "shard_of_schedule"]

SCHEDULER_OBJECT_PREFIX: Final = "scheduler"


def shard_of_schedule(name: str, shards: int) -> int:
    """The Scheduler shard of schedule ``name``."""
    return 0 if shards == 1 else fnv1a32(name) % shards


def object_name(shard: int) -> str:
    """The Durable Object name of Scheduler shard ``shard`` (``scheduler#0``, ...)."""
    return f"{SCHEDULER_OBJECT_PREFIX}#{shard}"
