"""The single instant a shard must wake next: the earliest of everything it waits for.

Example:
    >>> next_wake_at(None, 5_000, 3_000)
    3000
    >>> next_wake_at(None, None) is None
    True
"""

from __future__ import annotations

__all__ = ["MIN_SWEEP_WAKE_MS", "next_wake_at", "sweep_wake_at"]

MIN_SWEEP_WAKE_MS = 1000
"""A sweep never wakes the shard sooner than this, so rows waiting for projection cannot cause a busy loop."""


def next_wake_at(*instants: int | None) -> int | None:
    """The smallest of ``instants``, ignoring None; None when nothing is due."""
    best: int | None = None
    for instant in instants:
        if instant is not None and (best is None or instant < best):
            best = instant
    return best


def sweep_wake_at(
    oldest_settled_at: int | None,
    sweep_after_ms: int,
    oldest_failed_at: int | None,
    failed_retention_ms: int,
    now: int,
) -> int | None:
    """When the next finished job passes its retention, but never earlier than ``now + MIN_SWEEP_WAKE_MS``.

    Args:
        oldest_settled_at: Oldest ``updated_at`` of COMPLETED/CANCELLED jobs, or None.
        sweep_after_ms: Their retention.
        oldest_failed_at: Oldest ``updated_at`` of FAILED/STALLED jobs, or None.
        failed_retention_ms: Their retention.
        now: The current instant.
    """
    due = next_wake_at(
        None if oldest_settled_at is None else oldest_settled_at + sweep_after_ms,
        None if oldest_failed_at is None else oldest_failed_at + failed_retention_ms,
    )
    if due is None:
        return None
    return max(due, now + MIN_SWEEP_WAKE_MS)
