"""``GET /api/jobs``: one page from the read model and a total whose cost is bounded.

The original's ``total`` counts every matching row, which costs time linear in the matches (115 ms p50 for
"newest first" over 1,000,000 rows). Here the count stops after `TOTAL_CAP` + 1 rows: below the cap the
total is the original's exact count; at the cap the answer says ``total: TOTAL_CAP`` and
``total_capped: true`` (the dashboard then shows "10,000+"). The page and the count run in one D1 batch, so
both see the same snapshot.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.states import current_attempt
from tsumugi_scheduler.readmodel import SORT_COLUMNS, D1Like, JobQuery, JobSummary, RetryWindow, StatementT
from tsumugi_scheduler.readmodel.d1_port import d1_values, result_rows
from tsumugi_scheduler.readmodel.filters import where_clause
from tsumugi_scheduler.readmodel.retry_window import is_retryable

__all__ = ["SEARCH_WINDOW", "TOTAL_CAP", "JobListBody", "list_page", "list_statements"]

TOTAL_CAP: Final = 10_000
"""Totals are exact up to this many matching jobs."""
SEARCH_WINDOW: Final = 2_000
"""A text search reads at most this many jobs: the first ones the list's filters and order give (ADR-0139)."""
_TEXT_MATCH: Final = (
    "(instr(lower(payload), lower(?)) > 0 OR instr(lower(coalesce(last_error, '')), lower(?)) > 0"
    " OR instr(lower(coalesce(attempts_log, '')), lower(?)) > 0)"
)
_COLUMNS: Final = (
    "id, binding, state, priority, attempts, max_attempts, created_at, updated_at, dispatched_at"
)


class JobListBody(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """200 of ``GET /api/jobs``: the page, the total and, only when the count stopped at the cap, ``total_capped``."""

    jobs: list[JobSummary]
    total: int
    total_capped: bool = False
    searched: int | None = None
    """With ``text``: how many jobs the search read (at most `SEARCH_WINDOW`, the first in the list's order);
    when it is the window, older matches may exist: narrow the filters or the dates to reach them."""


def list_statements(
    query: JobQuery, cap: int = TOTAL_CAP
) -> tuple[tuple[str, list[Any]], tuple[str, list[Any]]]:
    """The page's and the capped count's SQL with their parameters.

    Raises:
        ValueError: the query's sort column is not one of ``SORT_COLUMNS`` (it is interpolated).
    """
    if query.sort not in SORT_COLUMNS:
        raise InvalidFieldError(
            "sort", f"must be one of {', '.join(sorted(SORT_COLUMNS))}, got {query.sort!r}"
        )
    exact = {
        "state": query.state,
        "binding": query.binding,
        "id": query.id,
        "unique_key": query.unique_key,
        "concurrency_key": query.concurrency_key,
    }
    where, params = where_clause(
        exact,
        created_from=query.created_from,
        created_to=query.created_to,
        exclude_bindings=query.exclude_bindings,
    )
    direction = "ASC" if query.order == "asc" else "DESC"
    # id DESC breaks ties whatever the direction, as the original does, so pages are stable.
    order = f" ORDER BY {query.sort} {direction}, id DESC"
    if query.text is not None:
        # The window is the list's own indexed walk, stopped after SEARCH_WINDOW rows; the text is matched
        # inside it only, so a search costs at most the window whatever the table holds (ADR-0139).
        window = f"SELECT {_COLUMNS}, payload, last_error, attempts_log FROM job{where}{order} LIMIT ?"
        texts = [query.text] * 3
        page = f"SELECT {_COLUMNS} FROM ({window}) WHERE {_TEXT_MATCH}{order} LIMIT ? OFFSET ?"
        count = f"SELECT count(*) AS searched, coalesce(sum({_TEXT_MATCH}), 0) AS total FROM ({window})"
        return (page, [*params, SEARCH_WINDOW, *texts, query.limit, query.offset]), (
            count,
            [*texts, *params, SEARCH_WINDOW],
        )
    page = f"SELECT {_COLUMNS} FROM job{where}{order} LIMIT ? OFFSET ?"
    count = f"SELECT count(*) AS total FROM (SELECT 1 FROM job{where} LIMIT ?)"
    return (page, d1_values([*params, query.limit, query.offset])), (count, [*params, cap + 1])


def _summary(row: Any, window: RetryWindow | None) -> JobSummary:
    return JobSummary(
        id=str(row["id"]),
        binding=str(row["binding"]),
        state=str(row["state"]),
        priority=int(row["priority"]),
        attempts=int(row["attempts"]),
        max_attempts=int(row["max_attempts"]),
        created_at=int(row["created_at"]),
        updated_at=int(row["updated_at"]),
        dispatched_at=None if row["dispatched_at"] is None else int(row["dispatched_at"]),
        current_attempt=current_attempt(str(row["state"]), int(row["attempts"])),
        retryable=is_retryable(str(row["state"]), str(row["binding"]), int(row["updated_at"]), window),
    )


async def list_page(
    d1: D1Like[StatementT], query: JobQuery, *, retry_window: RetryWindow | None = None, cap: int = TOTAL_CAP
) -> JobListBody:
    """One page of jobs matching ``query`` and their number, counted up to ``cap``.

    Args:
        d1: The read-model database.
        query: Filters, sort and page (``parse_job_query``).
        retry_window: The request instant and failed retention per binding, for ``retryable``.
        cap: Count at most this many matches; more answer ``total = cap`` and ``total_capped``.
    """
    (page_sql, page_params), (count_sql, count_params) = list_statements(query, cap)
    page, count = await d1.batch(
        [d1.prepare(page_sql).bind(*page_params), d1.prepare(count_sql).bind(*count_params)]
    )
    counted = result_rows(count)[0]
    total = int(counted["total"])
    jobs = [_summary(row, retry_window) for row in result_rows(page)]
    if query.text is not None:
        return JobListBody(jobs=jobs, total=total, searched=int(counted["searched"]))
    return JobListBody(jobs=jobs, total=min(total, cap), total_capped=total > cap)
