"""The dispatch read: the best ready jobs of a shard by priority with aging, through indexes only (ADR-0012).

Within one priority level aging makes the oldest job the best (ADR-0011), so the read merges level heads from
the highest level holding a ready job down and stops once no lower level can reach the ``want``-th best job,
bounded by the oldest ready job. ``NEXT_READY_LEVEL`` skips levels that hold only delayed jobs inside SQL, so
they cost two index seeks each and never count toward ``MAX_LEVELS_PER_TICK``. When a per-tick bound cuts the
walk short, the ``want`` longest-waiting ready jobs are merged in, so an aged job always competes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from tsumugi_core.options import MAX_SAFE_INTEGER
from tsumugi_core.priority import aging_bound, effective_priority
from tsumugi_scheduler.shard.port import SqlLike
from tsumugi_scheduler.shard.queries import BY_ELIGIBLE, LEVEL_HEADS, NEXT_READY_LEVEL, OLDEST_READY

__all__ = ["MAX_LEVELS_PER_TICK", "MAX_LEVEL_PROBES_PER_TICK", "ready_rows"]

MAX_LEVELS_PER_TICK: Final = 64
"""Priority levels holding a ready job that one dispatch read may visit (levels of delayed jobs only are free)."""
MAX_LEVEL_PROBES_PER_TICK: Final = 1024
"""Levels one dispatch read may look at in all: bounds a tick when very many levels hold only delayed jobs."""
_ABOVE_EVERY_LEVEL: Final = float(MAX_SAFE_INTEGER + 1)
"""Exclusive upper bound of the first step: priorities are within +-MAX_SAFE_INTEGER (enqueue, reschedule).

A float: the int 2^53 would be a JS BigInt, which the Durable Object SQL API refuses (ADR-0042); as a double it
is exact and compares with INTEGER priorities as a number."""

Row = Mapping[str, Any]


def ready_rows(sql: SqlLike, now: int, want: int, aging_interval_ms: int | None) -> list[Row]:
    """Ready jobs (``HEAD_COLUMNS``) holding the best ``want`` of the shard at ``now``, in no promised order.

    Level heads come first, highest level first; the oldest ready jobs follow when the walk was cut short.
    """
    oldest = sql.exec(f"SELECT MIN(eligible_at) AS v FROM job {BY_ELIGIBLE}").one()["v"]
    if want <= 0 or oldest is None or oldest > now:
        return []
    rows, complete = _level_walk(sql, now, want, aging_interval_ms, int(oldest))
    if not complete:
        seen = {str(r["id"]) for r in rows}
        rows += [r for r in sql.exec(OLDEST_READY, now, want).toArray() if str(r["id"]) not in seen]
    return rows


def _level_walk(
    sql: SqlLike, now: int, want: int, aging_interval_ms: int | None, oldest: int
) -> tuple[list[Row], bool]:
    """Level heads from the highest level holding a ready job down, and whether the walk ended on its own.

    It ends on its own when no level is left or when no lower level can reach the ``want``-th best job found
    so far (``aging_bound`` from the oldest ready job); the level and probe caps cut it short.
    """
    heads: list[Row] = []
    best: list[int] = []
    budget = MAX_LEVEL_PROBES_PER_TICK
    level, ready, used = _next_ready_level(sql, _ABOVE_EVERY_LEVEL, now, budget)
    for _ in range(MAX_LEVELS_PER_TICK):
        budget -= used
        if level is None or not ready:
            return heads, level is None  # no level left, or the probes ran out on delayed-only levels
        if len(best) >= want and aging_bound(level, oldest, now, aging_interval_ms) < best[want - 1]:
            return heads, True
        fresh = sql.exec(LEVEL_HEADS, level, now, want).toArray()
        heads.extend(fresh)
        best = _top_scores(best, fresh, now, want, aging_interval_ms)
        if budget <= 0:
            return heads, False
        level, ready, used = _next_ready_level(sql, level, now, budget)
    return heads, False


def _next_ready_level(sql: SqlLike, below: float, now: int, probes: int) -> tuple[int | None, bool, int]:
    """Where a walk of at most ``probes`` levels under ``below`` stopped, whether that level holds a ready job,
    and the levels looked at. A level without a ready job means the probes ran out; None, that none is left.
    """
    row = sql.exec(NEXT_READY_LEVEL, below, now, probes).one()
    return row["level"], bool(row["ready"]), int(row["probes"])


def _top_scores(
    best: list[int], rows: Sequence[Row], now: int, want: int, aging_interval_ms: int | None
) -> list[int]:
    """The ``want`` highest effective priorities among ``best`` and ``rows``, highest first."""
    scores = [
        effective_priority(int(r["priority"]), int(r["eligible_at"]), now, aging_interval_ms) for r in rows
    ]
    return sorted([*best, *scores], reverse=True)[:want]
