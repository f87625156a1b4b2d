"""Backoff delays and the retry decision (docs/reference/original.md §3.4 examples)."""

from __future__ import annotations

import pytest

from tsumugi_core.backoff import RetryDecision, backoff_delay_ms, next_retry
from tsumugi_core.options import MAX_SAFE_INTEGER, ExponentialBackoff, FixedBackoff


@pytest.mark.parametrize(("attempts", "delay"), [(1, 1000), (2, 2000), (3, 4000), (4, 8000)])
def test_exponential_doubles_from_the_base(attempts: int, delay: int) -> None:
    assert backoff_delay_ms(attempts, ExponentialBackoff(jitter=False), rand=0.0) == delay


def test_exponential_is_capped_by_max_ms_even_for_huge_exponents() -> None:
    capped = ExponentialBackoff(max_ms=10_000, jitter=False)
    assert backoff_delay_ms(20, capped, rand=0.0) == 10_000
    assert backoff_delay_ms(5000, capped, rand=0.0) == 10_000


def test_equal_jitter_draws_between_half_and_full() -> None:
    fixed = FixedBackoff(delay_ms=10_000)
    assert backoff_delay_ms(1, fixed, rand=0.0) == 5000
    assert backoff_delay_ms(1, fixed, rand=0.9999999) == 10_000
    # Half-up rounding as JavaScript's Math.round: 1.5 -> 2, not banker's 2 -> 2 / 0.5 -> 0.
    assert backoff_delay_ms(1, FixedBackoff(delay_ms=3), rand=0.0) == 2


def test_fixed_without_jitter_waits_exactly_the_delay() -> None:
    assert next_retry(1, 3, FixedBackoff(delay_ms=5000, jitter=False), now=100, rand=0.3) == RetryDecision(
        exhausted=False, retry_at=5100
    )


def test_attempts_reaching_max_are_exhausted() -> None:
    assert next_retry(2, 3, ExponentialBackoff(), now=0, rand=0.5).exhausted is False
    assert next_retry(3, 3, ExponentialBackoff(), now=0, rand=0.5) == RetryDecision(
        exhausted=True, retry_at=None
    )
    assert next_retry(4, 3, ExponentialBackoff(), now=0, rand=0.5).exhausted is True


def test_a_huge_backoff_caps_the_retry_instant_at_max_safe_integer() -> None:
    backoff = FixedBackoff(delay_ms=MAX_SAFE_INTEGER, jitter=False)
    assert next_retry(1, 3, backoff, now=1_000_000, rand=0.5).retry_at == MAX_SAFE_INTEGER


# Retries across a budget of three: the middle attempt retries with its own delay.


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
