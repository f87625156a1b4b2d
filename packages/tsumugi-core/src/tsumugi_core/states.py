"""The eight job states and the legal transitions between them, as data.

The table is the single source of truth: the engine checks every state change against it and
``docs/state-machine.md`` is checked against it by a drift test.

Example:
    >>> can_transition(JobState.SCHEDULED, JobState.QUEUED)
    True
    >>> can_transition(JobState.COMPLETED, JobState.SCHEDULED)
    False
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType

from tsumugi_core.exceptions import TsumugiError

__all__ = [
    "ACTIVE_STATES",
    "RETRYABLE_STATES",
    "TERMINAL_STATES",
    "TRANSITIONS",
    "InvalidTransitionError",
    "JobState",
    "assert_transition",
    "can_transition",
    "current_attempt",
    "is_active",
    "is_terminal",
]


class JobState(StrEnum):
    """Where a job is in its life; the values are the original's upper-case names."""

    SCHEDULED = "SCHEDULED"
    QUEUED = "QUEUED"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    STALLED = "STALLED"
    SLEEPING = "SLEEPING"
    """Between invocations of a job made of steps: asleep or waiting for an event, holding no attempt
    (ADR-0145); not one of the original's seven."""


ACTIVE_STATES: frozenset[JobState] = frozenset(
    {JobState.SCHEDULED, JobState.QUEUED, JobState.RUNNING, JobState.SLEEPING}
)
"""States of a job that is not finished; the shard owns its future."""

TERMINAL_STATES: frozenset[JobState] = frozenset(
    {JobState.COMPLETED, JobState.FAILED, JobState.CANCELLED, JobState.STALLED}
)
"""States that end a job unless a human retries it."""

RETRYABLE_STATES: frozenset[JobState] = frozenset({JobState.FAILED, JobState.STALLED})
"""Terminal states a manual retry may move back to SCHEDULED."""

_S = JobState
TRANSITIONS: Mapping[JobState, frozenset[JobState]] = MappingProxyType(
    {
        # CANCELLED from SCHEDULED covers both cancel and expiry (docs/reference/additions.md A5/A6).
        _S.SCHEDULED: frozenset({_S.QUEUED, _S.CANCELLED}),
        # QUEUED/RUNNING -> CANCELLED: a confirmed cancellation of a dispatched job (A6).
        # QUEUED/RUNNING -> SLEEPING: the attempt slept or waits for an event (ADR-0145).
        _S.QUEUED: frozenset(
            {_S.RUNNING, _S.COMPLETED, _S.FAILED, _S.SCHEDULED, _S.STALLED, _S.CANCELLED, _S.SLEEPING}
        ),
        _S.RUNNING: frozenset({_S.COMPLETED, _S.FAILED, _S.SCHEDULED, _S.STALLED, _S.CANCELLED, _S.SLEEPING}),
        # SLEEPING -> SCHEDULED: its time came (or its event did); -> CANCELLED: cancel (ADR-0145).
        _S.SLEEPING: frozenset({_S.SCHEDULED, _S.CANCELLED}),
        _S.COMPLETED: frozenset(),
        _S.FAILED: frozenset({_S.SCHEDULED}),
        _S.CANCELLED: frozenset(),
        _S.STALLED: frozenset({_S.SCHEDULED}),
    }
)
"""Legal ``from -> to`` moves; self-transitions are never legal."""


class InvalidTransitionError(TsumugiError, ValueError):
    """A state change the transition table does not allow.

    Attributes:
        from_state: The state the job was in.
        to_state: The state the change asked for.
    """

    def __init__(self, from_state: JobState, to_state: JobState) -> None:
        super().__init__(f"invalid state transition: {from_state} -> {to_state}")
        self.from_state = from_state
        self.to_state = to_state


def can_transition(from_state: JobState, to_state: JobState) -> bool:
    """Whether ``from_state -> to_state`` is a legal move."""
    return to_state in TRANSITIONS[from_state]


def assert_transition(from_state: JobState, to_state: JobState) -> None:
    """Raise ``InvalidTransitionError`` unless ``from_state -> to_state`` is legal.

    Raises:
        InvalidTransitionError: the move is not in ``TRANSITIONS``.
    """
    if to_state not in TRANSITIONS[from_state]:
        raise InvalidTransitionError(from_state, to_state)


def is_active(state: JobState) -> bool:
    """Whether a job in ``state`` is still owned by the shard (not finished)."""
    return state in ACTIVE_STATES


def is_terminal(state: JobState) -> bool:
    """Whether ``state`` ends the job (until a manual retry, for FAILED and STALLED)."""
    return state in TERMINAL_STATES


def current_attempt(state: str, attempts: int) -> int | None:
    """The attempt in progress, or None when none is: ``attempts + 1`` while QUEUED or RUNNING.

    ``state`` is a ``JobState`` or its name. ``attempts`` counts finished attempts, so during the first
    attempt it is still 0 (issue 26 item 1).

    Example:
        >>> current_attempt(JobState.RUNNING, 0), current_attempt(JobState.QUEUED, 2)
        (1, 3)
        >>> current_attempt(JobState.SCHEDULED, 1) is None, current_attempt(JobState.FAILED, 3) is None
        (True, True)
    """
    return attempts + 1 if state in (JobState.QUEUED, JobState.RUNNING) else None
