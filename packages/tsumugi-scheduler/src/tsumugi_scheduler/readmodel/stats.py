"""Read-model statistics (``GET /api/stats``) and the bindings seen in it (``GET /api/bindings``)."""

from __future__ import annotations

from typing import Final

from tsumugi_scheduler.readmodel.d1_port import D1Like, StatementT, result_rows
from tsumugi_scheduler.readmodel.views import JobStats

__all__ = ["distinct_bindings", "stats"]

_BY_STATE: Final = "SELECT state, count(*) AS n FROM job GROUP BY state"
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


async def stats(d1: D1Like[StatementT], now: int) -> JobStats:
    """Counts per state and how long the longest-waiting SCHEDULED job has been due.

    Args:
        d1: The read-model database.
        now: The current instant (epoch ms).

    Returns:
        ``by_state`` holds only states with rows; ``oldest_scheduled_ms`` is
        ``max(0, now - earliest run_after of SCHEDULED jobs)``, or None when none is SCHEDULED.
    """
    counts, oldest = await d1.batch([d1.prepare(_BY_STATE), d1.prepare(_OLDEST_SCHEDULED)])
    by_state = {str(r["state"]): int(r["n"]) for r in result_rows(counts)}
    row = result_rows(oldest)[0]
    instants = [int(v) for v in (row["due"], row["legacy"]) if v is not None]
    oldest_ms = max(0, now - min(instants)) if instants else None
    return JobStats(by_state=by_state, oldest_scheduled_ms=oldest_ms)


async def distinct_bindings(d1: D1Like[StatementT]) -> list[str]:
    """Every binding with at least one job in the read model, sorted."""
    return [str(r["binding"]) for r in result_rows(await d1.prepare(_BINDINGS).all())]
