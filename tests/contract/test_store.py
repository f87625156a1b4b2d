"""Conformance of the storage port, parametrised over every adapter (today: SqlShardStore on sqlite3, in
memory and on a file)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from tsumugi_core.states import JobState
from tsumugi_core.throttle import TokenBucket
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.shard.port import JobChange, ShardStore
from tsumugi_scheduler.shard.schema import AttemptRow, JobRow
from tsumugi_scheduler.shard.sql_store import SqlShardStore


@pytest.fixture(params=["memory", "file"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqlShardStore]:
    sql = SqlStorage(":memory:" if request.param == "memory" else tmp_path / "shard.sqlite")
    yield SqlShardStore(sql)
    sql.close()


def row(store: SqlShardStore, local: str, **fields: object) -> JobRow:
    base = JobRow(
        id=f"M#0:{local}",
        binding="M",
        state=JobState.SCHEDULED,
        priority=0,
        attempts=0,
        max_attempts=3,
        guarantee="at-least-once",
        timeout_ms=100,
        backoff='{"kind":"fixed","delayMs":0,"jitter":false}',
        concurrency_key=None,
        unique_key=None,
        run_after=0,
        eligible_at=0,
        expires_at=None,
        created_at=0,
        updated_at=0,
        dispatched_at=None,
        heartbeat_at=None,
        silence_at=None,
        progress=None,
        cancel_requested_at=None,
        payload="{}",
        result=None,
        error=None,
        reason=None,
        traceparent=None,
        run_id=None,
        node_id=None,
        seq=store.next_seq(),
    )
    return msgspec.structs.replace(base, **fields)


def test_existing_names_the_stored_ids_among_more_than_one_statement_could_bind(store: SqlShardStore) -> None:
    for i in range(0, 300, 3):
        store.admit(row(store, f"j{i}"), None, now=0)
    asked = [f"M#0:j{i}" for i in range(300)] + ["M#0:nope"]
    assert store.existing(asked) == {f"M#0:j{i}" for i in range(0, 300, 3)}
    assert store.existing([]) == set()


def test_it_satisfies_the_port(store: SqlShardStore) -> None:
    port: ShardStore = store
    assert port.settings() == {}


def test_admit_dedupes_by_id_and_live_unique_key(store: SqlShardStore) -> None:
    assert store.admit(row(store, "a", unique_key="k"), 100, now=0).created is True
    assert store.admit(row(store, "a"), None, now=0).created is False
    held = store.admit(row(store, "b", unique_key="k"), 100, now=50)
    assert (held.id, held.created) == ("M#0:a", False)
    assert store.admit(row(store, "c", unique_key="k"), 300, now=100).created is True  # expired: taken over


def test_write_is_compare_and_set_and_rolls_back_with_the_transaction(store: SqlShardStore) -> None:
    store.admit(row(store, "a"), None, now=0)
    change = JobChange(
        job_id="M#0:a",
        expect_state=JobState.SCHEDULED,
        values={"state": "QUEUED"},
        attempt=AttemptRow(
            job_id="M#0:a", attempt=1, state=JobState.FAILED, started_at=None, finished_at=1, error="e"
        ),
    )
    assert store.write(change) is True
    assert store.write(change) is False  # the state moved on
    assert store.job("M#0:a").state == JobState.QUEUED  # type: ignore[union-attr]

    def fail() -> None:
        store.write(JobChange(job_id="M#0:a", expect_state=JobState.QUEUED, values={"state": "COMPLETED"}))
        raise RuntimeError("abort")

    with pytest.raises(RuntimeError):
        store.atomically(fail)
    assert store.job("M#0:a").state == JobState.QUEUED  # type: ignore[union-attr]
    assert [a.attempt for a in store.attempts(["M#0:a"])] == [1]


def test_ready_window_reads_the_best_jobs_across_levels(store: SqlShardStore) -> None:
    for i in range(5):
        store.admit(row(store, f"low{i}", priority=0), None, now=0)
    store.admit(row(store, "high", priority=7), None, now=0)
    store.admit(row(store, "later", priority=9, eligible_at=500), None, now=0)
    window = store.ready_window(now=100, want=2, aging_interval_ms=None)
    assert [r["id"] for r in window.rows][:2] == ["M#0:high", "M#0:low0"]
    assert window.in_flight == 0


def test_settings_buckets_and_feeds_round_trip(store: SqlShardStore) -> None:
    store.save_setting("x", "1")
    store.save_setting("x", "2")
    assert store.settings() == {"x": "2"}
    store.save_setting("x", None)
    assert store.settings() == {}
    store.save_buckets({"k": TokenBucket(tokens=0.5, refilled_at=3)})
    assert store.buckets(["k", "other"]) == {"k": TokenBucket(tokens=0.5, refilled_at=3)}
    store.admit(row(store, "a"), None, now=0)
    assert [r["id"] for r in store.outbox("job", 0, 10)] == ["M#0:a"]
    store.ack("job", store.next_seq())
    assert store.counts()["feed:job"] == 0


def test_housekeep_deletes_only_projected_finished_jobs(store: SqlShardStore) -> None:
    store.admit(row(store, "done", state=JobState.COMPLETED, updated_at=0), None, now=0)
    store.admit(row(store, "active", updated_at=0), None, now=0)
    assert (
        store.housekeep(now=10_000, sweep_after_ms=1, failed_retention_ms=1, projected_seq=0, limit=10) == 0
    )
    assert (
        store.housekeep(now=10_000, sweep_after_ms=1, failed_retention_ms=1, projected_seq=10**6, limit=10)
        == 1
    )
    assert store.job("M#0:done") is None
    assert store.job("M#0:active") is not None
