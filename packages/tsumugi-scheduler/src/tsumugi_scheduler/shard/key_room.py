"""How many more jobs each concurrency key may dispatch now: what the dispatch read needs to pass blocked keys."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from tsumugi_core.options import RateLimit
from tsumugi_core.throttle import TokenBucket, refill
from tsumugi_scheduler.shard.port import SqlLike

__all__ = ["KeyRoom"]

_BUCKET: Final = "SELECT tokens, refilled_at FROM key_bucket WHERE key = ?"


class KeyRoom:
    """Room per key at ``now``: free per-key concurrency, and with a per-key rate the whole tokens left.

    Stored buckets are read once per key, by primary key, and kept for the planner (``stored_buckets``).
    """

    def __init__(
        self,
        sql: SqlLike,
        now: int,
        in_flight_by_key: Mapping[str, int],
        per_key_concurrency: int,
        per_key_rate: RateLimit | None,
    ) -> None:
        self._sql = sql
        self._now = now
        self._by_key = in_flight_by_key
        self._limit = per_key_concurrency
        self._rate = per_key_rate
        self._stored: dict[str, TokenBucket] = {}
        self._room: dict[str, int] = {}

    def room(self, key: str) -> int:
        """Jobs of ``key`` that may still go now (0 = the key is blocked)."""
        known = self._room.get(key)
        if known is not None:
            return known
        room = max(0, self._limit - self._by_key.get(key, 0))
        if room and self._rate is not None:
            rows = self._sql.exec(_BUCKET, key).toArray()
            stored = None
            if rows:
                stored = TokenBucket(tokens=float(rows[0]["tokens"]), refilled_at=int(rows[0]["refilled_at"]))
                self._stored[key] = stored
            room = min(room, int(refill(stored, self._rate, self._now).tokens))
        self._room[key] = room
        return room

    def stored_buckets(self) -> dict[str, TokenBucket]:
        """The stored buckets read so far (absent = full)."""
        return dict(self._stored)
