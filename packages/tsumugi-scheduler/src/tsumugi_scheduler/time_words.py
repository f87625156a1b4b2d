"""Durations and instants in words, for texts people read (explanations): "4 min 12 s", "in 3 s (at ...Z)".

Pure: the current instant is passed in. Machine readers get the epoch-ms fields beside every such text.

Example:
    >>> duration_words(252_000)
    '4 min 12 s'
    >>> instant_words(1_767_225_603_000, now=1_767_225_600_000)
    'in 3 s (2026-01-01T00:00:03Z)'
"""

from __future__ import annotations

import datetime
from typing import Final

__all__ = ["duration_words", "instant_words", "utc_text"]

_UNITS: Final = (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1_000))


def duration_words(ms: int) -> str:
    """The two largest units of ``ms`` ("2 h 5 min", "4 min 12 s", "3 s"); under a second in ms."""
    if ms < 1_000:
        return f"{max(ms, 0)} ms"
    parts: list[str] = []
    rest = ms
    for unit, size in _UNITS:
        if rest >= size or parts:
            amount, rest = divmod(rest, size)
            if amount:
                parts.append(f"{amount} {unit}")
            if len(parts) == 2 or (parts and amount == 0):
                break
    return " ".join(parts)


def utc_text(at: int) -> str:
    """``at`` (epoch ms) as ISO 8601 UTC to the second, e.g. ``2026-01-01T00:00:03Z``."""
    stamp = datetime.datetime.fromtimestamp(at / 1000, tz=datetime.UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def instant_words(at: int, *, now: int) -> str:
    """``at`` relative to ``now`` with the absolute time beside it: "in 3 s (...)", "4 min ago (...)"."""
    if at >= now:
        return f"in {duration_words(at - now)} ({utc_text(at)})"
    return f"{duration_words(now - at)} ago ({utc_text(at)})"
