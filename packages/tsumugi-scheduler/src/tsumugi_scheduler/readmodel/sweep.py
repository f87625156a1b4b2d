"""Retention of the read model: old terminal jobs and runs are deleted, bounded per call.

Source: docs/reference/original.md §3.10.

Called from the scheduler's cron trigger. Active jobs and running runs are never touched, whatever their
age. Runs are swept too, with their nodes (the original never swept them: gap 26), so the read model stays
bounded under any workload.
"""

from __future__ import annotations

from typing import Final

import msgspec

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.states import TERMINAL_STATES
from tsumugi_scheduler.readmodel.d1_port import D1Like, StatementT, result_changes

__all__ = [
    "DEFAULT_SWEEP_LIMIT",
    "DEFAULT_SWEEP_OLDER_THAN_MS",
    "TERMINAL_RUN_STATES",
    "SweepResult",
    "sweep",
]

DEFAULT_SWEEP_OLDER_THAN_MS: Final = 7 * 24 * 60 * 60 * 1000
"""Retention of finished rows: the shard's default failed-job retention, so a listed FAILED job is retryable."""

DEFAULT_SWEEP_LIMIT: Final = 1000
"""Most jobs (and, separately, runs) deleted per call, so one cron run stays within D1's limits."""

TERMINAL_RUN_STATES: Final[frozenset[str]] = frozenset({"COMPLETED", "FAILED", "CANCELLED"})
"""Run states after which a run's read-model rows may age out."""


class SweepResult(msgspec.Struct, frozen=True, kw_only=True):
    """Rows one sweep deleted."""

    jobs: int
    runs: int
    nodes: int
    actions: int = 0
    """Rows of the action log (who changed what, ADR-0151) past the same retention."""


def _marks(count: int) -> str:
    return ", ".join("?" for _ in range(count))


_JOB_STATES: Final = tuple(sorted(s.value for s in TERMINAL_STATES))
_RUN_STATES: Final = tuple(sorted(TERMINAL_RUN_STATES))

# D1 builds SQLite without DELETE ... LIMIT, so the bounded set is chosen by a subquery. The state IN
# list, the updated_at bound and the order (oldest first within each state) are all served by
# job_state_recent / run_state, so a call reads about `limit` index entries however many rows are due.
_DELETE_JOBS: Final = (
    f"DELETE FROM job WHERE id IN (SELECT id FROM job WHERE state IN ({_marks(len(_JOB_STATES))}) "
    "AND updated_at < ? ORDER BY state, updated_at, id LIMIT ?)"
)
_OLD_RUNS: Final = (
    f"SELECT id FROM run WHERE state IN ({_marks(len(_RUN_STATES))}) AND updated_at < ? "
    "ORDER BY state, updated_at LIMIT ?"
)
# Nodes go first, choosing runs with the same ordered subquery the run delete uses next, inside one
# transaction, so both statements pick the same runs.
_DELETE_NODES: Final = f"DELETE FROM run_node WHERE run_id IN ({_OLD_RUNS})"
_DELETE_RUNS: Final = f"DELETE FROM run WHERE id IN ({_OLD_RUNS})"
_DELETE_ACTIONS: Final = (
    "DELETE FROM action_log WHERE seq IN (SELECT seq FROM action_log WHERE at < ? ORDER BY at LIMIT ?)"
)


async def sweep(
    d1: D1Like[StatementT],
    now: int,
    *,
    older_than_ms: int = DEFAULT_SWEEP_OLDER_THAN_MS,
    limit: int = DEFAULT_SWEEP_LIMIT,
) -> SweepResult:
    """Delete terminal jobs and runs last updated before ``now - older_than_ms``, oldest first per state.

    Args:
        d1: The read-model database.
        now: The current instant (epoch ms).
        older_than_ms: Retention; rows updated at or after ``now - older_than_ms`` stay.
        limit: Most jobs, and most runs, deleted by this call.

    Returns:
        Counts of deleted job, run and node rows.

    Raises:
        ValueError: ``older_than_ms`` is negative or ``limit`` is below 1.
    """
    if older_than_ms < 0:
        raise InvalidFieldError("older_than_ms", f"must not be negative, got {older_than_ms}")
    if limit < 1:
        raise InvalidFieldError("limit", f"must be at least 1, got {limit}")
    cutoff = now - older_than_ms
    jobs, nodes, runs, actions = await d1.batch(
        [
            d1.prepare(_DELETE_JOBS).bind(*_JOB_STATES, cutoff, limit),
            d1.prepare(_DELETE_NODES).bind(*_RUN_STATES, cutoff, limit),
            d1.prepare(_DELETE_RUNS).bind(*_RUN_STATES, cutoff, limit),
            d1.prepare(_DELETE_ACTIONS).bind(cutoff, limit),
        ]
    )
    return SweepResult(
        jobs=result_changes(jobs),
        runs=result_changes(runs),
        nodes=result_changes(nodes),
        actions=result_changes(actions),
    )
