"""The common read-model queries are served by an index: no full ``SCAN job``, no sort of a whole table.

The statements are the ones the functions really send (recorded from the local D1), explained by SQLite
over the 10,000-job model without ANALYZE statistics, as a fresh D1 database would plan them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from readmodel_world import T0

from tsumugi_dev.d1 import D1Database, D1PreparedStatement
from tsumugi_scheduler.readmodel import (
    BulkFilter,
    JobQuery,
    distinct_bindings,
    get_job,
    list_jobs,
    select_ids_for_bulk,
    stats,
    sweep,
)

Call = Callable[[D1Database], Awaitable[Any]]

# A list and its count must come straight off an index in order: neither a table scan nor a sort.
LISTS: dict[str, Call] = {
    "by_state": lambda db: list_jobs(db, JobQuery(state="FAILED")),
    "by_binding": lambda db: list_jobs(db, JobQuery(binding="SMS")),
    "by_concurrency_key": lambda db: list_jobs(db, JobQuery(concurrency_key="user-7")),
    "by_unique_key": lambda db: list_jobs(db, JobQuery(unique_key="u-120")),
    "newest_first": lambda db: list_jobs(db, JobQuery()),
    "newest_created_first": lambda db: list_jobs(db, JobQuery(sort="created_at")),
}
# These may need a small sort (of one state's rows, of the groups) but never read the table itself.
OTHERS: dict[str, Call] = {
    "by_id": lambda db: list_jobs(db, JobQuery(id="MAIL#0:j00000")),
    "detail": lambda db: get_job(db, "MAIL#0:j00000"),
    "stats": lambda db: stats(db, T0),
    "bindings": distinct_bindings,
    "bulk": lambda db: select_ids_for_bulk(db, BulkFilter(binding="MAIL", states=("FAILED", "STALLED"))),
}


def _record(monkeypatch: pytest.MonkeyPatch, db: D1Database) -> list[D1PreparedStatement]:
    seen: list[D1PreparedStatement] = []
    execute = db.execute

    def recording(statement: D1PreparedStatement) -> Any:
        seen.append(statement)
        return execute(statement)

    monkeypatch.setattr(db, "execute", recording)
    return seen


def _plans(db: D1Database, statements: list[D1PreparedStatement]) -> list[list[str]]:
    return [
        [row[3] for row in db.connection.execute(f"EXPLAIN QUERY PLAN {s.sql}", s.params)] for s in statements
    ]


def _reads_table(plan: list[str]) -> bool:
    return any(step in ("SCAN job", "SCAN run", "SCAN run_node") for step in plan)


def _uses_index(plan: list[str]) -> bool:
    return any("USING INDEX" in step or "USING COVERING INDEX" in step for step in plan)


@pytest.mark.parametrize("name", LISTS)
async def test_common_lists_and_their_counts_come_off_an_index_in_order(
    big_d1: D1Database, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    statements = _record(monkeypatch, big_d1)
    await LISTS[name](big_d1)
    plans = _plans(big_d1, statements)
    assert len(plans) == 2  # the page and the count
    for plan in plans:
        assert _uses_index(plan), plan
        assert not _reads_table(plan), plan
        assert not any("TEMP B-TREE" in step for step in plan), plan


@pytest.mark.parametrize("name", OTHERS)
async def test_other_reads_use_an_index(
    big_d1: D1Database, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    statements = _record(monkeypatch, big_d1)
    await OTHERS[name](big_d1)
    for plan in _plans(big_d1, statements):
        assert _uses_index(plan), plan
        assert not _reads_table(plan), plan


async def test_sweep_reads_only_the_index_entries_it_deletes(
    d1: D1Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    statements = _record(monkeypatch, d1)
    await sweep(d1, T0)
    plans = _plans(d1, statements)
    assert len(plans) == 3
    for plan in plans:
        assert _uses_index(plan), plan
        assert not _reads_table(plan), plan
        # A sort would read every due row to pick `limit` of them.
        assert not any("TEMP B-TREE" in step for step in plan), plan


async def test_oldest_scheduled_is_one_seek_not_a_scan_of_waiting_jobs(
    big_d1: D1Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    statements = _record(monkeypatch, big_d1)
    await stats(big_d1, T0)
    oldest = next(s for s in statements if "min(run_after)" in s.sql)
    (plan,) = _plans(big_d1, [oldest])
    assert [step for step in plan if step.startswith("SEARCH")] == [
        "SEARCH job USING COVERING INDEX job_state_due (state=?)",
        "SEARCH job USING COVERING INDEX job_state_due (state=? AND run_after=?)",
    ]
