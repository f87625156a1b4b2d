"""Properties of the pure decision functions: backoff, aging, token buckets and the dispatch plan."""

from __future__ import annotations

import math
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from tsumugi_core.backoff import backoff_delay_ms, next_retry
from tsumugi_core.options import ExponentialBackoff, FixedBackoff, RateLimit
from tsumugi_core.policy import Policy
from tsumugi_core.priority import effective_priority
from tsumugi_core.throttle import Candidate, TokenBucket, plan_dispatch, ready_at, refill, take

NOW = 1_700_000_000_000

fixed_backoffs = st.builds(FixedBackoff, delay_ms=st.integers(0, 10**7), jitter=st.booleans())
exponential_backoffs = st.builds(
    ExponentialBackoff,
    base_ms=st.integers(0, 10**6),
    factor=st.floats(1, 10) | st.integers(1, 10),
    max_ms=st.integers(0, 10**8),
    jitter=st.booleans(),
)
rands = st.floats(0, 1, exclude_max=True)
rates = st.builds(RateLimit, tokens=st.integers(1, 50), interval_ms=st.integers(1, 100_000))


@given(backoff=exponential_backoffs, attempts=st.integers(1, 200), rand=rands)
def test_exponential_backoff_stays_within_half_and_full_of_the_capped_base(
    backoff: ExponentialBackoff, attempts: int, rand: float
) -> None:
    base = min(backoff.base_ms * float(backoff.factor) ** (attempts - 1), backoff.max_ms)
    delay = backoff_delay_ms(attempts, backoff, rand)
    low = math.floor(base / 2) if backoff.jitter else math.floor(base)
    assert low <= delay <= math.ceil(base)
    assert delay <= backoff.max_ms


@given(backoff=fixed_backoffs, attempts=st.integers(1, 50), rand=rands)
def test_fixed_backoff_does_not_grow(backoff: FixedBackoff, attempts: int, rand: float) -> None:
    assert backoff_delay_ms(attempts, backoff, rand) == backoff_delay_ms(1, backoff, rand)
    assert backoff_delay_ms(attempts, backoff, rand) <= backoff.delay_ms


@given(
    backoff=exponential_backoffs | fixed_backoffs,
    attempts=st.integers(1, 10),
    max_attempts=st.integers(1, 10),
    rand=rands,
)
def test_next_retry_is_exhausted_exactly_when_attempts_reach_the_budget(
    backoff: ExponentialBackoff | FixedBackoff, attempts: int, max_attempts: int, rand: float
) -> None:
    decision = next_retry(attempts, max_attempts, backoff, NOW, rand)
    assert decision.exhausted == (attempts >= max_attempts)
    if not decision.exhausted:
        assert decision.retry_at is not None
        assert decision.retry_at >= NOW


@given(
    priority=st.integers(-10, 10),
    eligible_at=st.integers(NOW - 10**8, NOW + 10**6),
    waited=st.integers(0, 10**8),
    later=st.integers(0, 10**8),
    interval=st.none() | st.integers(1, 10**6),
)
def test_effective_priority_never_drops_while_a_job_waits(
    priority: int, eligible_at: int, waited: int, later: int, interval: int | None
) -> None:
    now = eligible_at + waited
    earlier_value = effective_priority(priority, eligible_at, now, interval)
    assert effective_priority(priority, eligible_at, now + later, interval) >= earlier_value
    assert earlier_value >= priority
    # An older job of the same priority is never behind a younger one.
    assert effective_priority(priority, eligible_at - later, now, interval) >= earlier_value


@given(
    rate=rates,
    tokens=st.floats(-5, 50),
    steps=st.lists(st.tuples(st.integers(0, 200_000), st.booleans()), max_size=30),
)
def test_token_bucket_never_exceeds_capacity_and_refills_to_it(
    rate: RateLimit, tokens: float, steps: list[tuple[int, bool]]
) -> None:
    bucket = TokenBucket(tokens=min(tokens, rate.tokens), refilled_at=NOW)
    now = NOW
    for wait, spend in steps:
        now += wait
        bucket = refill(bucket, rate, now)
        assert bucket.tokens <= rate.tokens
        if spend and bucket.tokens >= 1:
            bucket = take(bucket)
            assert bucket.tokens >= 0
    due = ready_at(bucket, rate)
    assert due >= bucket.refilled_at
    assert refill(bucket, rate, due).tokens >= 1 - 1e-9
    assert refill(bucket, rate, now + rate.interval_ms * 60).tokens == rate.tokens


