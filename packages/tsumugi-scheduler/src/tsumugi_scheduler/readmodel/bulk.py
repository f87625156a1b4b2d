"""Choosing the targets of a bulk retry / cancel by filter (docs/reference/original.md §4.3, bulk endpoints).

The read model only chooses ids, oldest first (``created_at ASC, id ASC``); each shard re-checks state
before acting. ``remaining`` is an estimate since the model lags the shards.
"""

from __future__ import annotations

from typing import Final

import msgspec

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_scheduler.readmodel.d1_port import D1Like, StatementT, result_rows
from tsumugi_scheduler.readmodel.filters import where_clause
from tsumugi_scheduler.readmodel.views import BulkSelection

__all__ = ["BULK_COUNT_CAP", "BULK_LIMIT", "BulkFilter", "select_ids_for_bulk"]

BULK_COUNT_CAP: Final = 10_000
"""``remaining`` is exact up to this many matching jobs, then stays at this number."""
BULK_LIMIT: Final = 200
"""Most ids one bulk call acts on (the original's default and maximum)."""


class BulkFilter(msgspec.Struct, frozen=True, kw_only=True):
    """Which jobs a bulk action targets; unset filters match anything, set ones are ANDed.

    Attributes:
        states: Allowed states (the REST layer restricts them per action; empty matches any).
        created_from: Inclusive lower bound on ``created_at``.
        created_to: Inclusive upper bound on ``created_at``.
    """

    binding: str | None = None
    states: tuple[str, ...] = ()
    unique_key: str | None = None
    concurrency_key: str | None = None
    created_from: int | None = None
    created_to: int | None = None


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
    where, params = where_clause(
        {
            "binding": filters.binding,
            "unique_key": filters.unique_key,
            "concurrency_key": filters.concurrency_key,
        },
        states=filters.states,
        created_from=filters.created_from,
        created_to=filters.created_to,
    )
    selected, count = await d1.batch(
        [
            d1.prepare(f"SELECT id FROM job{where} ORDER BY created_at ASC, id ASC LIMIT ?").bind(
                *params, limit
            ),
            # Counted up to BULK_COUNT_CAP + 1 rows, as the job list's total: the cost stays bounded (ADR-0139).
            d1.prepare(f"SELECT count(*) AS total FROM (SELECT 1 FROM job{where} LIMIT ?)").bind(
                *params, BULK_COUNT_CAP + 1
            ),
        ]
    )
    ids = [str(r["id"]) for r in result_rows(selected)]
    total = int(result_rows(count)[0]["total"])
    return BulkSelection(ids=ids, remaining=max(0, min(total, BULK_COUNT_CAP) - len(ids)))
