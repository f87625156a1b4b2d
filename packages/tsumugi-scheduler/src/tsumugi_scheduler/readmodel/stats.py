"""Read-model statistics (``GET /api/stats``) and the bindings seen in it (``GET /api/bindings``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from tsumugi_scheduler.readmodel.d1_port import D1Like, StatementT, result_rows
from tsumugi_scheduler.readmodel.views import JobStats

__all__ = ["distinct_bindings", "stats"]

_BY_STATE: Final = "SELECT state, count(*) AS n FROM job GROUP BY state"
# Left-out bindings (the notice receivers, by default in the dashboard) are counted per state and taken off
# the totals: a range of job_binding_recent per binding, so the cost follows their rows, never a table scan
# (ADR-0137).
_EXCLUDED_BY_STATE: Final = (
    "SELECT state, count(*) AS n FROM job INDEXED BY job_binding_recent WHERE binding = ? GROUP BY state"
)
# Waiting time counts from when a job became due (run_after), not from creation: a job delayed by an hour
# has not been waiting for that hour (gap 36). Rows projected before run_after existed fall back to
# created_at. Both minimums are single seeks in job_scheduled_due, which holds SCHEDULED rows only
# (migration 0011). It is named because SQLite's planner, without statistics, prefers the equality seek
# into job_state_recent and would then read every waiting job (ADR-0033).
_OLDEST_SCHEDULED: Final = (
    "SELECT (SELECT min(run_after) FROM job INDEXED BY job_scheduled_due WHERE state = 'SCHEDULED') AS due, "
    "(SELECT min(created_at) FROM job INDEXED BY job_scheduled_due "
    "WHERE state = 'SCHEDULED' AND run_after IS NULL) AS legacy"
)
# A loose index scan: one seek per distinct binding in job_binding_recent instead of reading every row.
_BINDINGS: Final = (
    "WITH RECURSIVE seen(binding) AS ("
    "SELECT min(binding) FROM job "
    "UNION ALL SELECT (SELECT min(binding) FROM job WHERE binding > seen.binding) FROM seen "
    "WHERE seen.binding IS NOT NULL) "
    "SELECT binding FROM seen WHERE binding IS NOT NULL"
)


async def stats(d1: D1Like[StatementT], now: int, *, exclude_bindings: Sequence[str] = ()) -> JobStats:
    """Counts per state and how long the longest-waiting SCHEDULED job has been due.

    Args:
        d1: The read-model database.
        now: The current instant (epoch ms).
        exclude_bindings: Bindings whose jobs are not counted, as the job list leaves them out
            (``exclude_bindings`` of ``GET /api/jobs``), so the counts agree with the list's total.

    Returns:
        ``by_state`` holds only states with rows; ``oldest_scheduled_ms`` is
        ``max(0, now - earliest run_after of SCHEDULED jobs)``, or None when none is SCHEDULED.
    """
    excluded = list(dict.fromkeys(exclude_bindings))
    results = await d1.batch(
        [
            d1.prepare(_BY_STATE),
            d1.prepare(_OLDEST_SCHEDULED),
            *(d1.prepare(_EXCLUDED_BY_STATE).bind(binding) for binding in excluded),
        ]
    )
    counts, oldest = results[0], results[1]
    by_state = {str(r["state"]): int(r["n"]) for r in result_rows(counts)}
    for result in results[2:]:
        for r in result_rows(result):
            left = by_state.get(str(r["state"]), 0) - int(r["n"])
            if left > 0:
                by_state[str(r["state"])] = left
            else:
                by_state.pop(str(r["state"]), None)
    row = result_rows(oldest)[0]
    instants = [int(v) for v in (row["due"], row["legacy"]) if v is not None]
    oldest_ms = max(0, now - min(instants)) if instants else None
    return JobStats(by_state=by_state, oldest_scheduled_ms=oldest_ms)


async def distinct_bindings(d1: D1Like[StatementT]) -> list[str]:
    """Every binding with at least one job in the read model, sorted."""
    return [str(r["binding"]) for r in result_rows(await d1.prepare(_BINDINGS).all())]
