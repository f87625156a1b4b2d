"""What an alarm fired and skipped is recorded in one statement each, whatever the number of rows (ADR-0165),
with the same bookkeeping the statement per row wrote."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tsumugi_core.schedule_spec import ScheduleSource
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.schedules.fields import spec_from_camel
from tsumugi_scheduler.schedules.store import FireRecord, ScheduleStore

T0 = 1_767_225_600_000
MINUTE = 60_000


@pytest.fixture
def sql() -> Iterator[SqlStorage]:
    storage = SqlStorage()
    try:
        yield storage
    finally:
        storage.close()


def _store_with(sql: SqlStorage, count: int) -> ScheduleStore:
    store = ScheduleStore(sql)
    for i in range(count):
        spec = spec_from_camel(
            {"name": f"s{i}", "binding": "Report", "payload": i, "cron": "* * * * *"},
            registered=("Report",),
            shards={"Report": 1},
        )
        store.insert(name=spec.name, source=ScheduleSource.RUNTIME, spec=spec, next_run_at=T0, now=T0 - 1)
    return store


def test_a_tick_of_many_fires_and_skips_is_two_statements(sql: SqlStorage) -> None:
    store = _store_with(sql, 300)
    records = [
        FireRecord(name=f"s{i}", occurrence=T0, next_run_at=T0 + MINUTE, job_id=f"Report#0:job{i}")
        for i in range(250)
    ]
    records += [
        FireRecord(name=f"s{i}", occurrence=T0, next_run_at=T0 + MINUTE, skipped=True)
        for i in range(250, 300)
    ]
    before = sql.write_statements
    store.record(records, T0 + 5)
    assert sql.write_statements - before == 2  # was one per row: 300
    fired, skipped = store.get("s7"), store.get("s260")
    assert fired is not None
    assert skipped is not None
    assert (fired.last_run_at, fired.last_fired_at, fired.last_job_id, fired.last_error) == (
        T0,
        T0 + 5,
        "Report#0:job7",
        None,
    )
    assert (fired.next_run_at, fired.updated_at, fired.skipped_count) == (T0 + MINUTE, T0 + 5, 0)
    assert (skipped.skipped_count, skipped.last_skipped_at, skipped.next_run_at) == (1, T0 + 5, T0 + MINUTE)
    assert (skipped.last_run_at, skipped.last_job_id) == (None, None)


def test_an_error_keeps_the_last_job_and_a_row_moved_meanwhile_keeps_its_next_run(sql: SqlStorage) -> None:
    store = _store_with(sql, 3)
    store.record([FireRecord(name="s0", occurrence=T0, next_run_at=T0 + MINUTE, job_id="Report#0:a")], T0)
    store.set_paused("s1", False, T0 + 7 * MINUTE, T0)  # a resume while the enqueue was in flight
    store.record(
        [
            FireRecord(name="s0", occurrence=T0 + MINUTE, next_run_at=T0 + 2 * MINUTE, error="boom"),
            FireRecord(name="s1", occurrence=T0, next_run_at=T0 + MINUTE, job_id="Report#0:b"),
            FireRecord(name="s2", occurrence=T0, next_run_at=T0 + MINUTE, run_id="Flow:s2-1"),
        ],
        T0 + MINUTE,
    )
    s0, s1, s2 = (store.get(name) for name in ("s0", "s1", "s2"))
    assert s0 is not None
    assert s1 is not None
    assert s2 is not None
    assert (s0.last_job_id, s0.last_error, s0.next_run_at) == ("Report#0:a", "boom", T0 + 2 * MINUTE)
    assert (s1.last_job_id, s1.next_run_at) == ("Report#0:b", T0 + 7 * MINUTE)
    assert (s2.last_run_id, s2.last_job_id) == ("Flow:s2-1", None)


def test_nothing_to_record_writes_nothing(sql: SqlStorage) -> None:
    store = _store_with(sql, 1)
    before = sql.write_statements
    store.record([], T0)
    assert sql.write_statements == before
