"""Reconcile and fire decisions of the Scheduler object, and the doctests of the schedule modules."""

from __future__ import annotations

import doctest
import importlib

import msgspec
import pytest

from tsumugi_core.id_digest import id_digest
from tsumugi_core.schedule_plan import (
    Delete,
    Fire,
    Insert,
    Skip,
    StoredSchedule,
    Update,
    plan_fire,
    reconcile,
    resumed_next_run,
)
from tsumugi_core.schedule_spec import Overlap, ScheduleSource, ScheduleSpec
from tsumugi_core.schedule_timing import Timing

SPEC = ScheduleSpec(name="a", binding="B", payload=1, timing=Timing(every_ms=1000))


def stored(
    spec: ScheduleSpec = SPEC, source: ScheduleSource = ScheduleSource.CODE, at: int = 5_000
) -> StoredSchedule:
    return StoredSchedule(name=spec.name, source=source, spec=spec, next_run_at=at)


def test_reconcile_each_case() -> None:
    other_target = msgspec.structs.replace(SPEC, binding="C")
    other_timing = msgspec.structs.replace(SPEC, timing=Timing(every_ms=2000))
    assert reconcile({"a": SPEC}, [stored()], 100) == []
    assert reconcile({"a": other_target}, [stored()], 100) == [
        Update(name="a", spec=other_target, next_run_at=5_000)
    ]
    assert reconcile({"a": other_timing}, [stored()], 100) == [
        Update(name="a", spec=other_timing, next_run_at=2_100)
    ]
    assert reconcile({}, [stored()], 100) == [Delete(name="a")]
    assert reconcile({}, [stored(source=ScheduleSource.RUNTIME)], 100) == []
    # A code schedule takes over a run-time row of its name (phase kept when the timing is the same).
    assert reconcile({"a": SPEC}, [stored(source=ScheduleSource.RUNTIME)], 100) == [
        Update(name="a", spec=SPEC, next_run_at=5_000)
    ]
    b = msgspec.structs.replace(SPEC, name="b")
    assert reconcile({"b": b, "a": SPEC}, [], 100) == [
        Insert(name="a", spec=SPEC, next_run_at=1_100),
        Insert(name="b", spec=b, next_run_at=1_100),
    ]


A_5000 = f"B#0:a-5000-{id_digest(('k', 'a', '5000'), 6)}"
"""The id of occurrence 5000 of schedule ``a`` under id key ``k``."""


@pytest.mark.parametrize(
    ("overlap", "active", "expected"),
    [
        (Overlap.SKIP, True, Skip(name="a", occurrence=5_000, next_run_at=8_000)),
        (Overlap.SKIP, False, Fire(name="a", occurrence=5_000, next_run_at=8_000, job_id=A_5000)),
        (Overlap.OVERLAP, True, Fire(name="a", occurrence=5_000, next_run_at=8_000, job_id=A_5000)),
    ],
)
def test_plan_fire(overlap: Overlap, active: bool, expected: Fire | Skip) -> None:
    row = stored(msgspec.structs.replace(SPEC, overlap=overlap))
    assert plan_fire(row, now=7_500, previous_active=active, shards=1, id_key="k") == expected


def test_resume_keeps_a_future_next_run_and_skips_missed_ones() -> None:
    assert resumed_next_run(stored(at=5_000), 4_000) == 5_000
    assert resumed_next_run(stored(at=5_000), 7_200) == 8_000


@pytest.mark.parametrize("module", ["schedule_timing", "schedule_spec", "schedule_plan", "schedule_words"])
def test_doctests(module: str) -> None:
    result = doctest.testmod(importlib.import_module(f"tsumugi_core.{module}"), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


# Reconcile reads every stored row; a resume exactly at the stored next run treats it as missed.


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
