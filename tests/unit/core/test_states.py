"""The transition table: every one of the 49 (from, to) pairs, and the groupings derived from it."""

from __future__ import annotations

import itertools

import pytest

from tsumugi_core.states import (
    ACTIVE_STATES,
    RETRYABLE_STATES,
    TERMINAL_STATES,
    TRANSITIONS,
    InvalidTransitionError,
    JobState,
    assert_transition,
    can_transition,
    current_attempt,
    is_active,
    is_terminal,
)

S = JobState
LEGAL = {
    (S.SCHEDULED, S.QUEUED),
    (S.SCHEDULED, S.CANCELLED),
    (S.QUEUED, S.RUNNING),
    (S.QUEUED, S.COMPLETED),
    (S.QUEUED, S.FAILED),
    (S.QUEUED, S.SCHEDULED),
    (S.QUEUED, S.STALLED),
    (S.QUEUED, S.CANCELLED),
    (S.RUNNING, S.COMPLETED),
    (S.RUNNING, S.FAILED),
    (S.RUNNING, S.SCHEDULED),
    (S.RUNNING, S.STALLED),
    (S.RUNNING, S.CANCELLED),
    (S.FAILED, S.SCHEDULED),
    (S.STALLED, S.SCHEDULED),
    (S.QUEUED, S.SLEEPING),
    (S.RUNNING, S.SLEEPING),
    (S.SLEEPING, S.SCHEDULED),
    (S.SLEEPING, S.CANCELLED),
}
ALL_PAIRS = list(itertools.product(JobState, JobState))


def test_the_original_seven_states_keep_their_names_and_sleeping_follows() -> None:
    assert [s.value for s in JobState] == [
        "SCHEDULED",
        "QUEUED",
        "RUNNING",
        "COMPLETED",
        "FAILED",
        "CANCELLED",
        "STALLED",
        "SLEEPING",
    ]
    assert len(ALL_PAIRS) == 64


@pytest.mark.parametrize(("from_state", "to_state"), ALL_PAIRS)
def test_every_pair_is_legal_exactly_when_listed(from_state: JobState, to_state: JobState) -> None:
    expected = (from_state, to_state) in LEGAL
    assert can_transition(from_state, to_state) is expected
    if expected:
        assert_transition(from_state, to_state)
    else:
        with pytest.raises(InvalidTransitionError) as info:
            assert_transition(from_state, to_state)
        assert str(info.value) == f"invalid state transition: {from_state} -> {to_state}"
        assert (info.value.from_state, info.value.to_state) == (from_state, to_state)


def test_groupings_follow_the_table() -> None:
    assert {s for s in JobState if not TRANSITIONS[s] or s in RETRYABLE_STATES} == TERMINAL_STATES
    assert set(JobState) - TERMINAL_STATES == ACTIVE_STATES
    assert {S.FAILED, S.STALLED} == RETRYABLE_STATES
    assert all(is_active(s) != is_terminal(s) for s in JobState)
    assert is_terminal(S.STALLED)
    assert is_active(S.RUNNING)


def test_the_current_attempt_is_the_one_in_progress_and_only_while_in_flight() -> None:
    # attempts counts finished attempts: the first attempt runs with attempts == 0 (issue 26 item 1).
    assert [current_attempt(JobState.QUEUED, 0), current_attempt(JobState.RUNNING, 0)] == [1, 1]
    assert current_attempt(JobState.RUNNING, 2) == 3
    idle = [s for s in JobState if s not in (JobState.QUEUED, JobState.RUNNING)]
    assert [current_attempt(s, 1) for s in idle] == [None] * len(idle)
