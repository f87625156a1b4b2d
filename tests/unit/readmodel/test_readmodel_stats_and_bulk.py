"""stats (gap 36: waiting counts from run_after), distinct bindings, and bulk selection."""

from __future__ import annotations

import pytest

from tests.unit.readmodel.readmodel_world import BINDINGS, STATES, T0, Job, snapshot
from tsumugi_core.states import JobState
from tsumugi_dev.d1 import D1Database
from tsumugi_scheduler.api.bodies import BULK_STATES
from tsumugi_scheduler.readmodel import (
    BulkFilter,
    JobStats,
    bulk,
    distinct_bindings,
    project,
    select_ids_for_bulk,
    stats,
)
from tsumugi_scheduler.shard.records import JobSnapshot


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


async def test_retry_by_binding_merges_its_states_oldest_first_ties_by_id(d1: D1Database) -> None:
    # Each state is its own ordered walk (ADR-0160); the merge must keep (created_at, id) across them.
    def job(name: str, state: JobState, created_at: int, binding: str = "SMS") -> JobSnapshot:
        return snapshot(id=f"{binding}#0:{name}", binding=binding, state=state, created_at=created_at)

    await project(
        d1,
        [
            job("b", JobState.STALLED, T0 + 5),
            job("a", JobState.FAILED, T0 + 5),
            job("c", JobState.FAILED, T0 + 1),
            job("d", JobState.STALLED, T0 + 9),
            job("e", JobState.SCHEDULED, T0),  # not a retry target
            job("f", JobState.COMPLETED, T0),
            job("g", JobState.FAILED, T0, binding="MAIL"),  # another binding
        ],
    )
    selection = await select_ids_for_bulk(
        d1, BulkFilter(binding="SMS", states=("FAILED", "STALLED")), limit=3
    )
    assert (selection.ids, selection.remaining) == (["SMS#0:c", "SMS#0:a", "SMS#0:b"], 1)
    cancel = await select_ids_for_bulk(d1, BulkFilter(binding="SMS", states=("SCHEDULED",)))
    assert (cancel.ids, cancel.remaining) == (["SMS#0:e"], 0)


async def test_a_repeated_state_is_selected_and_counted_once(d1: D1Database) -> None:
    await project(d1, [snapshot(id=f"SMS#0:f{i}", binding="SMS", state=JobState.FAILED) for i in range(3)])
    selection = await select_ids_for_bulk(d1, BulkFilter(binding="SMS", states=("FAILED", "FAILED")), limit=2)
    assert (selection.ids, selection.remaining) == (["SMS#0:f0", "SMS#0:f1"], 1)


async def test_the_count_of_several_states_stops_at_the_cap(
    d1: D1Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bulk, "BULK_COUNT_CAP", 5)
    await project(
        d1,
        [
            snapshot(id=f"SMS#0:{state.value}{i}", binding="SMS", state=state, created_at=T0 + i)
            for state in (JobState.FAILED, JobState.STALLED)
            for i in range(4)
        ],
    )
    selection = await select_ids_for_bulk(
        d1, BulkFilter(binding="SMS", states=("FAILED", "STALLED")), limit=2
    )
    # 8 match; the count reads 6 (the cap and one more), so remaining is the cap less the ids.
    assert (len(selection.ids), selection.remaining) == (2, 3)


def test_every_state_the_rest_layer_targets_by_filter_is_in_the_bulk_index() -> None:
    # A state outside job_bulk_targets would fall back to the walk of the binding's jobs (ADR-0160).
    targeted = {state for states in BULK_STATES.values() for state in states}
    assert targeted <= set(bulk.BULK_TARGET_STATES)
