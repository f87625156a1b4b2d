"""list_jobs over a 10,000-job read model: every filter, sort and paging rule, against a reference model."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.unit.readmodel.readmodel_world import BINDINGS, DAY_MS, T0, Job, reference_order
from tsumugi_dev.d1 import D1Database
from tsumugi_scheduler.readmodel import JobQuery, RetryWindow, list_jobs, parse_job_query

SORTS = ["updated_at", "created_at", "binding", "state", "priority", "attempts"]


def _matching(jobs: list[Job], keep: Callable[[Job], bool]) -> list[Job]:
    return [job for job in jobs if keep(job)]


async def test_the_model_holds_ten_thousand_jobs(big_d1: D1Database) -> None:
    page = await list_jobs(big_d1, JobQuery())
    assert page.total == 10_000
    assert len(page.jobs) == 20


async def test_default_order_is_newest_update_first_with_id_desc_ties(
    big_d1: D1Database, jobs: list[Job]
) -> None:
    page = await list_jobs(big_d1, JobQuery(limit=100))
    expected = reference_order(jobs, "updated_at", "desc")[:100]
    assert [j.id for j in page.jobs] == expected
    # The model gives every updated_at to two jobs, so the tie-break decided half of this page.
    assert page.jobs[0].updated_at == page.jobs[1].updated_at
    assert page.jobs[0].id > page.jobs[1].id


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("sort", SORTS)
async def test_every_sort_and_order(big_d1: D1Database, jobs: list[Job], sort: str, order: str) -> None:
    query = parse_job_query({"sort": sort, "order": order, "limit": "100", "offset": "250"})
    page = await list_jobs(big_d1, query)
    assert [j.id for j in page.jobs] == reference_order(jobs, sort, order)[250:350]
    assert page.total == 10_000


@pytest.mark.parametrize(
    ("params", "keep"),
    [
        ({"state": "FAILED"}, lambda j: j.state == "FAILED"),
        ({"binding": "SMS"}, lambda j: j.binding == "SMS"),
        ({"id": "PUSH#0:j00001"}, lambda j: j.id == "PUSH#0:j00001"),
        ({"unique_key": "u-120"}, lambda j: j.unique_key == "u-120"),
        ({"concurrency_key": "user-7"}, lambda j: j.concurrency_key == "user-7"),
        ({"created_from": str(T0 + 9_000_000)}, lambda j: j.created_at >= T0 + 9_000_000),
        ({"created_to": str(T0 + 999_000)}, lambda j: j.created_at <= T0 + 999_000),
        ({"created_from": "0"}, lambda j: True),
        ({"created_to": "0"}, lambda j: False),
        (
            {
                "state": "QUEUED",
                "binding": "MAIL",
                "created_from": str(T0 + 1_000_000),
                "created_to": str(T0 + 5_000_000),
            },
            lambda j: (
                j.state == "QUEUED"
                and j.binding == "MAIL"
                and T0 + 1_000_000 <= j.created_at <= T0 + 5_000_000
            ),
        ),
        ({"state": "NOPE"}, lambda j: False),
    ],
    ids=[
        "state",
        "binding",
        "id",
        "unique_key",
        "concurrency_key",
        "created_from",
        "created_to",
        "from_zero",
        "to_zero",
        "combined",
        "unknown_state",
    ],
)
async def test_every_filter_and_their_total(
    big_d1: D1Database, jobs: list[Job], params: dict[str, str], keep: Callable[[Job], bool]
) -> None:
    matching = _matching(jobs, keep)
    page = await list_jobs(big_d1, parse_job_query({**params, "limit": "100"}))
    assert page.total == len(matching)
    assert [j.id for j in page.jobs] == reference_order(matching, "updated_at", "desc")[:100]


async def test_created_bounds_are_inclusive(big_d1: D1Database) -> None:
    at = T0 + 4242 * 1000
    page = await list_jobs(big_d1, JobQuery(created_from=at, created_to=at))
    assert [j.created_at for j in page.jobs] == [at]


async def test_walking_every_page_yields_each_match_once_in_order(
    big_d1: D1Database, jobs: list[Job]
) -> None:
    expected = reference_order(_matching(jobs, lambda j: j.state == "STALLED"), "updated_at", "desc")
    seen: list[str] = []
    offset = 0
    while True:
        page = await list_jobs(big_d1, JobQuery(state="STALLED", limit=100, offset=offset))
        assert page.total == len(expected)
        if not page.jobs:
            break
        seen += [j.id for j in page.jobs]
        offset += 100
    assert seen == expected


async def test_an_offset_past_the_end_gives_an_empty_page_and_the_total(big_d1: D1Database) -> None:
    page = await list_jobs(big_d1, parse_job_query({"binding": "MAIL", "offset": "2500"}))
    assert page.jobs == []
    assert page.total == 2500


@pytest.mark.parametrize(("raw", "size"), [("0", 20), ("-5", 20), ("abc", 20), ("1000", 100), ("3", 3)])
async def test_page_size_rules_reach_the_database(big_d1: D1Database, raw: str, size: int) -> None:
    # Gap 28: a negative limit must not become SQLite's "LIMIT -5" (no limit at all).
    page = await list_jobs(big_d1, parse_job_query({"limit": raw}))
    assert len(page.jobs) == size


async def test_summaries_carry_the_list_fields(big_d1: D1Database, jobs: list[Job]) -> None:
    page = await list_jobs(big_d1, JobQuery(id="WEBHOOK#1:j00007"))
    (summary,) = page.jobs
    job = jobs[7]
    assert (summary.binding, summary.state, summary.priority, summary.attempts) == (
        job.binding,
        job.state,
        job.priority,
        job.attempts,
    )
    assert (summary.max_attempts, summary.created_at, summary.updated_at) == (
        3,
        job.created_at,
        job.updated_at,
    )
    assert summary.dispatched_at is None


async def test_retryable_without_a_window_is_failed_or_stalled(big_d1: D1Database) -> None:
    page = await list_jobs(big_d1, JobQuery(limit=100))
    assert {j.state for j in page.jobs if j.retryable} == {"FAILED", "STALLED"}
    assert all(j.retryable for j in page.jobs if j.state in ("FAILED", "STALLED"))


async def test_retryable_honours_each_bindings_retention(big_d1: D1Database) -> None:
    now = T0 + 10_000 * 1000
    window = RetryWindow(now=now, failed_retention_ms=DAY_MS, by_binding={"SMS": 1000 * 1000})
    page = await list_jobs(big_d1, JobQuery(state="FAILED", limit=100), retry_window=window)
    assert {j.binding for j in page.jobs} >= set(BINDINGS) - {"SMS"}
    for job in page.jobs:
        retention = 1000 * 1000 if job.binding == "SMS" else DAY_MS
        assert job.retryable == (job.updated_at > now - retention)
    assert {j.retryable for j in page.jobs} == {True, False}
