"""The dispatch read: the best ready jobs of a shard by priority with aging, through indexes only (ADR-0012).

Within one priority level aging makes the oldest job the best (ADR-0011), so the read merges level heads from
the highest level holding a ready job down and stops once no lower level can reach the ``want``-th best
dispatchable job, bounded by the oldest ready job (ADR-0055). ``NEXT_READY_LEVEL`` skips levels that hold only
delayed jobs inside SQL. Only key heads are in the indexes (ADR-0054): a job whose key has no room is read
(the planner counts it as blocked) but never counts toward ``want``, and a key with room for several jobs
brings the ready jobs after its head. When a per-tick bound cuts the level walk short, pages of the
longest-waiting ready jobs follow until no unseen job can reach the ``want``-th best.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any, Final, Protocol

import msgspec

from tsumugi_core.options import MAX_SAFE_INTEGER
from tsumugi_core.priority import aging_bound, effective_priority
from tsumugi_scheduler.shard.json_rows import decoded_rows
from tsumugi_scheduler.shard.port import SqlLike
from tsumugi_scheduler.shard.queries import (
    BY_ELIGIBLE,
    HEAD_NAMES,
    KEY_GROUP_NEXT,
    LEVEL_HEADS,
    LEVEL_HEADS_AFTER,
    NEXT_READY_LEVEL,
    OLDEST_READY,
    OLDEST_READY_AFTER,
)

__all__ = [
    "MAX_LEVELS_PAST_WANT",
    "MAX_LEVEL_PROBES_PER_TICK",
    "MAX_OLDEST_PAGES",
    "KeyRoomLike",
    "ready_rows",
]

MAX_LEVELS_PAST_WANT: Final = 64
"""Ready levels one read may visit after it holds ``want`` dispatchable jobs, only to let aged jobs of lower
levels compete; past it pages of the oldest ready jobs settle the rest. Before ``want`` there is no cap: every
level visited then holds a job the batch may need."""
MAX_LEVEL_PROBES_PER_TICK: Final = 1024
"""Levels holding only delayed jobs one dispatch read may pass: bounds a tick when very many levels are delayed."""
MAX_OLDEST_PAGES: Final = 8
"""Pages of ``want`` oldest ready jobs read after a cut-short level walk."""
_ABOVE_EVERY_LEVEL: Final = float(MAX_SAFE_INTEGER + 1)
"""Exclusive upper bound of the first step: priorities are within +-MAX_SAFE_INTEGER (enqueue, reschedule).

A float: the int 2^53 would be a JS BigInt, which the Durable Object SQL API refuses (ADR-0042); as a double it
is exact and compares with INTEGER priorities as a number."""

Row = Mapping[str, Any]
_HEADS: Final = msgspec.json.Decoder(list[tuple[Any, ...]])


def _heads(cursor: Any) -> list[Row]:
    """A dispatch read's rows (each one JSON array text, ``h``) as mappings of `HEAD_NAMES`."""
    return [dict(zip(HEAD_NAMES, values, strict=True)) for values in decoded_rows(cursor, "h", _HEADS)]


class KeyRoomLike(Protocol):
    """How many more jobs of a key may go now (``key_room.KeyRoom``)."""

    def room(self, key: str) -> int:
        """0 when the key is blocked."""
        ...


class _OnePerKey:
    def room(self, key: str) -> int:
        return 1


def _position(row: Row) -> tuple[int, int, str]:
    return int(row["eligible_at"]), int(row["created_at"]), str(row["id"])


