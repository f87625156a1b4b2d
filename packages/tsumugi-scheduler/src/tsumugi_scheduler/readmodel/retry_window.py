"""Whether a listed job can still be retried by hand (the ``retryable`` flag of lists and details).

A FAILED or STALLED job is retryable while its shard still keeps it: until ``failed_retention_ms`` after
its last update (docs/reference/original.md §4.3). The retention is per binding; bindings not named use the
default.
"""

from __future__ import annotations

from typing import Final

import msgspec

from tsumugi_core.policy import Retention
from tsumugi_core.states import RETRYABLE_STATES

__all__ = ["DEFAULT_FAILED_RETENTION_MS", "RetryWindow", "is_retryable"]

DEFAULT_FAILED_RETENTION_MS: Final = Retention().failed_retention_ms
"""The shard's default retention of FAILED / STALLED jobs (7 days)."""

_RETRYABLE: Final = frozenset(s.value for s in RETRYABLE_STATES)


class RetryWindow(msgspec.Struct, frozen=True, kw_only=True):
    """The instant of the request and the failed-job retention of each binding.

    Example:
        >>> window = RetryWindow(now=10_000, failed_retention_ms=5_000, by_binding={"MAIL": 1_000})
        >>> window.allows("FAILED", "SMS", updated_at=6_000), window.allows("FAILED", "MAIL", updated_at=6_000)
        (True, False)
    """

    now: int
    failed_retention_ms: int = DEFAULT_FAILED_RETENTION_MS
    by_binding: dict[str, int] = msgspec.field(default_factory=dict[str, int])

    def allows(self, state: str, binding: str, updated_at: int) -> bool:
        """True when a job in ``state`` of ``binding`` last updated at ``updated_at`` may be retried."""
        if state not in _RETRYABLE:
            return False
        retention = self.by_binding.get(binding, self.failed_retention_ms)
        return updated_at > self.now - retention


def is_retryable(state: str, binding: str, updated_at: int, window: RetryWindow | None) -> bool:
    """``window.allows(...)``; without a window, any FAILED / STALLED row still in the read model.

    The read model's own sweep uses the shard's default failed retention, so a row still listed is, by
    default, still retryable (the original's ADR-0027 invariant).
    """
    if window is None:
        return state in _RETRYABLE
    return window.allows(state, binding, updated_at)
