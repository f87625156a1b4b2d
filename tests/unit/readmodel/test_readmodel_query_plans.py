"""The common read-model queries are served by an index: no full ``SCAN job``, no sort of a whole table.

The statements are the ones the functions really send (recorded from the local D1), explained by SQLite
over the 10,000-job model without ANALYZE statistics, as a fresh D1 database would plan them.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.unit.readmodel.readmodel_world import T0, load_snapshots, snapshot
from tsumugi_core.states import JobState
from tsumugi_dev.d1 import D1Database, D1PreparedStatement
from tsumugi_scheduler.api.job_list import list_page
from tsumugi_scheduler.readmodel import (
    BulkFilter,
    JobQuery,
    distinct_bindings,
    get_job,
    list_jobs,
    project,
    select_ids_for_bulk,
    stats,
    sweep,
)
from tsumugi_scheduler.shard.records import JobSnapshot

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
# The one index each filtered list and its count must come off (ADR-0022, ADR-0033). Unfiltered counts may
# use any index (SQLite picks the smallest), so only filtered lists are named here.
QUERIES: dict[str, JobQuery] = {
    "by_state": JobQuery(state="FAILED"),
    "by_binding": JobQuery(binding="SMS"),
    "by_concurrency_key": JobQuery(concurrency_key="user-7"),
    "by_unique_key": JobQuery(unique_key="u-120"),
}
INDEX_FOR: dict[str, str] = {
    "by_state": "job_state_recent",
    "by_binding": "job_binding_recent",
    "by_concurrency_key": "job_concurrency_key_recent",
    "by_unique_key": "job_unique_key_recent",
}
# These may need a small sort (of one state's rows, of the groups) but never read the table itself.
OTHERS: dict[str, Call] = {
    "by_id": lambda db: list_jobs(db, JobQuery(id="MAIL#0:j00000")),
    "detail": lambda db: get_job(db, "MAIL#0:j00000"),
    "stats": lambda db: stats(db, T0),
    "bindings": distinct_bindings,
    "bulk": lambda db: select_ids_for_bulk(db, BulkFilter(binding="MAIL", states=("FAILED", "STALLED"))),
}


# "Retry all failed" of a binding and "cancel all scheduled" (issue 26, ADR-0160): the ids and the capped
# count come off job_bulk_targets in (created_at, id) order after their (binding, state) prefix.
BULK_OF_A_BINDING: dict[str, BulkFilter] = {
    "failed": BulkFilter(binding="SMS", states=("FAILED",)),
    "failed_or_stalled": BulkFilter(binding="SMS", states=("FAILED", "STALLED")),
    "scheduled": BulkFilter(binding="SMS", states=("SCHEDULED",)),
    "failed_since": BulkFilter(binding="SMS", states=("FAILED",), created_from=T0 + 1_000_000),
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
    assert len(plans) == 4  # jobs, nodes, runs, the action log
    for plan in plans:
        assert _uses_index(plan), plan
        assert not _reads_table(plan), plan
        # A sort would read every due row to pick `limit` of them.
        assert not any("TEMP B-TREE" in step for step in plan), plan


def _index_of(step: str) -> str | None:
    match = re.search(r"USING (?:COVERING )?INDEX (\w+)", step)
    return match.group(1) if match else None


@pytest.mark.parametrize("lister", ["list_jobs", "list_page"])
@pytest.mark.parametrize("name", INDEX_FOR)
async def test_each_common_list_and_its_count_are_served_by_their_own_index(
    big_d1: D1Database, monkeypatch: pytest.MonkeyPatch, lister: str, name: str
) -> None:
    # The key indexes are partial (migration 0011): `concurrency_key = ?` must still be seen to imply
    # `concurrency_key IS NOT NULL`, for the page, the exact count and the capped count alike.
    statements = _record(monkeypatch, big_d1)
    query = QUERIES[name]
    await (list_jobs(big_d1, query) if lister == "list_jobs" else list_page(big_d1, query))
    plans = _plans(big_d1, statements)
    assert len(plans) == 2  # the page and the count
    for plan in plans:
        assert {_index_of(step) for step in plan} - {None} == {INDEX_FOR[name]}, plan
        assert not any("TEMP B-TREE" in step for step in plan), plan


async def test_a_list_of_scheduled_jobs_still_comes_off_the_state_index(
    big_d1: D1Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    # job_scheduled_due holds exactly the SCHEDULED rows but not in updated_at order: it must not win.
    statements = _record(monkeypatch, big_d1)
    await list_jobs(big_d1, JobQuery(state="SCHEDULED"))
    for plan in _plans(big_d1, statements):
        assert {_index_of(step) for step in plan} - {None} == {"job_state_recent"}, plan
        assert not any("TEMP B-TREE" in step for step in plan), plan


async def test_oldest_scheduled_is_one_seek_not_a_scan_of_waiting_jobs(
    big_d1: D1Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    statements = _record(monkeypatch, big_d1)
    await stats(big_d1, T0)
    oldest = next(s for s in statements if "min(run_after)" in s.sql)
    (plan,) = _plans(big_d1, [oldest])
    searches = [step for step in plan if step.startswith("SEARCH")]
    # Both minimums come from the partial SCHEDULED-only index; the legacy one seeks run_after IS NULL.
    assert [_index_of(step) for step in searches] == ["job_scheduled_due", "job_scheduled_due"], plan
    assert searches[1].endswith("(run_after=?)"), plan


def _steps(db: D1Database, statement: D1PreparedStatement) -> tuple[int, list[Any]]:
    """Virtual-machine steps SQLite takes to run ``statement``, and its rows."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    db.connection.set_progress_handler(count, 1)
    try:
        rows = db.connection.execute(statement.sql, statement.params).fetchall()
    finally:
        db.connection.set_progress_handler(None, 1)
    return steps, rows


