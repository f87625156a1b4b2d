"""When to try a failed job again (docs/reference/original.md §3.4).

Example:
    >>> from tsumugi_core.options import ExponentialBackoff
    >>> next_retry(1, 3, ExponentialBackoff(jitter=False), now=0, rand=0.5)
    RetryDecision(exhausted=False, retry_at=1000)
    >>> next_retry(3, 3, ExponentialBackoff(), now=0, rand=0.5)
    RetryDecision(exhausted=True, retry_at=None)
"""

from __future__ import annotations

import math

import msgspec

from tsumugi_core.options import Backoff, FixedBackoff, later_instant

__all__ = ["RetryDecision", "backoff_delay_ms", "next_retry"]


class RetryDecision(msgspec.Struct, frozen=True, kw_only=True):
    """Either ``exhausted`` (no attempts left) or the instant ``retry_at`` of the next try."""

    exhausted: bool
    retry_at: int | None


def _round_half_up(value: float) -> int:
    # JavaScript's Math.round rounds .5 up; Python's round() would round to even.
    return math.floor(value + 0.5)


def _base_delay(attempts: int, backoff: Backoff) -> float:
    if isinstance(backoff, FixedBackoff):
        return float(backoff.delay_ms)
    exponent = max(0, attempts - 1)
    try:
        delay = backoff.base_ms * (backoff.factor**exponent)
    except OverflowError:
        return float(backoff.max_ms)
    return float(min(delay, backoff.max_ms))


def backoff_delay_ms(attempts: int, backoff: Backoff, rand: float) -> int:
    """The wait before the next try after ``attempts`` finished attempts.

    With jitter the wait is drawn from ``[base / 2, base]`` by ``rand`` ("equal jitter").
    """
    base = _base_delay(attempts, backoff)
    if backoff.jitter:
        return _round_half_up(base / 2 + rand * base / 2)
    return _round_half_up(base)


def next_retry(attempts: int, max_attempts: int, backoff: Backoff, now: int, rand: float) -> RetryDecision:
    """Decide what follows a failed attempt.

    Args:
        attempts: Finished attempts, the failed one included.
        max_attempts: The job's attempt budget.
        backoff: The job's backoff.
        now: The current instant (epoch ms).
        rand: A uniform number in ``[0, 1)`` for jitter.

    Returns:
        ``exhausted`` when ``attempts >= max_attempts``, else the instant of the next try (at most
        MAX_SAFE_INTEGER, however large the backoff).
    """
    if attempts >= max_attempts:
        return RetryDecision(exhausted=True, retry_at=None)
    return RetryDecision(
        exhausted=False, retry_at=later_instant(now, backoff_delay_ms(attempts, backoff, rand))
    )
