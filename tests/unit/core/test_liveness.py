"""tsumugi_core.liveness: heartbeat throttle, an attempt's hard end, unknown outcomes, how long an attempt given
up may still run (ADR-0051, ADR-0053, ADR-0185)."""

from __future__ import annotations

import pytest

from tsumugi_core.liveness import (
    MAX_HEARTBEAT_INTERVAL_MS,
    MAX_INVOCATION_MS,
    attempt_hard_end,
    heartbeat_interval_ms,
    outcome_unknown,
    running_until,
)


@pytest.mark.parametrize(
    ("timeout_ms", "interval"),
    [
        (60_000, 5_000),
        (15_000, 5_000),
        (14_999, 4_999),
        (2_000, 666),
        (3, 1),
        (1, 1),
        (None, 5_000),
        (0, 5_000),
        (-5, 5_000),
    ],
)
def test_the_heartbeat_interval_is_a_third_of_the_timeout_at_most_five_seconds(
    timeout_ms: int | None, interval: int
) -> None:
    assert heartbeat_interval_ms(timeout_ms) == interval
    assert heartbeat_interval_ms(timeout_ms) <= MAX_HEARTBEAT_INTERVAL_MS


def test_an_attempt_ends_at_the_latest_fifteen_minutes_after_it_started() -> None:
    assert MAX_INVOCATION_MS == 15 * 60 * 1000
    assert attempt_hard_end(1_000) == 1_000 + 900_000


def test_an_outcome_is_unknown_when_flagged_or_reported_at_the_silence_point() -> None:
    assert outcome_unknown(flagged=True, now=0, silence_at=10)
    assert outcome_unknown(flagged=False, now=10, silence_at=10)
    assert not outcome_unknown(flagged=False, now=9, silence_at=10)
    assert not outcome_unknown(flagged=False, now=9, silence_at=None)


def test_an_attempt_given_up_runs_until_the_tightest_hard_end_the_shard_knows() -> None:
    # The claim bounds the invocation's start best; then the last sign of life; then, when the consumer says it
    # stopped waiting, the report itself (the performer was called before it).
    assert running_until(claim_hard_end=901_000, last_sign_at=50_000, now=60_000, abandoned=True) == 901_000
    assert running_until(claim_hard_end=None, last_sign_at=50_000, now=60_000, abandoned=True) == 950_000
    assert running_until(claim_hard_end=None, last_sign_at=None, now=60_000, abandoned=True) == 960_000


def test_an_attempt_that_never_showed_it_started_is_not_running() -> None:
    assert running_until(claim_hard_end=None, last_sign_at=None, now=60_000, abandoned=False) is None
