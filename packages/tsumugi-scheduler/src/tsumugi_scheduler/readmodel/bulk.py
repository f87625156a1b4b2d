"""Choosing the targets of a bulk retry / cancel by filter (docs/reference/original.md §4.3, bulk endpoints).

The read model only chooses ids, oldest first (``created_at ASC, id ASC``); each shard re-checks state
before acting. ``remaining`` is an estimate since the model lags the shards.

When every state asked for is one a bulk action by filter may target (`BULK_TARGET_STATES`, which the REST
layer always sends), the ids and the count come off ``job_bulk_targets`` (migration 0016, ADR-0160): one
ordered walk per state, merged, so a call reads about ``limit`` index entries for its ids and at most
``BULK_COUNT_CAP + 1`` for its count, however many jobs the binding holds.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_scheduler.readmodel.d1_port import D1Like, StatementT, result_rows
from tsumugi_scheduler.readmodel.filters import where_clause
from tsumugi_scheduler.readmodel.views import BulkSelection

__all__ = [
    "BULK_COUNT_CAP",
    "BULK_LIMIT",
    "BULK_TARGET_STATES",
    "BulkFilter",
    "bulk_statements",
    "select_ids_for_bulk",
]

BULK_COUNT_CAP: Final = 10_000
"""``remaining`` is exact up to this many matching jobs, then stays at this number."""
BULK_LIMIT: Final = 200
"""Most ids one bulk call acts on (the original's default and maximum)."""
BULK_TARGET_STATES: Final = ("SCHEDULED", "FAILED", "STALLED")
"""The states ``job_bulk_targets`` holds, in its ``WHERE`` term's order: every state a bulk action by filter
may target (cancel: SCHEDULED; retry: FAILED, STALLED)."""
_NOT_A_NODE_JOB: Final = "(run_id IS NULL OR node_id IS NULL)"
"""A job the shard lets a caller retry: not a run node's (its run's resume runs the node again, ADR-0116)."""
_TARGETS_INDEX_WHERE: Final = "state IN (" + ", ".join(f"'{state}'" for state in BULK_TARGET_STATES) + ")"
"""``job_bulk_targets``'s own ``WHERE`` term: SQLite uses a partial index only for a query that repeats it."""


class BulkFilter(msgspec.Struct, frozen=True, kw_only=True):
    """Which jobs a bulk action targets; unset filters match anything, set ones are ANDed.

    Attributes:
        states: Allowed states (the REST layer restricts them per action; empty matches any).
        created_from: Inclusive lower bound on ``created_at``.
        created_to: Inclusive upper bound on ``created_at``.
        without_node_jobs: Leave out the jobs of run nodes. A retry by filter sets it: the shard refuses such a
            job (its run's resume runs the node again), so it would stay selected and starve the jobs behind it.
    """

    binding: str | None = None
    states: tuple[str, ...] = ()
    unique_key: str | None = None
    concurrency_key: str | None = None
    created_from: int | None = None
    created_to: int | None = None
    without_node_jobs: bool = False


async def select_ids_for_bulk(
    d1: D1Like[StatementT], filters: BulkFilter, limit: int = BULK_LIMIT
) -> BulkSelection:
    """The oldest ``limit`` job ids matching ``filters`` and how many more match.

    Args:
        d1: The read-model database.
        filters: Which jobs.
        limit: How many ids, 1..``BULK_LIMIT``.

    Returns:
        Ids by ``created_at ASC, id ASC``, and ``remaining = max(0, total - len(ids))``.

    Raises:
        ValueError: ``limit`` is outside 1..``BULK_LIMIT``.
    """
    if not 1 <= limit <= BULK_LIMIT:
        raise InvalidFieldError("limit", f"must be between 1 and {BULK_LIMIT}, got {limit}")
    (ids_sql, ids_params), (count_sql, count_params) = bulk_statements(filters, limit)
    selected, count = await d1.batch(
        [d1.prepare(ids_sql).bind(*ids_params), d1.prepare(count_sql).bind(*count_params)]
    )
    ids = [str(r["id"]) for r in result_rows(selected)]
    total = int(result_rows(count)[0]["total"])
    return BulkSelection(ids=ids, remaining=max(0, min(total, BULK_COUNT_CAP) - len(ids)))


def bulk_statements(
    filters: BulkFilter, limit: int = BULK_LIMIT
) -> tuple[tuple[str, list[Any]], tuple[str, list[Any]]]:
    """The SQL and parameters of the ids (oldest ``limit``) and of the count capped at ``BULK_COUNT_CAP + 1``.

    With states all in `BULK_TARGET_STATES`, each state is one walk of ``job_bulk_targets`` in
    ``(created_at, id)`` order after its ``(binding, state)`` prefix; several states are merged by a compound
    ``ORDER BY`` (SQLite merges ordered arms, no sort) and counted arm after arm until the cap. A state
    outside the index, or none (any state), falls back to one statement over the whole table.
    """
    states = tuple(dict.fromkeys(filters.states))  # a repeated state would be selected and counted twice
    cap = BULK_COUNT_CAP + 1
    if states and all(state in BULK_TARGET_STATES for state in states):
        where, params = _where(filters, ())
        rest = [where.removeprefix(" WHERE ")] if where else []
        # Each state is a literal from BULK_TARGET_STATES (never the caller's text): `state = '...'` pins the
        # arm to one (binding, state) prefix of the index, whose entries are in (created_at, id) order.
        # It comes before the index's own term: given both on `state`, SQLite seeks with the first, and a seek
        # on the three-state IN would need a sort (the plan test pins this).
        terms = [[f"state = '{state}'", *rest, _TARGETS_INDEX_WHERE] for state in states]
        arm_params = params * len(states)
        return (
            f"{_union('id, created_at', terms)} ORDER BY created_at ASC, id ASC LIMIT ?",
            [*arm_params, limit],
        ), (f"SELECT count(*) AS total FROM ({_union('1', terms)} LIMIT ?)", [*arm_params, cap])
    where, params = _where(filters, states)
    return (f"SELECT id FROM job{where} ORDER BY created_at ASC, id ASC LIMIT ?", [*params, limit]), (
        # Counted up to BULK_COUNT_CAP + 1 rows, as the job list's total (ADR-0139).
        f"SELECT count(*) AS total FROM (SELECT 1 FROM job{where} LIMIT ?)",
        [*params, cap],
    )


def _union(columns: str, terms: list[list[str]]) -> str:
    """One ``SELECT columns FROM job WHERE ...`` per list of terms, joined by ``UNION ALL``."""
    return " UNION ALL ".join(f"SELECT {columns} FROM job WHERE {' AND '.join(arm)}" for arm in terms)


def _where(filters: BulkFilter, states: tuple[str, ...]) -> tuple[str, list[Any]]:
    where, params = where_clause(
        {
            "binding": filters.binding,
            "unique_key": filters.unique_key,
            "concurrency_key": filters.concurrency_key,
        },
        states=states,
        created_from=filters.created_from,
        created_to=filters.created_to,
    )
    if filters.without_node_jobs:
        where = f"{where} AND {_NOT_A_NODE_JOB}" if where else f" WHERE {_NOT_A_NODE_JOB}"
    return where, params
