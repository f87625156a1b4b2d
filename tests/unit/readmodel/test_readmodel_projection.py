"""Projection: upsert, the seq guard against stale and replayed snapshots, immutable columns, attempt logs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from tests.unit.readmodel.readmodel_world import T0, attempt, snapshot, stored_row
from tsumugi_core.states import JobState
from tsumugi_dev.d1 import D1Database, D1Error, D1PreparedStatement
from tsumugi_scheduler.readmodel import PROJECTED_COLUMNS, PROJECTION_BATCH_LIMIT, project
from tsumugi_scheduler.readmodel.projection import snapshot_values


async def test_a_new_job_is_inserted_with_every_column(d1: D1Database) -> None:
    snap = snapshot(
        id="MAIL#3:abc",
        state=JobState.RUNNING,
        priority=4,
        attempts=1,
        concurrency_key="user-1",
        unique_key="welcome-1",
        run_after=T0 + 5,
        dispatched_at=T0 + 6,
        progress=0.25,
        traceparent="00-t-s-01",
        expires_at=T0 + 99,
        cancel_requested_at=T0 + 7,
        error="last",
        reason="reaped",
        run_id="flow:r1",
        node_id="n1",
        result=None,
        seq=9,
    )
    assert await project(d1, [snap]) == 1
    row = stored_row(d1, "MAIL#3:abc")
    assert row is not None
    assert row["state"] == "RUNNING"
    assert row["seq"] == 9
    assert row["shard"] == 3
    assert row["last_error"] == "last"
    assert (row["traceparent"], row["expires_at"], row["cancel_requested_at"]) == (
        "00-t-s-01",
        T0 + 99,
        T0 + 7,
    )
    assert (row["progress"], row["run_id"], row["node_id"], row["reason"]) == (
        0.25,
        "flow:r1",
        "n1",
        "reaped",
    )
    assert row["attempts_log"] is None


async def test_a_newer_snapshot_overwrites_the_row(d1: D1Database) -> None:
    await project(d1, [snapshot(seq=1)])
    newer = snapshot(seq=2, state=JobState.COMPLETED, attempts=1, result='{"ok":true}', updated_at=T0 + 50)
    assert await project(d1, [newer]) == 1
    row = stored_row(d1, "MAIL#0:job1")
    assert row is not None
    assert (row["state"], row["seq"], row["result"], row["updated_at"]) == (
        "COMPLETED",
        2,
        '{"ok":true}',
        T0 + 50,
    )


async def test_a_stale_snapshot_never_overwrites_a_newer_one(d1: D1Database) -> None:
    await project(d1, [snapshot(seq=5, state=JobState.COMPLETED, attempts=1)])
    stale = snapshot(seq=4, state=JobState.QUEUED)
    same = snapshot(seq=5, state=JobState.FAILED)
    assert await project(d1, [stale, same]) == 0
    row = stored_row(d1, "MAIL#0:job1")
    assert row is not None
    assert (row["state"], row["seq"]) == ("COMPLETED", 5)


async def test_replaying_a_range_is_a_no_op(d1: D1Database) -> None:
    batch = [snapshot(id=f"MAIL#0:j{i}", seq=i + 1) for i in range(5)]
    assert await project(d1, batch) == 5
    before = d1.connection.execute("SELECT * FROM job ORDER BY id").fetchall()
    assert await project(d1, batch) == 0
    assert d1.connection.execute("SELECT * FROM job ORDER BY id").fetchall() == before


async def test_out_of_order_snapshots_of_one_job_in_one_batch_keep_the_newest(d1: D1Database) -> None:
    newest = snapshot(seq=3, state=JobState.COMPLETED)
    older = snapshot(seq=2, state=JobState.QUEUED)
    await project(d1, [newest, older])
    row = stored_row(d1, "MAIL#0:job1")
    assert row is not None
    assert row["state"] == "COMPLETED"


async def test_identity_columns_are_immutable_on_conflict(d1: D1Database) -> None:
    await project(d1, [snapshot(seq=1)])
    changed = snapshot(
        seq=2, state=JobState.QUEUED, binding="OTHER", created_at=T0 - 1, guarantee="at-most-once", priority=9
    )
    assert await project(d1, [changed]) == 1
    row = stored_row(d1, "MAIL#0:job1")
    assert row is not None
    assert (row["binding"], row["created_at"], row["guarantee"]) == ("MAIL", T0, "at-least-once")
    assert (row["state"], row["priority"]) == ("QUEUED", 9)


async def test_attempts_log_is_json_newest_first_and_at_most_twenty(d1: D1Database) -> None:
    attempts = [attempt("MAIL#0:job1", n) for n in range(1, 26)]  # oldest first on purpose
    await project(d1, [snapshot(log=attempts, attempts=25, max_attempts=30)])
    row = stored_row(d1, "MAIL#0:job1")
    assert row is not None
    log = json.loads(row["attempts_log"])
    assert [e["attempt"] for e in log] == list(range(25, 5, -1))
    assert log[0] == {
        "attempt": 25,
        "state": "FAILED",
        "started_at": T0 + 25_000,
        "finished_at": T0 + 25_100,
        "error": "boom",
    }


async def test_a_batch_applies_whole_or_not_at_all(d1: D1Database) -> None:
    good = snapshot(id="MAIL#0:good", seq=1)
    bad = snapshot(id="MAIL#0:bad", seq=1, payload=None)  # payload is NOT NULL
    with pytest.raises(D1Error):
        await project(d1, [good, bad])
    assert stored_row(d1, "MAIL#0:good") is None


async def test_nothing_to_project_writes_nothing(d1: D1Database) -> None:
    assert await project(d1, []) == 0
    assert d1.connection.execute("SELECT count(*) FROM job").fetchone() == (0,)


async def test_too_many_snapshots_are_refused_before_touching_d1(d1: D1Database) -> None:
    batch = [snapshot(id=f"MAIL#0:j{i}") for i in range(PROJECTION_BATCH_LIMIT + 1)]
    with pytest.raises(ValueError, match=r"snapshots: at most 200 per projection batch, got 201"):
        await project(d1, batch)
    assert d1.connection.execute("SELECT count(*) FROM job").fetchone() == (0,)


def test_snapshot_values_follow_projected_columns_one_by_one() -> None:
    # Every field distinct, so a value built in the wrong position cannot match its column by accident.
    snap = snapshot(
        [attempt("MAIL#7:ordered", 1)],
        id="MAIL#7:ordered",
        seq=11,
        state=JobState.RUNNING,
        priority=12,
        attempts=13,
        max_attempts=14,
        concurrency_key="ck",
        unique_key="uk",
        guarantee="at-most-once",
        created_at=T0 + 15,
        updated_at=T0 + 16,
        dispatched_at=T0 + 17,
        payload='{"p":18}',
        run_id="flow:r19",
        node_id="n20",
        result='{"r":21}',
        run_after=T0 + 22,
        progress=0.23,
        traceparent="00-24",
        expires_at=T0 + 25,
        cancel_requested_at=T0 + 26,
        error="e27",
        reason="r28",
    )
    job = snap.job
    expected = {
        "id": job.id,
        "seq": 11,
        "binding": "MAIL",
        "state": "RUNNING",
        "priority": 12,
        "attempts": 13,
        "max_attempts": 14,
        "concurrency_key": "ck",
        "unique_key": "uk",
        "guarantee": "at-most-once",
        "created_at": T0 + 15,
        "updated_at": T0 + 16,
        "dispatched_at": T0 + 17,
        "payload": '{"p":18}',
        "run_id": "flow:r19",
        "node_id": "n20",
        "result": '{"r":21}',
        "run_after": T0 + 22,
        "progress": 0.23,
        "traceparent": "00-24",
        "expires_at": T0 + 25,
        "cancel_requested_at": T0 + 26,
        "last_error": "e27",
        "reason": "r28",
        "shard": 7,
    }
    values = dict(zip(PROJECTED_COLUMNS, snapshot_values(snap), strict=True))
    log = json.loads(values.pop("attempts_log"))
    assert values == expected
    assert [entry["attempt"] for entry in log] == [1]


@pytest.mark.parametrize(
    ("job_id", "shard"),
    [
        ("MAIL#4:first", 4),
        ("MAIL#4:second", 4),  # the same prefix again: answered from the prefix cache
        ("MAIL#4:bad id", None),  # a known prefix still needs a valid local id
        ("MAIL#4:a:b", None),  # a second colon makes the local id invalid
        ("MAIL#5:first", 5),
        ("MAIL#x:first", None),
        ("MAIL4:first", None),
        ("MAIL#4", None),
    ],
)
def test_the_shard_column_is_the_ids_shard_or_null_for_an_odd_id(job_id: str, shard: int | None) -> None:
    snapshot_values(snapshot(id="MAIL#4:warm"))  # the prefix MAIL#4: is cached before every case
    values = dict(zip(PROJECTED_COLUMNS, snapshot_values(snapshot(id=job_id)), strict=True))
    assert values["shard"] == shard


class _CountingD1:
    """The local D1 that records how many statements each ``batch`` carried and how many values each bound."""

    def __init__(self, db: D1Database) -> None:
        self.db = db
        self.batches: list[list[int]] = []

    def prepare(self, query: str) -> D1PreparedStatement:
        return self.db.prepare(query)

    async def batch(self, statements: list[D1PreparedStatement]) -> Sequence[Any]:
        self.batches.append([len(s.params) for s in statements])
        return await self.db.batch(statements)


async def test_a_full_batch_is_one_statement_with_one_bound_text(d1: D1Database) -> None:
    # 200 snapshots of 26 values each were 200 statements and 5,200 bound values (ADR-0127).
    counting = _CountingD1(d1)
    batch = [snapshot(id=f"MAIL#0:j{i}", seq=i + 1) for i in range(PROJECTION_BATCH_LIMIT)]
    assert await project(counting, batch) == PROJECTION_BATCH_LIMIT
    assert counting.batches == [[1]]
    assert d1.connection.execute("SELECT count(*) FROM job").fetchone() == (PROJECTION_BATCH_LIMIT,)


async def test_values_cross_the_json_text_exactly(d1: D1Database) -> None:
    # What a bound value would store: text with quotes, backslashes, NUL-free control characters and non-BMP
    # characters; integers past 2**53; a float that is not a short decimal; NULLs.
    text = 'q"\\ \n\t \U0001f600 \u00e9 {"a": [1]}'
    snap = snapshot(
        id="MAIL#2:exact",
        seq=2**62,
        payload=text,
        error=text,
        progress=0.1 + 0.2,
        created_at=2**53 + 1,
        updated_at=2**63 - 1,
        concurrency_key=None,
        result='"\\u0000"',
    )
    assert await project(d1, [snap]) == 1
    row = stored_row(d1, "MAIL#2:exact")
    assert row is not None
    assert (row["payload"], row["last_error"], row["result"]) == (text, text, '"\\u0000"')
    assert (row["seq"], row["created_at"], row["updated_at"]) == (2**62, 2**53 + 1, 2**63 - 1)
    assert row["progress"] == 0.1 + 0.2
    assert row["concurrency_key"] is None
    assert row["dispatched_at"] is None


async def test_a_batch_larger_than_one_text_is_cut_and_still_applies_whole(d1: D1Database) -> None:
    big = "x" * 90_000  # 12 of these pass the 1 MB cut of one text
    batch = [snapshot(id=f"MAIL#0:big{i}", payload=big) for i in range(12)]
    counting = _CountingD1(d1)
    assert await project(counting, batch) == 12
    assert counting.batches == [[1, 1]]
    bad = [snapshot(id=f"MAIL#0:more{i}", payload=big) for i in range(11)] + [
        snapshot(id="MAIL#0:bad", payload=None)
    ]
    with pytest.raises(D1Error):
        await project(d1, bad)
    assert d1.connection.execute("SELECT count(*) FROM job WHERE id LIKE 'MAIL#0:more%'").fetchone() == (0,)