class _Walk:
    """The rows read so far and the ``want`` best scores among those that count as dispatchable."""

    def __init__(
        self,
        sql: SqlLike,
        now: int,
        want: int,
        aging_interval_ms: int | None,
        room: KeyRoomLike,
        skip: frozenset[str],
    ) -> None:
        self.sql, self.now, self.want, self.aging, self.room, self.skip = (
            sql,
            now,
            want,
            aging_interval_ms,
            room,
            skip,
        )
        self.rows: list[Row] = []
        self._seen: set[str] = set()
        self._best: list[int] = []  # ascending; at most ``want``
        self._per_key: dict[str, int] = {}
        self.below = _ABOVE_EVERY_LEVEL
        """Every unseen ready job that could count has a priority below this."""

    def kth(self) -> int | None:
        """The ``want``-th best score among counted rows, or None while fewer count."""
        return self._best[0] if len(self._best) >= self.want else None

    def add(self, row: Row, *, head: bool = True) -> bool:
        """Take ``row`` in (a key head from the indexes, or a job after one); True when it counts toward ``want``."""
        job_id = str(row["id"])
        if job_id in self._seen:
            return False
        self._seen.add(job_id)
        self.rows.append(row)
        expires = row["expires_at"]
        if job_id in self.skip or (expires is not None and int(expires) <= self.now):
            return False
        key = row["concurrency_key"]
        if key is not None:
            room = self.room.room(str(key))
            if head and room > 1:
                # Whatever this key's other groups hold, this group's next jobs may outrank them (aging).
                self._followers(row, room - 1)
            taken = self._per_key.get(str(key), 0)
            if taken >= room:
                return False  # counted rows of a key, in visiting order: never more than the key can start
            self._per_key[str(key)] = taken + 1
        score = effective_priority(int(row["priority"]), int(row["eligible_at"]), self.now, self.aging)
        bisect.insort(self._best, score)
        if len(self._best) > self.want:
            del self._best[0]
        return True

    def _followers(self, head: Row, count: int) -> None:
        """The ready jobs after a key's head in its group, when the key has room for more than one."""
        rows = self.sql.exec(
            KEY_GROUP_NEXT,
            head["concurrency_key"],
            head["priority"],
            self.now,
            *_position(head),
            min(count, self.want),
        )
        for row in _heads(rows):
            self.add(row, head=False)

    def read_level(self, level: int) -> None:
        """The level's heads in order until ``want`` of them count or the level is done."""
        page = _heads(self.sql.exec(LEVEL_HEADS, level, self.now, self.want))
        counted = 0
        while True:
            counted += sum(self.add(row) for row in page)
            if len(page) < self.want or counted >= self.want:
                break
            page = _heads(self.sql.exec(LEVEL_HEADS_AFTER, level, self.now, *_position(page[-1]), self.want))
        self.below = level

    def walk_levels(self, oldest: int) -> bool:
        """Level heads from the highest ready level down; True when the walk ended on its own."""
        budget = MAX_LEVEL_PROBES_PER_TICK
        level, ready, used = _next_ready_level(self.sql, _ABOVE_EVERY_LEVEL, self.now, budget)
        past_want = 0
        while True:
            budget -= used - 1 if ready else used
            if level is None:
                return True
            if not ready:
                self.below = level  # the probes ran out on delayed-only levels: ready jobs are lower still
                return False
            kth = self.kth()
            if kth is not None:
                if aging_bound(level, oldest, self.now, self.aging) < kth:
                    return True
                past_want += 1
                if past_want > MAX_LEVELS_PAST_WANT:
                    self.below = level + 1
                    return False
            self.read_level(level)
            if budget <= 0:
                return False
            level, ready, used = _next_ready_level(self.sql, level, self.now, budget)

    def oldest_pages(self) -> None:
        """Pages of the oldest ready jobs until no unseen job can reach the ``want``-th best (or the page cap)."""
        page = _heads(self.sql.exec(OLDEST_READY, self.now, self.want))
        for _ in range(MAX_OLDEST_PAGES):
            for row in page:
                self.add(row)
            if len(page) < self.want:
                return
            last = page[-1]
            kth = self.kth()
            # Unseen jobs wait no longer than ``last`` and sit below every level the walk read.
            if (
                kth is not None
                and aging_bound(int(self.below) - 1, int(last["eligible_at"]), self.now, self.aging) < kth
            ):
                return
            page = _heads(self.sql.exec(OLDEST_READY_AFTER, self.now, *_position(last), self.want))


def ready_rows(
    sql: SqlLike,
    now: int,
    want: int,
    aging_interval_ms: int | None,
    room: KeyRoomLike | None = None,
    skip: frozenset[str] = frozenset(),
) -> list[Row]:
    """Ready jobs (``HEAD_COLUMNS``) holding the best ``want`` dispatchable jobs of the shard at ``now``.

    In no promised order. A job counts as dispatchable when its key has room (``room``; by default one job
    per key), it is not in ``skip`` and it has not expired.
    """
    oldest = sql.exec(f"SELECT MIN(eligible_at) AS v FROM job {BY_ELIGIBLE}").one()["v"]
    if want <= 0 or oldest is None or oldest > now:
        return []
    walk = _Walk(sql, now, want, aging_interval_ms, room or _OnePerKey(), skip)
    if not walk.walk_levels(int(oldest)):
        walk.oldest_pages()
    return walk.rows


def _next_ready_level(sql: SqlLike, below: float, now: int, probes: int) -> tuple[int | None, bool, int]:
    """Where a walk of at most ``probes`` levels under ``below`` stopped, whether that level holds a ready job,
    and the levels looked at. A level without a ready job means the probes ran out; None, that none is left.
    """
    row = sql.exec(NEXT_READY_LEVEL, below, now, probes).one()
    return row["level"], bool(row["ready"]), int(row["probes"])
