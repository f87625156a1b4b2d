"""How long a started attempt may live, how often it must say so, and when its outcome is unknown.

Rules (ADR-0051, ADR-0052, ADR-0053, ADR-0185):

- an attempt runs inside one queue consumer invocation, which Cloudflare stops 15 minutes after it began
  (developers.cloudflare.com/queues/platform/limits/); the invocation began before the attempt started, so
  nothing of an attempt can still run ``MAX_INVOCATION_MS`` after its start (`attempt_hard_end`);
- a heartbeat must be able to keep any allowed ``timeout_ms`` alive, so the performer side sends at most one
  per `heartbeat_interval_ms` (5 s, or a third of the timeout when that is shorter);
- an at-most-once attempt whose failure was the consumer giving up (a timeout, a failed call) or that is
  reported only once it was silent for its whole timeout may still be running or may have done its work: its
  outcome is unknown (`outcome_unknown`), so it is never followed by another attempt automatically;
- an attempt the shard stops waiting for (the reaper gave it up, or the consumer reported that it stopped waiting)
  may still run until `running_until`: the claim's hard end, else the hard end counted from its last sign of
  life, else nothing (it never showed it started); its concurrency_key keeps the slot until then (ADR-0185).

Example:
    >>> heartbeat_interval_ms(60_000), heartbeat_interval_ms(2_000)
    (5000, 666)
    >>> attempt_hard_end(1_000)
    901000
    >>> running_until(claim_hard_end=None, last_sign_at=5_000, now=70_000, abandoned=False)
    905000
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "MAX_HEARTBEAT_INTERVAL_MS",
    "MAX_INVOCATION_MS",
    "attempt_hard_end",
    "heartbeat_interval_ms",
    "outcome_unknown",
    "running_until",
]

MAX_HEARTBEAT_INTERVAL_MS: Final = 5_000
"""The performer side's longest heartbeat throttle (the original's fixed 5 s)."""
MAX_INVOCATION_MS: Final = 900_000
"""Cloudflare stops a queue consumer invocation after 15 minutes of wall time (Queues limits page)."""


def heartbeat_interval_ms(timeout_ms: int | None) -> int:
    """The least time between two heartbeats the performer side sends for an attempt with ``timeout_ms``.

    A third of the timeout leaves room for two lost or slow heartbeats before the attempt times out; without
    a known timeout (an older scheduler) the original's 5 s apply.
    """
    if timeout_ms is None or timeout_ms <= 0:
        return MAX_HEARTBEAT_INTERVAL_MS
    return max(1, min(MAX_HEARTBEAT_INTERVAL_MS, timeout_ms // 3))


def attempt_hard_end(started_at: int) -> int:
    """The instant after which nothing of an attempt that started at ``started_at`` can still run."""
    return started_at + MAX_INVOCATION_MS


def outcome_unknown(*, flagged: bool, now: int, silence_at: int | None) -> bool:
    """Whether a failure report of an at-most-once attempt leaves its outcome unknown.

    ``flagged``: the consumer says it gave up waiting (timeout) or lost the call, so the performer may still
    be running. ``silence_at``: the attempt's last sign of life plus ``timeout_ms``; a report at or after it
    comes from an attempt the consumer would have given up on, whatever it says.
    """
    return flagged or (silence_at is not None and now >= silence_at)


def running_until(
    *, claim_hard_end: int | None, last_sign_at: int | None, now: int, abandoned: bool
) -> int | None:
    """The instant after which nothing of an attempt the shard stops waiting for can still run, or None.

    None means it cannot be running at all.

    Args:
        claim_hard_end: The attempt's claim plus `MAX_INVOCATION_MS` (an at-most-once attempt that was
            claimed: the tightest bound, its invocation began before the claim).
        last_sign_at: The attempt's last sign of life (its start mark, a heartbeat, a saved step): its
            invocation began before it, so it ends by `attempt_hard_end` of it.
        now: When the shard stops waiting.
        abandoned: The consumer reports that it stopped waiting for the performer (a timeout or a lost call), so
            the attempt started, and its invocation began before ``now``. Without it and without any sign of life
            (the reaper giving up on an attempt that never showed it started), nothing is known to run: an
            at-most-once attempt can no longer be claimed, and an at-least-once message not yet delivered is
            not bounded by anything the shard knows.
    """
    if claim_hard_end is not None:
        return claim_hard_end
    if last_sign_at is not None:
        return attempt_hard_end(last_sign_at)
    return attempt_hard_end(now) if abandoned else None
