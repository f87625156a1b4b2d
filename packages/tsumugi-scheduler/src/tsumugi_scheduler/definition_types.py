"""The typed shapes of ``define_tsumugi``'s options, so pyright checks a definition before it runs (ADR-0142).

They are TypedDicts: a definition stays plain dict literals, and a misspelt or unknown key, or a value of the
wrong type, is a type error at the call. At run time ``define_tsumugi`` still checks every value and names the
option that breaks a rule. Durations take integer milliseconds or a `datetime.timedelta`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Required, TypeAlias, TypedDict

from tsumugi_core.options import Backoff
from tsumugi_core.time_values import Duration

__all__ = [
    "BindingOptions",
    "FlowSchedule",
    "JobSchedule",
    "OnSettledOptions",
    "PolicyOptions",
    "RateOptions",
    "RetentionOptions",
    "RunOptions",
    "ScheduleOptions",
    "TerminalState",
]

TerminalState: TypeAlias = Literal["COMPLETED", "FAILED", "CANCELLED", "STALLED"]
"""The states a job can end in."""


class RateOptions(TypedDict):
    """A token bucket: at most ``tokens`` dispatches per ``interval_ms``."""

    tokens: int
    interval_ms: Duration


class PolicyOptions(TypedDict, total=False):
    """A binding's dispatch policy; keys left out keep their defaults."""

    concurrency: int
    rate: RateOptions | None
    per_key_concurrency: int
    per_key_rate: RateOptions | None
    aging_interval_ms: Duration | None
    aging_disabled: bool
    reaper_grace_ms: Duration
    paused: bool


class BindingOptions(TypedDict, total=False):
    """``bindings[name]``: shard count, policy and how long finished jobs stay in the shard."""

    shards: int
    policy: PolicyOptions
    sweep_after_ms: Duration
    failed_retention_ms: Duration


class OnSettledOptions(TypedDict):
    """``on_settled``: the binding that receives a SettledNotice, and for which end states."""

    binding: str | type
    states: Sequence[TerminalState]


class RetentionOptions(TypedDict, total=False):
    """``retention``: the cron sweep of the read model."""

    older_than_ms: Duration
    limit: int


class RunOptions(TypedDict, total=False):
    """``runs``: node and nesting limits, and how long a finished run's object is kept."""

    max_nodes: int
    max_depth: int
    sweep_after_ms: Duration
    failed_retention_ms: Duration


class _Timing(TypedDict, total=False):
    every_ms: Duration
    cron: str
    timezone: str
    overlap: Literal["skip", "overlap"]


class JobSchedule(_Timing, total=False):
    """A recurring job: ``binding`` and ``payload`` (a value or ``fn(scheduled_at)``), a timing, job options."""

    binding: Required[str | type]
    payload: Required[Any | Callable[[int], Any]]
    partition_key: str
    max_attempts: int
    backoff: Backoff
    timeout_ms: Duration
    priority: int
    guarantee: Literal["at-least-once", "at-most-once"]
    concurrency_key: str


class FlowSchedule(_Timing, total=False):
    """A recurring run: ``flow`` and ``input`` (a value or ``fn(scheduled_at)``), a timing, a deadline."""

    flow: Required[str]
    input: Required[Any | Callable[[int], Any]]
    deadline_ms: Duration


ScheduleOptions: TypeAlias = JobSchedule | FlowSchedule
"""One entry of ``schedules``."""
