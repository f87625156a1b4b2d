"""When the HTTP clients try a request again, and how long they wait first (ADR-0063).

Pure decisions: the clients call `RetryPolicy.delay_s` after a failure and sleep (with the clock they were
given) for the answer, or give up on None. A request that may have reached the scheduler is repeated only
when repeating it is harmless (``idempotent``): reads, and enqueues whose every item carries a client-made id.

Example:
    >>> policy = RetryPolicy(attempts=3, base_s=0.1, max_s=1.0)
    >>> round(policy.delay_s(0, Failure.UNAVAILABLE, idempotent=True, rand=0.5), 3)
    0.075
    >>> policy.delay_s(2, Failure.UNAVAILABLE, idempotent=True, rand=0.5) is None  # the third try was the last
    True
    >>> policy.delay_s(0, Failure.MAYBE_SENT, idempotent=False, rand=0.5) is None  # could make a second job
    True
"""

from __future__ import annotations

import math
from enum import Enum
from typing import TYPE_CHECKING, cast

import msgspec

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.time_values import Seconds, struct_in_seconds

__all__ = ["Failure", "RetryPolicy", "grown"]


class Failure(Enum):
    """How a try failed, as far as retrying is concerned."""

    NOT_SENT = "not-sent"
    """No connection was made (refused, connect timeout, pool timeout): the scheduler saw nothing."""
    MAYBE_SENT = "maybe-sent"
    """The connection broke or timed out after the request may have arrived."""
    UNAVAILABLE = "unavailable"
    """The scheduler (or a proxy before it) answered 502, 503 or 504."""


def grown(first: float, factor: float, steps: int, cap: float) -> float:
    """``first * factor**steps``, at most ``cap``.

    A power past a float's range is the cap, not an ``OverflowError`` (a wait polled for 17 minutes took 1,024
    steps of 2.0).
    """
    try:
        return min(cap, first * factor**steps)
    except OverflowError:
        return cap


class RetryPolicy(msgspec.Struct, frozen=True, kw_only=True):
    """Tries per request and the backoff between them: exponential with "equal jitter".

    Attributes:
        attempts: Tries in all, the first included (1 turns retrying off).
        base_s: The wait before the second try, before jitter.
        factor: Each later wait is this many times the one before.
        max_s: No wait is longer than this.
        jitter: Draw each wait from ``[wait / 2, wait]`` so many clients do not retry in step.
    """

    attempts: int = 4
    base_s: float = 0.2
    factor: float = 2.0
    max_s: float = 5.0
    jitter: bool = True

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            attempts: int = 4,
            base_s: Seconds = 0.2,
            factor: float = 2.0,
            max_s: Seconds = 5.0,
            jitter: bool = True,
        ) -> None:
            """``base_s`` / ``max_s``: seconds or a `timedelta` (ADR-0161)."""

    def __post_init__(self) -> None:
        """Check the settings; the message names the field."""
        struct_in_seconds(self, ("base_s", "max_s"))
        attempts = cast(object, self.attempts)  # callers may bypass typing
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
            raise InvalidFieldError("attempts", f"must be an integer of at least 1, got {attempts!r}")
        numbers = (self.base_s, self.max_s, self.factor)
        if not all(math.isfinite(n) for n in numbers):  # NaN passes every comparison below
            raise InvalidFieldError(
                "base_s",
                "must be finite, and so must max_s and factor",
                message="base_s, max_s and factor must be finite numbers",
            )
        if self.base_s < 0 or self.max_s < 0 or self.factor < 1:
            raise InvalidFieldError(
                "base_s",
                "and max_s must not be negative, factor must be at least 1",
                message="base_s and max_s must not be negative, factor must be at least 1",
            )

    def delay_s(self, tried: int, failure: Failure, *, idempotent: bool, rand: float) -> float | None:
        """Seconds to wait before try ``tried + 1`` (``tried`` counts from 0), or None to give up.

        Args:
            tried: The index of the try that just failed (0 for the first).
            failure: How it failed.
            idempotent: Whether repeating the request is harmless if it did arrive.
            rand: A uniform number in ``[0, 1)`` for jitter.
        """
        if tried + 1 >= self.attempts:
            return None
        if failure is not Failure.NOT_SENT and not idempotent:
            return None
        wait = grown(self.base_s, self.factor, tried, self.max_s)
        return wait / 2 + rand * wait / 2 if self.jitter else wait
