"""Token buckets and the greedy dispatch plan over four throttle axes."""

from __future__ import annotations

from tsumugi_core.options import RateLimit
from tsumugi_core.policy import Policy
from tsumugi_core.throttle import (
    Blocked,
    Candidate,
    TokenBucket,
    dispatch_order,
    full_bucket,
    full_key_buckets_before,
    key_bucket_sweep_at,
    plan_dispatch,
    ready_at,
    refill,
    take,
)

RATE = RateLimit(tokens=2, interval_ms=1000)


def job(
    id: str, priority: int = 0, eligible_at: int = 0, key: str | None = None, created_at: int = 0
) -> Candidate:
    return Candidate(
        id=id, priority=priority, eligible_at=eligible_at, created_at=created_at, concurrency_key=key
    )


def test_bucket_refills_continuously_up_to_capacity() -> None:
    empty = TokenBucket(tokens=0.0, refilled_at=0)
    assert refill(empty, RATE, 250).tokens == 0.5
    assert refill(empty, RATE, 10_000).tokens == 2.0
    assert refill(None, RATE, 7) == TokenBucket(tokens=2.0, refilled_at=7)
    assert take(TokenBucket(tokens=2.0, refilled_at=0)).tokens == 1.0
    assert ready_at(TokenBucket(tokens=0.5, refilled_at=100), RATE) == 350
    assert ready_at(TokenBucket(tokens=1.0, refilled_at=100), RATE) == 100


def test_order_is_effective_priority_then_eligibility_then_creation_then_id() -> None:
    jobs = [job("d", 0, 5), job("c", 0, 5, created_at=-1), job("b", 1, 9), job("a", 0, 0), job("e", 0, 5)]
    assert [c.id for c in dispatch_order(jobs, now=10, aging_interval_ms=None)] == ["b", "a", "c", "d", "e"]
    # With aging every 5 ms, "a" (waited 10 ms: +2) overtakes "b" (waited 1 ms: +0 -> 1).
    assert next(c.id for c in dispatch_order(jobs, now=10, aging_interval_ms=5)) == "a"


def test_concurrency_limits_the_batch_and_counts_the_rest_as_capacity_blocked() -> None:
    plan = plan_dispatch(
        0, Policy(concurrency=3), [job(str(i)) for i in range(5)], in_flight=1, in_flight_by_key={}
    )
    assert plan.chosen == ["0", "1"]
    assert plan.blocked == Blocked(capacity=3)
    assert plan.token_ready_at is None


def test_rate_stops_at_the_first_empty_bucket_and_says_when_it_refills() -> None:
    policy = Policy(rate=RATE)
    plan = plan_dispatch(
        0, policy, [job("a"), job("b"), job("c")], 0, {}, TokenBucket(tokens=2.0, refilled_at=0)
    )
    assert plan.chosen == ["a", "b"]
    assert plan.bucket == TokenBucket(tokens=0.0, refilled_at=0)
    assert plan.blocked.rate == 1
    assert plan.token_ready_at == 500


def test_unread_jobs_count_on_the_axis_that_holds_back_the_next_job_and_are_never_chosen() -> None:
    # ADR-0179: the shard reads only what it may dispatch and counts the ready jobs behind it.
    full = plan_dispatch(0, Policy(concurrency=2), [job("a"), job("b")], 0, {}, unread=7)
    assert (full.chosen, full.blocked) == (["a", "b"], Blocked(capacity=7))
    stopped = plan_dispatch(0, Policy(concurrency=3), [job(str(i)) for i in range(5)], 1, {}, unread=7)
    assert (stopped.chosen, stopped.blocked) == (["0", "1"], Blocked(capacity=3 + 7))
    room = plan_dispatch(0, Policy(concurrency=5), [job("a")], 0, {}, unread=7)
    assert (room.chosen, room.blocked) == (["a"], Blocked())  # slots left: the next tick takes them
    paused = plan_dispatch(0, Policy(paused=True), [job("a")], 0, {}, unread=7)
    assert paused.blocked == Blocked(paused=8)


def test_unread_jobs_behind_a_spent_bucket_say_when_it_refills() -> None:
    # The last read job took the last token: the unread jobs wait for the bucket, so the shard must wake then.
    bucket = TokenBucket(tokens=2.0, refilled_at=0)
    plan = plan_dispatch(0, Policy(rate=RATE), [job("a"), job("b")], 0, {}, bucket, unread=4)
    assert (plan.chosen, plan.blocked, plan.token_ready_at) == (["a", "b"], Blocked(rate=4), 500)
    alone = plan_dispatch(0, Policy(rate=RATE), [job("a"), job("b")], 0, {}, bucket)
    assert (alone.blocked, alone.token_ready_at) == (Blocked(), None)


