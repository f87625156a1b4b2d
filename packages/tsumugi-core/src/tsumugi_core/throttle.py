"""Throttling on four axes and the greedy choice of what to dispatch now.

Axes: binding concurrency, binding rate (token bucket), per-key concurrency, per-key rate. Jobs without a
``concurrency_key`` are exempt from the per-key axes. A paused shard dispatches nothing.

Order: effective priority (with aging) descending, then ``eligible_at``, ``created_at`` and ``id`` ascending.
The greedy loop (docs/reference/original.md §3.6 step 5, per-key rate added) stops at the first capacity or
binding-rate block and skips past per-key blocks so other keys are not starved.

Example:
    >>> jobs = [Candidate(id="a", priority=0, eligible_at=0, created_at=0),
    ...         Candidate(id="b", priority=5, eligible_at=0, created_at=0)]
    >>> plan_dispatch(0, Policy(concurrency=1), jobs, in_flight=0, in_flight_by_key={}).chosen
    ['b']
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import msgspec

from tsumugi_core.options import MAX_SAFE_INTEGER, RateLimit
from tsumugi_core.policy import Policy
from tsumugi_core.priority import effective_priority
from tsumugi_core.wake import MIN_SWEEP_WAKE_MS

__all__ = [
    "Blocked",
    "Candidate",
    "DispatchPlan",
    "TokenBucket",
    "dispatch_order",
    "full_bucket",
    "full_key_buckets_before",
    "key_bucket_sweep_at",
    "plan_dispatch",
    "ready_at",
    "refill",
    "take",
]


class TokenBucket(msgspec.Struct, frozen=True, kw_only=True):
    """Tokens left and the instant they were last refilled."""

    tokens: float
    refilled_at: int


def full_bucket(rate: RateLimit, now: int) -> TokenBucket:
    """A bucket at capacity (what an absent bucket means)."""
    return TokenBucket(tokens=float(rate.tokens), refilled_at=now)


def refill(bucket: TokenBucket | None, rate: RateLimit, now: int) -> TokenBucket:
    """Add the tokens earned since the last refill, up to the capacity ``rate.tokens``."""
    if bucket is None:
        return full_bucket(rate, now)
    earned = max(0, now - bucket.refilled_at) * rate.tokens / rate.interval_ms
    return TokenBucket(
        tokens=min(float(rate.tokens), bucket.tokens + earned), refilled_at=max(now, bucket.refilled_at)
    )


def take(bucket: TokenBucket) -> TokenBucket:
    """Spend one token."""
    return TokenBucket(tokens=bucket.tokens - 1, refilled_at=bucket.refilled_at)


def ready_at(bucket: TokenBucket, rate: RateLimit) -> int:
    """The instant the bucket holds one whole token again."""
    if bucket.tokens >= 1:
        return bucket.refilled_at
    return bucket.refilled_at + math.ceil((1 - bucket.tokens) * rate.interval_ms / rate.tokens)


def full_key_buckets_before(per_key_rate: RateLimit | None, now: int) -> int:
    """Per-key buckets last refilled at or before this instant are full at ``now``, so they can go (ADR-0057).

    Dispatch never spends a bucket below zero tokens, and one interval earns a whole capacity, so a bucket
    untouched for an interval is full under the rate in force, whatever rate it was written under. Without a
    per-key rate every bucket is as good as full.

    Example:
        >>> full_key_buckets_before(RateLimit(tokens=5, interval_ms=1_000), 10_000)
        9000
    """
    return MAX_SAFE_INTEGER if per_key_rate is None else now - per_key_rate.interval_ms


def key_bucket_sweep_at(
    oldest_refilled_at: int | None, per_key_rate: RateLimit | None, now: int
) -> int | None:
    """When an otherwise idle shard must wake to drop full per-key buckets; None when none is stored.

    Waiting two intervals past the oldest bucket lets one wake drop every bucket written in the first of them,
    so a stream of dispatches costs at most one extra wake per interval; never sooner than
    ``now + MIN_SWEEP_WAKE_MS``.
    """
    if oldest_refilled_at is None:
        return None
    due = now if per_key_rate is None else oldest_refilled_at + 2 * per_key_rate.interval_ms
    return min(MAX_SAFE_INTEGER, max(due, now + MIN_SWEEP_WAKE_MS))


class Candidate(msgspec.Struct, frozen=True, kw_only=True):
    """A ready job as dispatch sees it."""

    id: str
    priority: int
    eligible_at: int
    created_at: int
    concurrency_key: str | None = None


class Blocked(msgspec.Struct, frozen=True, kw_only=True):
    """How many ready jobs each axis held back in one planning round."""

    paused: int = 0
    capacity: int = 0
    rate: int = 0
    per_key_concurrency: int = 0
    per_key_rate: int = 0


class DispatchPlan(msgspec.Struct, frozen=True, kw_only=True):
    """What to dispatch now and the throttle state after it."""

    chosen: list[str]
    bucket: TokenBucket | None
    """The binding bucket after dispatch; None when there is no rate limit."""
    key_buckets: dict[str, TokenBucket]
    """Per-key buckets that were refilled or spent; others are unchanged."""
    blocked: Blocked
    token_ready_at: int | None
    """Earliest instant a job held back by a token bucket could go; None when none was."""


def dispatch_order(
    candidates: Iterable[Candidate], now: int, aging_interval_ms: int | None
) -> list[Candidate]:
    """Sort candidates best first."""
    return sorted(
        candidates,
        key=lambda c: (
            -effective_priority(c.priority, c.eligible_at, now, aging_interval_ms),
            c.eligible_at,
            c.created_at,
            c.id,
        ),
    )


class _Round:
    """Mutable state of one greedy pass (kept out of the loop body to keep it readable)."""

    def __init__(
        self,
        policy: Policy,
        now: int,
        in_flight_by_key: Mapping[str, int],
        key_buckets: Mapping[str, TokenBucket],
    ) -> None:
        self.policy = policy
        self.now = now
        self.by_key = dict(in_flight_by_key)
        self.key_buckets: dict[str, TokenBucket] = {}
        self.stored_buckets = key_buckets
        self.per_key_concurrency = 0
        self.per_key_rate = 0
        self.token_ready_at: int | None = None

    def note_ready_at(self, instant: int) -> None:
        if self.token_ready_at is None or instant < self.token_ready_at:
            self.token_ready_at = instant

    def key_allows(self, key: str) -> bool:
        if self.by_key.get(key, 0) >= self.policy.per_key_concurrency:
            self.per_key_concurrency += 1
            return False
        rate = self.policy.per_key_rate
        if rate is None:
            return True
        bucket = self.key_buckets.get(key) or refill(self.stored_buckets.get(key), rate, self.now)
        self.key_buckets[key] = bucket
        if bucket.tokens < 1:
            self.per_key_rate += 1
            self.note_ready_at(ready_at(bucket, rate))
            return False
        return True

    def take_key(self, key: str) -> None:
        self.by_key[key] = self.by_key.get(key, 0) + 1
        if key in self.key_buckets:
            self.key_buckets[key] = take(self.key_buckets[key])


def plan_dispatch(
    now: int,
    policy: Policy,
    candidates: Iterable[Candidate],
    in_flight: int,
    in_flight_by_key: Mapping[str, int],
    bucket: TokenBucket | None = None,
    key_buckets: Mapping[str, TokenBucket] | None = None,
    unread: int = 0,
) -> DispatchPlan:
    """Choose, greedily and best first, the ready jobs to dispatch at ``now``.

    Args:
        now: The current instant.
        policy: The shard's effective policy.
        candidates: Ready jobs (any order).
        in_flight: Dispatched jobs (QUEUED/RUNNING) counting against ``concurrency``.
        in_flight_by_key: The same per concurrency key.
        bucket: The binding's stored token bucket (None = full).
        key_buckets: Stored per-key buckets (absent = full).
        unread: Ready jobs known to wait after the candidates without being read (counted by the caller):
            held back by whatever axis holds back a job past the last candidate (paused, capacity or rate),
            never chosen (ADR-0179).
    """
    ordered = dispatch_order(candidates, now, policy.aging_interval_ms)
    rate = policy.rate
    current = refill(bucket, rate, now) if rate is not None else None
    if policy.paused:
        return DispatchPlan(
            chosen=[],
            bucket=current,
            key_buckets={},
            blocked=Blocked(paused=len(ordered) + unread),
            token_ready_at=None,
        )
    state = _Round(policy, now, in_flight_by_key, key_buckets or {})
    slots = max(0, policy.concurrency - in_flight)
    chosen: list[str] = []
    capacity = rate_blocked = 0
    held = len(ordered) + unread  # the unread jobs come after every candidate
    for index, job in enumerate(ordered):
        if slots <= 0:
            capacity = held - index
            break
        if current is not None and rate is not None and current.tokens < 1:
            rate_blocked = held - index
            state.note_ready_at(ready_at(current, rate))
            break
        key = job.concurrency_key
        if key is not None and not state.key_allows(key):
            continue
        chosen.append(job.id)
        slots -= 1
        if current is not None:
            current = take(current)
        if key is not None:
            state.take_key(key)
    else:  # every candidate was looked at: the unread jobs come next, held back by what holds them
        if unread and slots <= 0:
            capacity = unread
        elif unread and current is not None and rate is not None and current.tokens < 1:
            rate_blocked = unread
            state.note_ready_at(ready_at(current, rate))
    blocked = Blocked(
        capacity=capacity,
        rate=rate_blocked,
        per_key_concurrency=state.per_key_concurrency,
        per_key_rate=state.per_key_rate,
    )
    return DispatchPlan(
        chosen=chosen,
        bucket=current,
        key_buckets=state.key_buckets,
        blocked=blocked,
        token_ready_at=state.token_ready_at,
    )
