"""Priority with aging.

A waiting job gains one priority point per ``aging_interval_ms`` since it became eligible
(``eligible_at = max(created_at, run_after)``), so delayed and retried jobs do not jump the queue.

Example:
    >>> effective_priority(0, eligible_at=0, now=600_000, aging_interval_ms=60_000)
    10
    >>> effective_priority(0, eligible_at=0, now=600_000, aging_interval_ms=None)
    0
"""

from __future__ import annotations

__all__ = ["aging_bound", "effective_priority"]


def effective_priority(priority: int, eligible_at: int, now: int, aging_interval_ms: int | None) -> int:
    """``priority + floor(max(0, now - eligible_at) / aging_interval_ms)``; plain priority when aging is off."""
    if aging_interval_ms is None or aging_interval_ms <= 0:
        return priority
    return priority + max(0, now - eligible_at) // aging_interval_ms


def aging_bound(level: int, oldest_eligible_at: int | None, now: int, aging_interval_ms: int | None) -> int:
    """The highest effective priority any ready job of priority ``level`` can have right now.

    Because aging only grows with waiting time, no job of the level beats one that became eligible at
    ``oldest_eligible_at`` (the oldest ready job of the whole shard, found by index). The engine stops
    descending priority levels once this bound falls below the best candidate it already holds.
    """
    if oldest_eligible_at is None:
        return level
    return effective_priority(level, oldest_eligible_at, now, aging_interval_ms)
