"""Job lists from the read model (``GET /api/jobs``): one page and the total matching the filters.

The page and the count run in one D1 batch, so both see the same snapshot of the table. For the common
views (by state, binding, concurrency_key, unique_key, or none, newest first) an index of migration 0010
yields rows already in ``updated_at DESC, id DESC`` order and answers the count.
"""

from __future__ import annotations

from typing import Final

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.states import current_attempt
from tsumugi_scheduler.readmodel.d1_port import D1Like, StatementT, d1_values, result_rows
from tsumugi_scheduler.readmodel.filters import where_clause
from tsumugi_scheduler.readmodel.job_query import SORT_COLUMNS, JobQuery
from tsumugi_scheduler.readmodel.retry_window import RetryWindow, is_retryable
from tsumugi_scheduler.readmodel.views import JobList, JobSummary

__all__ = ["list_jobs"]

_SUMMARY_COLUMNS: Final = (
    "id, binding, state, priority, attempts, max_attempts, created_at, updated_at, dispatched_at"
)


def _order_by(query: JobQuery) -> str:
    # The sort column is interpolated, so it is checked against the whitelist here too, not only when the
    # query was built.
    if query.sort not in SORT_COLUMNS:
        raise InvalidFieldError(
            "sort", f"must be one of {', '.join(sorted(SORT_COLUMNS))}, got {query.sort!r}"
        )
    direction = "ASC" if query.order == "asc" else "DESC"
    # id DESC breaks ties whatever the direction, as the original does, so pages are stable.
    return f" ORDER BY {query.sort} {direction}, id DESC"


async def list_jobs(
    d1: D1Like[StatementT], query: JobQuery, *, retry_window: RetryWindow | None = None
) -> JobList:
    """One page of jobs matching ``query`` and the total count of matching jobs.

    Args:
        d1: The read-model database.
        query: Filters, sort and page (see ``parse_job_query`` for the REST parameters).
        retry_window: The request instant and failed retention per binding, for ``retryable``; without it
            every FAILED / STALLED row is retryable (rows outlive retention only until the next sweep).

    Returns:
        The page (``limit`` rows at most) and ``total``.
    """
    where, params = where_clause(
        {
            "state": query.state,
            "binding": query.binding,
            "id": query.id,
            "unique_key": query.unique_key,
            "concurrency_key": query.concurrency_key,
        },
        created_from=query.created_from,
        created_to=query.created_to,
    )
    page_sql = f"SELECT {_SUMMARY_COLUMNS} FROM job{where}{_order_by(query)} LIMIT ? OFFSET ?"
    count_sql = f"SELECT count(*) AS total FROM job{where}"
    page, count = await d1.batch(
        [
            d1.prepare(page_sql).bind(*d1_values([*params, query.limit, query.offset])),
            d1.prepare(count_sql).bind(*params),
        ]
    )
    jobs = [
        JobSummary(
            id=str(r["id"]),
            binding=str(r["binding"]),
            state=str(r["state"]),
            priority=int(r["priority"]),
            attempts=int(r["attempts"]),
            max_attempts=int(r["max_attempts"]),
            created_at=int(r["created_at"]),
            updated_at=int(r["updated_at"]),
            dispatched_at=None if r["dispatched_at"] is None else int(r["dispatched_at"]),
            current_attempt=current_attempt(str(r["state"]), int(r["attempts"])),
            retryable=is_retryable(str(r["state"]), str(r["binding"]), int(r["updated_at"]), retry_window),
        )
        for r in result_rows(page)
    ]
    return JobList(jobs=jobs, total=int(result_rows(count)[0]["total"]))
