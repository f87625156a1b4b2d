"""Token buckets refilled at non-zero instants, and what a paused plan hands back (issue 17).

Every bucket of the older tests was last refilled at 0, where ``now - refilled_at`` and ``now + refilled_at``
agree; here the refill instant is far from 0.
"""

from __future__ import annotations

from tsumugi_core.options import RateLimit
from tsumugi_core.policy import Policy
from tsumugi_core.throttle import Blocked, Candidate, TokenBucket, plan_dispatch, ready_at, refill

RATE = RateLimit(tokens=2, interval_ms=1_000)
"""Two tokens a second: one token every 500 ms."""


def job(id: str, key: str | None = None) -> Candidate:
    return Candidate(id=id, priority=0, eligible_at=0, created_at=0, concurrency_key=key)


def test_a_bucket_refilled_at_10_000_earns_only_what_the_time_since_then_gives() -> None:
    empty = TokenBucket(tokens=0.0, refilled_at=10_000)
    assert refill(empty, RATE, 10_250) == TokenBucket(tokens=0.5, refilled_at=10_250)
    assert refill(empty, RATE, 10_500) == TokenBucket(tokens=1.0, refilled_at=10_500)
    assert refill(empty, RATE, 20_000) == TokenBucket(tokens=2.0, refilled_at=20_000)  # capped at capacity


def test_a_clock_behind_the_refill_instant_earns_nothing_and_keeps_the_instant() -> None:
    half = TokenBucket(tokens=0.5, refilled_at=10_000)
    assert refill(half, RATE, 9_000) == TokenBucket(tokens=0.5, refilled_at=10_000)


def test_ready_at_counts_from_a_non_zero_refill_instant() -> None:
    assert ready_at(TokenBucket(tokens=0.0, refilled_at=10_000), RATE) == 10_500
    assert ready_at(TokenBucket(tokens=0.5, refilled_at=10_000), RATE) == 10_250


def test_the_binding_bucket_refilled_at_10_000_lets_one_job_go_at_10_500_not_before() -> None:
    stored = TokenBucket(tokens=0.0, refilled_at=10_000)
    early = plan_dispatch(10_250, Policy(rate=RATE), [job("a"), job("b")], 0, {}, stored)
    assert early.chosen == []
    assert early.blocked.rate == 2
    assert early.token_ready_at == 10_500
    due = plan_dispatch(10_500, Policy(rate=RATE), [job("a"), job("b")], 0, {}, stored)
    assert due.chosen == ["a"]
    assert due.bucket == TokenBucket(tokens=0.0, refilled_at=10_500)


def test_a_per_key_bucket_refilled_at_10_000_holds_its_key_until_10_500() -> None:
    policy = Policy(per_key_concurrency=10, per_key_rate=RATE)
    stored = {"k": TokenBucket(tokens=0.0, refilled_at=10_000)}
    early = plan_dispatch(10_250, policy, [job("a", key="k")], 0, {}, None, stored)
    assert (early.chosen, early.blocked.per_key_rate, early.token_ready_at) == ([], 1, 10_500)
    due = plan_dispatch(10_500, policy, [job("a", key="k")], 0, {}, None, stored)
    assert due.chosen == ["a"]
    assert due.key_buckets == {"k": TokenBucket(tokens=0.0, refilled_at=10_500)}


def test_a_paused_plan_hands_back_the_refilled_binding_bucket_and_no_key_bucket() -> None:
    policy = Policy(paused=True, rate=RATE, per_key_concurrency=10, per_key_rate=RATE)
    stored = TokenBucket(tokens=0.0, refilled_at=10_000)
    keys = {"k": TokenBucket(tokens=0.0, refilled_at=10_000)}
    plan = plan_dispatch(10_250, policy, [job("a", key="k"), job("b")], 0, {}, stored, keys)
    assert plan.chosen == []
    assert plan.blocked == Blocked(paused=2)
    assert plan.bucket == TokenBucket(tokens=0.5, refilled_at=10_250)  # the refill is kept, nothing spent
    assert plan.key_buckets == {}  # nothing spent, nothing to store
    assert plan.token_ready_at is None


def test_a_paused_plan_without_a_rate_has_no_bucket() -> None:
    plan = plan_dispatch(10_250, Policy(paused=True), [job("a")], 0, {})
    assert plan.bucket is None