candidates = st.lists(
    st.builds(
        Candidate,
        id=st.text("abcdefgh", min_size=1, max_size=3),
        priority=st.integers(-2, 3),
        eligible_at=st.integers(NOW - 200_000, NOW),
        created_at=st.integers(NOW - 300_000, NOW),
        concurrency_key=st.none() | st.sampled_from(["k1", "k2", "k3"]),
    ),
    max_size=25,
    unique_by=lambda c: c.id,
)
small_policies = st.builds(
    Policy,
    concurrency=st.integers(0, 10),
    rate=st.none() | st.builds(RateLimit, tokens=st.integers(1, 5), interval_ms=st.integers(1, 5_000)),
    per_key_concurrency=st.integers(1, 3),
    per_key_rate=st.none()
    | st.builds(RateLimit, tokens=st.integers(1, 3), interval_ms=st.integers(1, 5_000)),
    aging_interval_ms=st.none() | st.integers(1, 100_000),
    paused=st.booleans(),
)


@given(
    policy=small_policies,
    jobs=candidates,
    in_flight_by_key=st.dictionaries(st.sampled_from(["k1", "k2", "k3"]), st.integers(0, 3)),
    extra_in_flight=st.integers(0, 5),
    tokens=st.none() | st.floats(0, 5),
)
def test_plan_dispatch_never_exceeds_slots_tokens_or_key_limits(
    policy: Policy,
    jobs: list[Candidate],
    in_flight_by_key: dict[str, int],
    extra_in_flight: int,
    tokens: float | None,
) -> None:
    in_flight = sum(in_flight_by_key.values()) + extra_in_flight
    bucket = None if tokens is None else TokenBucket(tokens=tokens, refilled_at=NOW)
    plan = plan_dispatch(NOW, policy, jobs, in_flight, in_flight_by_key, bucket)
    assert len(plan.chosen) == len(set(plan.chosen))
    assert set(plan.chosen) <= {job.id for job in jobs}
    assert len(plan.chosen) <= max(0, policy.concurrency - in_flight)
    if policy.paused:
        assert plan.chosen == []
    if policy.rate is not None:
        available = refill(bucket, policy.rate, NOW).tokens if bucket is not None else policy.rate.tokens
        assert len(plan.chosen) <= max(0, math.floor(available))
        assert (plan.bucket is not None and plan.bucket.tokens >= 0) or not plan.chosen
    keys = {job.id: job.concurrency_key for job in jobs}
    per_key = Counter(key for key in (keys[job_id] for job_id in plan.chosen) if key is not None)
    for key, count in per_key.items():
        assert in_flight_by_key.get(key, 0) + count <= policy.per_key_concurrency
        if policy.per_key_rate is not None:
            assert count <= policy.per_key_rate.tokens


@given(policy=small_policies, jobs=candidates)
def test_plan_dispatch_takes_a_better_job_whenever_it_takes_a_worse_one(
    policy: Policy, jobs: list[Candidate]
) -> None:
    plan = plan_dispatch(NOW, policy, jobs, 0, {})
    chosen = set(plan.chosen)
    keys_used = Counter(job.concurrency_key for job in jobs if job.id in chosen)
    worst = min(
        (
            effective_priority(j.priority, j.eligible_at, NOW, policy.aging_interval_ms)
            for j in jobs
            if j.id in chosen
        ),
        default=None,
    )
    for job in jobs:
        if job.id in chosen or worst is None:
            continue
        key = job.concurrency_key
        key_full = key is not None and (
            keys_used[key] >= policy.per_key_concurrency or policy.per_key_rate is not None
        )
        if not key_full:
            assert effective_priority(job.priority, job.eligible_at, NOW, policy.aging_interval_ms) <= worst
