"""``GET /api/jobs`` over a read model of 10,000 jobs: every filter, every sort, paging and lenient parsing.

The population and the reference ordering are the read-model tests' (tests/unit/readmodel/readmodel_world.py),
so the REST layer is checked against the same independent model.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.api.api_world import T0, SteppedClock, World, migrated_d1
from tests.unit.readmodel import readmodel_world as rw
from tsumugi_dev.d1 import D1Database
from tsumugi_scheduler.readmodel import PROJECTED_COLUMNS

JOBS = rw.population()


@pytest.fixture(scope="module")
def big_d1(tmp_path_factory: pytest.TempPathFactory) -> Iterator[D1Database]:
    d1 = migrated_d1(tmp_path_factory.mktemp("big"))
    rw.load_snapshots(d1.connection, (rw.as_snapshot(job, seq=1) for job in JOBS))
    yield d1
    d1.close()


@pytest.fixture
async def big(tmp_path: Path, clock: SteppedClock, big_d1: D1Database) -> AsyncIterator[World]:
    """Read-only: a world over the shared 10,000-job read model."""
    world = World(tmp_path, clock, d1=big_d1)
    yield world
    await world.aclose()


async def _ids(world: World, query: str) -> tuple[list[str], int]:
    status, body = await world.request("GET", f"/api/jobs?{query}")
    assert status == 200, body
    return [j["id"] for j in body["jobs"]], body["total"]


@pytest.mark.parametrize(
    ("query", "keep"),
    [
        ("state=FAILED", lambda j: j.state == "FAILED"),
        ("binding=SMS", lambda j: j.binding == "SMS"),
        ("id=MAIL%230%3Aj00000", lambda j: j.id == "MAIL#0:j00000"),
        ("unique_key=u-120", lambda j: j.unique_key == "u-120"),
        ("concurrency_key=user-7", lambda j: j.concurrency_key == "user-7"),
        (
            f"created_from={T0 + 1000}&created_to={T0 + 5000}",
            lambda j: T0 + 1000 <= j.created_at <= T0 + 5000,
        ),
        (f"created_from=0&created_to={T0}", lambda j: j.created_at <= T0),
        (
            "state=QUEUED&binding=MAIL&concurrency_key=user-3",
            lambda j: (j.state, j.binding, j.concurrency_key) == ("QUEUED", "MAIL", "user-3"),
        ),
        ("created_from=&created_to=soon&state=", lambda j: True),
        ("exclude_bindings=SMS", lambda j: j.binding != "SMS"),
        (
            "exclude_bindings=SMS,%20MAIL,,SMS&state=FAILED",
            lambda j: j.binding not in ("SMS", "MAIL") and j.state == "FAILED",
        ),
    ],
)
async def test_filters_are_exact_and_anded_and_the_total_counts_every_match(
    big: World, query: str, keep: Any
) -> None:
    expected = rw.reference_order([j for j in JOBS if keep(j)], "updated_at", "desc")
    ids, total = await _ids(big, f"{query}&limit=100")
    assert total == len(expected)
    assert ids == expected[:100]


@pytest.mark.parametrize("sort", ["updated_at", "created_at", "binding", "state", "priority", "attempts"])
@pytest.mark.parametrize("order", ["asc", "desc"])
async def test_every_sort_column_orders_with_id_desc_as_tie_break(big: World, sort: str, order: str) -> None:
    expected = rw.reference_order(JOBS, sort, order)
    assert (await _ids(big, f"sort={sort}&order={order}&limit=100&offset=4950"))[0] == expected[4950:5050]


@pytest.mark.parametrize(
    ("query", "start", "count"),
    [
        ("", 0, 20),
        ("limit=0", 0, 20),
        ("limit=junk", 0, 20),
        ("limit=-5", 0, 20),
        ("limit=500", 0, 100),
        ("limit=7.9&offset=3.2", 3, 7),
        ("offset=-4", 0, 20),
        ("offset=9995", 9995, 5),
        ("sort=constructor&order=up", 0, 20),
    ],
)
async def test_paging_is_lenient_as_the_original(big: World, query: str, start: int, count: int) -> None:
    expected = rw.reference_order(JOBS, "updated_at", "desc")
    ids, total = await _ids(big, query)
    assert (ids, total) == (expected[start : start + count], 10_000)


async def test_list_rows_carry_the_summary_keys_and_retryable(big: World) -> None:
    status, body = await big.request("GET", "/api/jobs?state=FAILED&limit=1")
    assert status == 200
    assert set(body["jobs"][0]) == {
        "id",
        "binding",
        "state",
        "priority",
        "attempts",
        "max_attempts",
        "created_at",
        "updated_at",
        "dispatched_at",
        "retryable",
        "current_attempt",
    }
    assert body["jobs"][0]["retryable"] is False  # updated long before the 7-day window of this clock


async def test_a_total_of_exactly_the_cap_is_exact_and_carries_no_capped_flag(big: World) -> None:
    status, body = await big.request("GET", "/api/jobs?limit=1")
    assert (status, body["total"], "total_capped" in body) == (200, 10_000, False)


async def test_more_matches_than_the_cap_answer_the_cap_and_total_capped(
    tmp_path: Path, clock: SteppedClock, big_d1: D1Database
) -> None:
    big_d1.connection.commit()
    copy = tmp_path / "capped.sqlite"
    with closing(sqlite3.connect(copy)) as target:  # `with connection` alone commits, it does not close
        big_d1.connection.backup(target)
    d1 = D1Database(copy)
    columns = ", ".join(PROJECTED_COLUMNS)
    renamed = columns.replace("id,", "id || '-extra',", 1)
    d1.connection.execute(f"INSERT INTO job ({columns}) SELECT {renamed} FROM job WHERE id = 'MAIL#0:j00000'")
    d1.connection.commit()
    world = World(tmp_path, clock, d1=d1)
    try:
        status, body = await world.request("GET", "/api/jobs?limit=2")
        assert (status, body["total"], body["total_capped"], len(body["jobs"])) == (200, 10_000, True, 2)
        status, body = await world.request("GET", "/api/jobs?id=MAIL%230%3Aj00000-extra")
        assert (body["total"], "total_capped" in body) == (1, False)
    finally:
        await world.aclose()
        d1.close()