def test_per_key_concurrency_skips_a_busy_key_without_starving_others() -> None:
    jobs = [job("a1", 5, key="a"), job("a2", 4, key="a"), job("b1", 3, key="b"), job("n", 2)]
    plan = plan_dispatch(0, Policy(), jobs, in_flight=1, in_flight_by_key={"a": 1})
    assert plan.chosen == ["b1", "n"]
    assert plan.blocked.per_key_concurrency == 2


def test_per_key_concurrency_counts_jobs_chosen_in_the_same_round() -> None:
    plan = plan_dispatch(0, Policy(per_key_concurrency=2), [job(f"a{i}", key="a") for i in range(3)], 0, {})
    assert plan.chosen == ["a0", "a1"]


def test_jobs_without_a_key_are_exempt_from_per_key_axes() -> None:
    policy = Policy(per_key_concurrency=1, per_key_rate=RateLimit(tokens=1, interval_ms=1000))
    plan = plan_dispatch(0, policy, [job("x"), job("y")], 0, {})
    assert plan.chosen == ["x", "y"]
    assert plan.key_buckets == {}


def test_per_key_rate_spends_one_bucket_per_key() -> None:
    policy = Policy(per_key_concurrency=10, per_key_rate=RateLimit(tokens=1, interval_ms=1000))
    stored = {"b": TokenBucket(tokens=0.0, refilled_at=0)}
    plan = plan_dispatch(
        100, policy, [job("a1", key="a"), job("a2", key="a"), job("b1", key="b")], 0, {}, None, stored
    )
    assert plan.chosen == ["a1"]
    assert plan.blocked.per_key_rate == 2
    assert plan.key_buckets["a"].tokens == 0.0
    assert plan.token_ready_at == 1000  # "b" refills first: 0.1 tokens at 100, whole at 1000


def test_paused_dispatches_nothing() -> None:
    plan = plan_dispatch(0, Policy(paused=True), [job("a"), job("b")], 0, {})
    assert plan.chosen == []
    assert plan.blocked == Blocked(paused=2)


# -- per-key bucket retention (ADR-0057) -------------------------------------------------------------------


def test_a_bucket_untouched_for_one_interval_is_full_at_any_capacity() -> None:
    rate = RateLimit(tokens=4, interval_ms=1_000)
    assert full_key_buckets_before(rate, 7_500) == 6_500
    # The weakest stored bucket (spent to zero at 6_500) is full exactly one interval later, so dropping it is
    # the same as keeping it; one millisecond sooner it is not.
    empty = TokenBucket(tokens=0.0, refilled_at=6_500)
    assert (
        refill(empty, rate, 7_500) == TokenBucket(tokens=4.0, refilled_at=7_500) == full_bucket(rate, 7_500)
    )
    assert refill(empty, rate, 7_499).tokens < 4
    # A larger capacity set since: still full after one interval of the rate in force.
    bigger = RateLimit(tokens=40, interval_ms=1_000)
    assert refill(empty, bigger, 7_500) == full_bucket(bigger, 7_500)


def test_without_a_per_key_rate_every_bucket_can_go() -> None:
    assert full_key_buckets_before(None, 7_500) == 9_007_199_254_740_991


def test_the_bucket_sweep_wakes_two_intervals_after_the_oldest_bucket() -> None:
    rate = RateLimit(tokens=1, interval_ms=60_000)
    assert key_bucket_sweep_at(None, rate, 5_000) is None
    assert key_bucket_sweep_at(3_000, rate, 5_000) == 123_000
    assert (
        key_bucket_sweep_at(3_000, RateLimit(tokens=1, interval_ms=10), 5_000) == 6_000
    )  # at least 1 s ahead
    assert key_bucket_sweep_at(3_000, None, 5_000) == 6_000
    huge = RateLimit(tokens=1, interval_ms=9_007_199_254_740_991)
    assert key_bucket_sweep_at(3_000, huge, 5_000) == 9_007_199_254_740_991


# Token buckets refilled at non-zero instants, and what a paused plan hands back. The buckets above were last
# refilled at 0, where ``now - refilled_at`` and ``now + refilled_at`` agree; here the refill instant is far
# from 0.


"""Two tokens a second: one token every 500 ms."""


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
