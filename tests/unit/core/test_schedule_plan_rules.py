"""Reconcile reads every stored row; a resume exactly at the stored next run treats it as missed."""

from __future__ import annotations

import msgspec

from tsumugi_core.schedule_plan import Delete, Insert, StoredSchedule, reconcile, resumed_next_run
from tsumugi_core.schedule_spec import ScheduleSource, ScheduleSpec
from tsumugi_core.schedule_timing import Timing

SPEC = ScheduleSpec(name="a", binding="B", payload=1, timing=Timing(every_ms=1000))


def row(name: str, source: ScheduleSource = ScheduleSource.CODE, at: int = 5_000) -> StoredSchedule:
    return StoredSchedule(
        name=name, source=source, spec=msgspec.structs.replace(SPEC, name=name), next_run_at=at
    )


def test_rows_after_a_run_time_row_are_still_reconciled() -> None:
    stored = [row("r", ScheduleSource.RUNTIME), row("z")]
    assert reconcile({}, stored, 100) == [Delete(name="z")]


def test_rows_after_an_unchanged_row_are_still_reconciled() -> None:
    stored = [row("a"), row("z")]
    assert reconcile({"a": SPEC}, stored, 100) == [Delete(name="z")]
    # ...and a code schedule whose row comes after an unchanged one is not inserted a second time.
    b = msgspec.structs.replace(SPEC, name="b")
    assert reconcile({"a": SPEC, "b": b}, [row("a"), row("b")], 100) == []
    assert reconcile({"a": SPEC, "c": b}, [row("a")], 100) == [Insert(name="c", spec=b, next_run_at=1_100)]


def test_a_resume_exactly_at_the_stored_next_run_moves_to_the_following_boundary() -> None:
    # The missed-period rule: a boundary at or before now is skipped, the stored one included.
    assert resumed_next_run(row("a", at=5_000), 5_000) == 6_000
    assert resumed_next_run(row("a", at=5_000), 4_999) == 5_000
