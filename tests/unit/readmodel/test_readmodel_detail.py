"""get_job shapes: every field, the attempt log (stored, synthesised, malformed) and retryable."""

from __future__ import annotations

import msgspec
import pytest

from tests.unit.readmodel.readmodel_world import DAY_MS, T0, attempt, snapshot
from tsumugi_core.states import JobState
from tsumugi_dev.d1 import D1Database
from tsumugi_scheduler.readmodel import AttemptLogEntry, JobDetail, RetryWindow, get_job, project

DETAIL_KEYS = {
    # The original's JobDetail (docs/reference/original.md §4.3) ...
    "id",
    "binding",
    "state",
    "priority",
    "attempts",
    "max_attempts",
    "concurrency_key",
    "unique_key",
    "guarantee",
    "created_at",
    "updated_at",
    "dispatched_at",
    "run_after",
    "progress",
    "payload",
    "result",
    "retryable",
    "attempts_log",
    # ... plus the run link (gap 34) and this project's additions.
    "run_id",
    "node_id",
    "traceparent",
    "expires_at",
    "cancel_requested_at",
    "last_error",
    "reason",
    "shard",
}


async def test_an_unknown_job_is_none(d1: D1Database) -> None:
    assert await get_job(d1, "MAIL#0:nope") is None


async def test_every_field_round_trips(d1: D1Database) -> None:
    await project(
        d1,
        [
            snapshot(
                id="MAIL#2:full",
                state=JobState.RUNNING,
                priority=3,
                attempts=1,
                max_attempts=5,
                concurrency_key="k",
                unique_key="u",
                guarantee="at-most-once",
                created_at=T0,
                updated_at=T0 + 9,
                dispatched_at=T0 + 8,
                run_after=T0 + 1,
                progress=0.5,
                payload='{"a":1}',
                run_id="flow:r",
                node_id="n",
                traceparent="00-a-b-01",
                expires_at=T0 + 100,
                cancel_requested_at=T0 + 9,
                error="e",
                reason="cancel requested",
                log=[attempt("MAIL#2:full", 1)],
            )
        ],
    )
    detail = await get_job(d1, "MAIL#2:full")
    assert detail == JobDetail(
        id="MAIL#2:full",
        binding="MAIL",
        state="RUNNING",
        priority=3,
        attempts=1,
        max_attempts=5,
        concurrency_key="k",
        unique_key="u",
        guarantee="at-most-once",
        created_at=T0,
        updated_at=T0 + 9,
        dispatched_at=T0 + 8,
        run_after=T0 + 1,
        progress=0.5,
        payload='{"a":1}',
        result=None,
        retryable=False,
        attempts_log=[
            AttemptLogEntry(
                attempt=1, state="FAILED", started_at=T0 + 1000, finished_at=T0 + 1100, error="boom"
            )
        ],
        run_id="flow:r",
        node_id="n",
        traceparent="00-a-b-01",
        expires_at=T0 + 100,
        cancel_requested_at=T0 + 9,
        last_error="e",
        reason="cancel requested",
        shard=2,
    )
    assert set(msgspec.to_builtins(detail)) == DETAIL_KEYS


async def test_an_integral_progress_is_still_a_float(d1: D1Database) -> None:
    # D1 hands back whole REAL values as integers (JavaScript numbers); the view keeps its type.
    await project(d1, [snapshot(state=JobState.RUNNING, progress=1.0)])
    detail = await get_job(d1, "MAIL#0:job1")
    assert detail is not None
    assert detail.progress == 1.0


async def test_a_first_try_success_gets_a_synthesised_attempt(d1: D1Database) -> None:
    await project(
        d1,
        [
            snapshot(
                state=JobState.COMPLETED, attempts=1, dispatched_at=T0 + 10, updated_at=T0 + 50, result='"ok"'
            )
        ],
    )
    detail = await get_job(d1, "MAIL#0:job1")
    assert detail is not None
    assert detail.result == '"ok"'
    assert detail.attempts_log == [
        AttemptLogEntry(attempt=1, state="COMPLETED", started_at=T0 + 10, finished_at=T0 + 50, error=None)
    ]


async def test_the_synthesised_attempt_counts_at_least_one(d1: D1Database) -> None:
    await project(d1, [snapshot(state=JobState.COMPLETED, attempts=0, dispatched_at=T0)])
    detail = await get_job(d1, "MAIL#0:job1")
    assert detail is not None
    assert [e.attempt for e in detail.attempts_log] == [1]


@pytest.mark.parametrize(
    ("state", "dispatched_at"),
    [(JobState.COMPLETED, None), (JobState.FAILED, T0), (JobState.SCHEDULED, None), (JobState.QUEUED, T0)],
)
async def test_no_synthesised_attempt_otherwise(
    d1: D1Database, state: JobState, dispatched_at: int | None
) -> None:
    await project(d1, [snapshot(state=state, dispatched_at=dispatched_at)])
    detail = await get_job(d1, "MAIL#0:job1")
    assert detail is not None
    assert detail.attempts_log == []


async def test_a_stored_log_wins_over_synthesis(d1: D1Database) -> None:
    log = [attempt("MAIL#0:job1", 2, JobState.COMPLETED, None), attempt("MAIL#0:job1", 1)]
    await project(d1, [snapshot(state=JobState.COMPLETED, attempts=2, dispatched_at=T0, log=log)])
    detail = await get_job(d1, "MAIL#0:job1")
    assert detail is not None
    assert [(e.attempt, e.state, e.error) for e in detail.attempts_log] == [
        (2, "COMPLETED", None),
        (1, "FAILED", "boom"),
    ]


@pytest.mark.parametrize("stored", ["{not json", '{"attempt": 1}', '[{"attempt": "one"}]', "null"])
async def test_a_malformed_log_reads_as_empty(d1: D1Database, stored: str) -> None:
    await project(d1, [snapshot(state=JobState.FAILED, attempts=1)])
    d1.connection.execute("UPDATE job SET attempts_log = ?", (stored,))
    detail = await get_job(d1, "MAIL#0:job1")
    assert detail is not None
    assert detail.attempts_log == []


@pytest.mark.parametrize(
    ("state", "updated_at", "retryable"),
    [
        (JobState.FAILED, T0 - 2 * DAY_MS + 1, True),
        (JobState.STALLED, T0 - 2 * DAY_MS + 1, True),
        (JobState.FAILED, T0 - 2 * DAY_MS, False),
        (JobState.COMPLETED, T0, False),
        (JobState.SCHEDULED, T0, False),
    ],
)
async def test_retryable_follows_the_window(
    d1: D1Database, state: JobState, updated_at: int, retryable: bool
) -> None:
    await project(d1, [snapshot(state=state, updated_at=updated_at)])
    window = RetryWindow(now=T0, by_binding={"MAIL": 2 * DAY_MS})
    detail = await get_job(d1, "MAIL#0:job1", retry_window=window)
    assert detail is not None
    assert detail.retryable is retryable