async def test_oldest_scheduled_costs_the_same_however_many_jobs_wait(
    d1: D1Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    def waiting(first: int, count: int) -> list[JobSnapshot]:
        # Every fifth job predates run_after (NULL), so both minimums have rows to look past.
        return [
            snapshot(id=f"MAIL#0:w{i:05d}", run_after=None if i % 5 == 0 else T0 + 10 * i, created_at=T0 + i)
            for i in range(first, first + count)
        ]

    statements = _record(monkeypatch, d1)
    load_snapshots(d1.connection, waiting(1, 10))
    await stats(d1, T0)
    oldest = next(s for s in statements if "min(run_after)" in s.sql)
    few_steps, few_rows = _steps(d1, oldest)
    load_snapshots(d1.connection, waiting(11, 5_000))
    many_steps, many_rows = _steps(d1, oldest)
    assert few_rows == many_rows == [(T0 + 10, T0 + 5)]
    # A scan of the waiting jobs would take thousands of steps more with 500 times as many of them.
    assert many_steps == few_steps


async def test_projected_changes_move_rows_in_and_out_of_the_partial_indexes(d1: D1Database) -> None:
    # The reads above name or pick the partial indexes, so a row the upsert left behind in one (or never
    # put there) would show up in, or vanish from, stats and key lists.
    def at(seq: int, state: JobState, key: str | None) -> JobSnapshot:
        return snapshot(
            id="MAIL#0:moving", seq=seq, state=state, concurrency_key=key, unique_key=key, run_after=T0
        )

    await project(d1, [at(1, JobState.SCHEDULED, None)])
    assert (await stats(d1, T0 + 7)).oldest_scheduled_ms == 7
    assert (await list_jobs(d1, JobQuery(concurrency_key="k"))).total == 0
    await project(d1, [at(2, JobState.QUEUED, "k")])
    assert (await stats(d1, T0 + 7)).oldest_scheduled_ms is None
    assert [j.id for j in (await list_jobs(d1, JobQuery(concurrency_key="k"))).jobs] == ["MAIL#0:moving"]
    assert [j.id for j in (await list_page(d1, JobQuery(unique_key="k"))).jobs] == ["MAIL#0:moving"]
    await project(d1, [at(3, JobState.SCHEDULED, None)])
    assert (await stats(d1, T0 + 9)).oldest_scheduled_ms == 9
    assert (await list_jobs(d1, JobQuery(concurrency_key="k"))).total == 0
    assert (await list_page(d1, JobQuery(unique_key="k"))).total == 0


@pytest.mark.parametrize("name", BULK_OF_A_BINDING)
async def test_bulk_selection_of_a_binding_reads_only_its_targets_index_in_order(
    big_d1: D1Database, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    # Before migration 0016 both statements walked job_binding_recent: every job of the binding, each read
    # from the table for its state, and the ids sorted in a temporary tree.
    statements = _record(monkeypatch, big_d1)
    await select_ids_for_bulk(big_d1, BULK_OF_A_BINDING[name])
    plans = _plans(big_d1, statements)
    assert len(plans) == 2  # the ids and the count
    for plan in plans:
        assert {_index_of(step) for step in plan} - {None} == {"job_bulk_targets"}, plan
        searches = [step for step in plan if step.startswith(("SEARCH", "SCAN job"))]
        assert searches, plan
        assert all("USING COVERING INDEX job_bulk_targets" in step for step in searches), plan
        assert not any("TEMP B-TREE" in step for step in plan), plan


async def test_retry_all_failed_costs_the_same_however_many_other_jobs_there_are(
    d1: D1Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    failed = [
        snapshot(id=f"SMS#0:f{i:04d}", binding="SMS", state=JobState.FAILED, created_at=T0 + 10 * i)
        for i in range(300)
    ]
    # One neighbour on each side of the (SMS, FAILED) entries, so that both worlds end the walk alike.
    neighbours = [
        snapshot(id="MAIL#0:n1", binding="MAIL", state=JobState.FAILED),
        snapshot(id="SMS#0:n2", binding="SMS", state=JobState.STALLED),
    ]
    load_snapshots(d1.connection, [*failed, *neighbours])
    statements = _record(monkeypatch, d1)
    filters = BulkFilter(binding="SMS", states=("FAILED",))
    first = await select_ids_for_bulk(d1, filters)
    few = [_steps(d1, s) for s in statements]
    # 6,000 more jobs: the binding's in every other state, older and newer than its failed ones, and failed
    # jobs of other bindings. A walk of the binding's jobs or of the failed ones would take thousands of
    # steps more.
    others = [state for state in JobState if state is not JobState.FAILED]
    load_snapshots(
        d1.connection,
        [
            snapshot(
                id=f"SMS#0:o{i:04d}",
                binding="SMS",
                state=others[i % len(others)],
                created_at=T0 + 3 * i - 900,
            )
            for i in range(3_000)
        ]
        + [
            snapshot(id=f"MAIL#0:o{i:04d}", binding="MAIL", state=JobState.FAILED, created_at=T0 + i - 900)
            for i in range(3_000)
        ],
    )
    many = [_steps(d1, s) for s in statements]
    assert (first.ids, first.remaining) == ([job.job.id for job in failed[:200]], 100)
    assert [rows for _, rows in many] == [rows for _, rows in few]
    assert [steps for steps, _ in many] == [steps for steps, _ in few]
