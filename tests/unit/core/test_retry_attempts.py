"""Retries across a budget of three: the middle attempt retries with its own delay (issue 17)."""

from __future__ import annotations

from tsumugi_core.backoff import RetryDecision, next_retry
from tsumugi_core.options import ExponentialBackoff, FixedBackoff

BACKOFF = ExponentialBackoff(base_ms=1_000, factor=2, max_ms=60_000, jitter=False)


def test_each_attempt_of_three_gets_its_own_delay_and_the_third_is_the_last() -> None:
    assert next_retry(1, 3, BACKOFF, now=10_000, rand=0.5) == RetryDecision(exhausted=False, retry_at=11_000)
    assert next_retry(2, 3, BACKOFF, now=10_000, rand=0.5) == RetryDecision(exhausted=False, retry_at=12_000)
    assert next_retry(3, 3, BACKOFF, now=10_000, rand=0.5) == RetryDecision(exhausted=True, retry_at=None)


def test_the_middle_attempt_with_jitter_waits_between_half_and_all_of_its_delay() -> None:
    jittered = ExponentialBackoff(base_ms=1_000, factor=3, max_ms=60_000, jitter=True)
    assert next_retry(2, 3, jittered, now=0, rand=0.0).retry_at == 1_500  # 3,000 halved
    assert next_retry(2, 3, jittered, now=0, rand=0.5).retry_at == 2_250
    assert next_retry(2, 3, jittered, now=0, rand=0.999).retry_at == 2_999


def test_a_fixed_delay_is_the_same_for_every_attempt_and_counts_from_now() -> None:
    fixed = FixedBackoff(delay_ms=700, jitter=False)
    assert [next_retry(n, 4, fixed, now=5_000, rand=0.5).retry_at for n in (1, 2, 3)] == [5_700] * 3


def test_a_float_factor_that_overflows_waits_max_ms() -> None:
    backoff = ExponentialBackoff(base_ms=1_000, factor=2.5, max_ms=60_000, jitter=False)
    assert next_retry(5_000, 10_000, backoff, now=0, rand=0.5).retry_at == 60_000  # 2.5 ** 4999 overflows
