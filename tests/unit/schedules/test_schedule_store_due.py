"""A tick's due rows are pieced together in SQL from the stored texts and decoded at once: each holds what the
whole row holds, whatever its name and bookkeeping, oldest first, paused and later rows left out."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tsumugi_core.schedule_spec import ScheduleSource
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.schedules.fields import spec_from_camel
from tsumugi_scheduler.schedules.store import FireRecord, ScheduleStore

T0 = 1_767_225_600_000
MINUTE = 60_000
NAMES = ("a", "b-1", "c_2", "D", "e-e", "f")
# Payload text JSON must escape, or that SQLite's text handling could bend: it is spliced into each row's array.
TEXTS = ('with "quotes"', "back\\slash", "ünïcødé 名前", "emoji 🙂", "tab\tnewline\n", "")


@pytest.fixture
def store() -> Iterator[ScheduleStore]:
    sql = SqlStorage()
    try:
        yield ScheduleStore(sql)
    finally:
        sql.close()


def _insert(
    store: ScheduleStore, name: str, at: int, *, flow: bool = False, paused: bool = False, text: str = ""
) -> None:
    value = {"n": name, "text": text}
    body = {"name": name, "cron": "* * * * *"}
    body |= {"flow": "greetings", "input": value} if flow else {"binding": "Report", "payload": value}
    spec = spec_from_camel(body, registered=("Report",), shards={"Report": 1}, flows=("greetings",))
    source = ScheduleSource.CODE if flow else ScheduleSource.RUNTIME
    store.insert(name=name, source=source, spec=spec, next_run_at=at, now=T0 - 1, paused=paused)


def test_each_due_row_holds_what_its_whole_row_holds(store: ScheduleStore) -> None:
    for i, (name, text) in enumerate(zip(NAMES, TEXTS, strict=True)):
        _insert(store, name, T0 + i, flow=i % 2 == 1, text=text)
    # Bookkeeping of every kind: a last job, a last run, none.
    store.record(
        [
            FireRecord(name=NAMES[0], occurrence=T0, next_run_at=T0, job_id='Report#0:a-"1"'),
            FireRecord(name=NAMES[1], occurrence=T0 + 1, next_run_at=T0 + 1, run_id="greetings:x"),
        ],
        T0,
    )
    due = store.due(T0 + MINUTE, 500)
    assert [row.name for row in due] == list(NAMES)
    for row in due:
        whole = store.get(row.name)
        assert whole is not None
        assert (row.source, row.spec, row.next_run_at, row.last_job_id, row.last_run_id) == (
            whole.source,
            whole.spec,
            whole.next_run_at,
            whole.last_job_id,
            whole.last_run_id,
        )
        assert row.stored() == whole.stored()
    assert (due[0].last_job_id, due[1].last_run_id, due[2].last_job_id) == (
        'Report#0:a-"1"',
        "greetings:x",
        None,
    )
    assert [row.spec.payload["text"] for row in due] == list(TEXTS)  # a flow's input is its payload


def test_due_leaves_out_paused_and_later_rows_and_keeps_to_the_limit(store: ScheduleStore) -> None:
    _insert(store, "late", T0 + 2 * MINUTE)
    _insert(store, "paused", T0, paused=True)
    for i in range(5):
        _insert(store, f"due-{i}", T0 + 4 - i)
    assert [row.name for row in store.due(T0 + MINUTE, 3)] == ["due-4", "due-3", "due-2"]
    assert [row.name for row in store.due(T0 + MINUTE, 500)] == [f"due-{i}" for i in (4, 3, 2, 1, 0)]
    assert store.due(T0 - 1, 500) == []
