"""stats (gap 36: waiting counts from run_after), distinct bindings, and bulk selection."""

from __future__ import annotations

import pytest

from tests.unit.readmodel.readmodel_world import BINDINGS, STATES, T0, Job, snapshot
from tsumugi_core.states import JobState
from tsumugi_dev.d1 import D1Database
from tsumugi_scheduler.readmodel import (
    BulkFilter,
    JobStats,
    distinct_bindings,
    project,
    select_ids_for_bulk,
    stats,
)


async def test_an_empty_model(d1: D1Database) -> None:
    assert await stats(d1, T0) == JobStats(by_state={}, oldest_scheduled_ms=None)
    assert await distinct_bindings(d1) == []


async def test_counts_only_states_present(d1: D1Database) -> None:
    await project(
        d1,
        [
            snapshot(id="MAIL#0:a", state=JobState.FAILED),
            snapshot(id="MAIL#0:b", state=JobState.FAILED),
            snapshot(id="MAIL#0:c", state=JobState.QUEUED),
        ],
    )
    assert (await stats(d1, T0)).by_state == {"FAILED": 2, "QUEUED": 1}


async def test_oldest_scheduled_counts_from_run_after_not_created_at(d1: D1Database) -> None:
    # Created long ago but delayed until T0: it has been waiting 5 s, not an hour.
    await project(
        d1,
        [
            snapshot(id="MAIL#0:delayed", created_at=T0 - 3_600_000, run_after=T0),
            snapshot(id="MAIL#0:later", created_at=T0 - 1000, run_after=T0 + 1000),
            snapshot(
                id="MAIL#0:done",
                state=JobState.COMPLETED,
                created_at=T0 - 9_999_999,
                run_after=T0 - 9_999_999,
            ),
        ],
    )
    assert (await stats(d1, T0 + 5000)).oldest_scheduled_ms == 5000


async def test_jobs_not_yet_due_wait_zero(d1: D1Database) -> None:
    await project(d1, [snapshot(run_after=T0 + 60_000)])
    assert (await stats(d1, T0)).oldest_scheduled_ms == 0


async def test_rows_projected_before_run_after_existed_fall_back_to_created_at(d1: D1Database) -> None:
    await project(d1, [snapshot(id="MAIL#0:new", run_after=T0)])
    await project(d1, [snapshot(id="MAIL#0:legacy", created_at=T0 - 7000)])
    d1.connection.execute("UPDATE job SET run_after = NULL WHERE id = 'MAIL#0:legacy'")
    assert (await stats(d1, T0)).oldest_scheduled_ms == 7000


async def test_stats_use_the_original_wire_names(d1: D1Database) -> None:
    import msgspec

    await project(d1, [snapshot(run_after=T0)])
    assert msgspec.json.decode(msgspec.json.encode(await stats(d1, T0 + 1))) == {
        "byState": {"SCHEDULED": 1},
        "oldestScheduledMs": 1,
    }


async def test_ten_thousand_jobs_stats_and_bindings(big_d1: D1Database, jobs: list[Job]) -> None:
    result = await stats(big_d1, T0)
    assert result.by_state == {state: sum(1 for j in jobs if j.state == state) for state in STATES}
    assert await distinct_bindings(big_d1) == sorted(BINDINGS)


async def test_bulk_picks_the_oldest_matches_and_estimates_the_rest(
    big_d1: D1Database, jobs: list[Job]
) -> None:
    matching = sorted(
        (j for j in jobs if j.binding == "MAIL" and j.state in ("FAILED", "STALLED")),
        key=lambda j: (j.created_at, j.id),
    )
    selection = await select_ids_for_bulk(big_d1, BulkFilter(binding="MAIL", states=("FAILED", "STALLED")))
    assert selection.ids == [j.id for j in matching[:200]]
    assert selection.remaining == len(matching) - 200


async def test_bulk_filters_are_anded(big_d1: D1Database, jobs: list[Job]) -> None:
    filters = BulkFilter(
        states=("SCHEDULED",),
        concurrency_key="user-3",
        created_from=T0 + 1_000_000,
        created_to=T0 + 8_000_000,
    )
    expected = [
        j.id
        for j in sorted(jobs, key=lambda j: (j.created_at, j.id))
        if j.state == "SCHEDULED"
        and j.concurrency_key == "user-3"
        and T0 + 1_000_000 <= j.created_at <= T0 + 8_000_000
    ]
    selection = await select_ids_for_bulk(big_d1, filters, limit=200)
    assert selection.ids == expected
    assert selection.remaining == 0


async def test_bulk_by_unique_key_and_limit(big_d1: D1Database) -> None:
    assert (await select_ids_for_bulk(big_d1, BulkFilter(unique_key="u-40"))).ids == ["MAIL#0:j00040"]
    few = await select_ids_for_bulk(big_d1, BulkFilter(), limit=3)
    assert few.ids == ["MAIL#0:j00000", "PUSH#0:j00001", "SMS#0:j00002"]
    assert few.remaining == 9_997


@pytest.mark.parametrize("limit", [0, 201])
async def test_bulk_limit_is_checked(d1: D1Database, limit: int) -> None:
    with pytest.raises(ValueError, match="limit must be between 1 and 200"):
        await select_ids_for_bulk(d1, BulkFilter(), limit=limit)
