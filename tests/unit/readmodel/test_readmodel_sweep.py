"""Sweep: only terminal rows, only older than the retention, at most ``limit`` per call; runs with their nodes."""

from __future__ import annotations

import pytest

from tests.unit.readmodel.readmodel_world import DAY_MS, T0, snapshot
from tsumugi_core.states import JobState
from tsumugi_dev.d1 import D1Database
from tsumugi_scheduler.readmodel import SweepResult, project, sweep

NOW = T0 + 30 * DAY_MS
OLD = NOW - 8 * DAY_MS
RECENT = NOW - 6 * DAY_MS


def _ids(d1: D1Database, table: str = "job") -> set[str]:
    return {r[0] for r in d1.connection.execute(f"SELECT id FROM {table}")}


async def test_only_terminal_rows_older_than_retention_go(d1: D1Database) -> None:
    batch = [
        snapshot(id=f"MAIL#0:{state.value.lower()}-{age}", state=state, updated_at=at, seq=1)
        for state in JobState
        for age, at in (("old", OLD), ("recent", RECENT))
    ]
    await project(d1, batch)
    result = await sweep(d1, NOW)
    assert result.jobs == 4
    assert _ids(d1) == {
        "MAIL#0:scheduled-old",
        "MAIL#0:queued-old",
        "MAIL#0:running-old",
        "MAIL#0:scheduled-recent",
        "MAIL#0:queued-recent",
        "MAIL#0:running-recent",
        "MAIL#0:completed-recent",
        "MAIL#0:failed-recent",
        "MAIL#0:cancelled-recent",
        "MAIL#0:stalled-recent",
        "MAIL#0:sleeping-old",
        "MAIL#0:sleeping-recent",
    }


async def test_the_cutoff_is_exclusive(d1: D1Database) -> None:
    await project(
        d1,
        [
            snapshot(id="MAIL#0:at", state=JobState.COMPLETED, updated_at=NOW - 1000),
            snapshot(id="MAIL#0:before", state=JobState.COMPLETED, updated_at=NOW - 1001),
        ],
    )
    assert (await sweep(d1, NOW, older_than_ms=1000)).jobs == 1
    assert _ids(d1) == {"MAIL#0:at"}


async def test_limit_bounds_one_call_and_oldest_go_first(d1: D1Database) -> None:
    await project(
        d1, [snapshot(id=f"MAIL#0:j{i}", state=JobState.FAILED, updated_at=OLD - i) for i in range(10)]
    )
    assert (await sweep(d1, NOW, limit=4)).jobs == 4
    assert _ids(d1) == {f"MAIL#0:j{i}" for i in range(6)}
    assert (await sweep(d1, NOW, limit=4)).jobs == 4
    assert (await sweep(d1, NOW, limit=4)).jobs == 2
    assert (await sweep(d1, NOW, limit=4)).jobs == 0


def _add_run(d1: D1Database, run_id: str, state: str, updated_at: int, nodes: int) -> None:
    d1.connection.execute(
        "INSERT INTO run (id, seq, flow, state, input, node_total, node_done, node_failed, created_at, updated_at)"
        " VALUES (?, 1, 'flow', ?, 'null', ?, 0, 0, ?, ?)",
        (run_id, state, nodes, updated_at, updated_at),
    )
    for n in range(nodes):
        d1.connection.execute(
            "INSERT INTO run_node (run_id, node_id, seq, binding, state, container, origin, after, position,"
            " created_at, updated_at) VALUES (?, ?, 1, 'MAIL', 'COMPLETED', 0, 'static', '[]', ?, ?, ?)",
            (run_id, f"n{n}", n, updated_at, updated_at),
        )


async def test_old_finished_runs_go_with_their_nodes(d1: D1Database) -> None:
    _add_run(d1, "flow:done", "COMPLETED", OLD, nodes=3)
    _add_run(d1, "flow:failed", "FAILED", OLD, nodes=2)
    _add_run(d1, "flow:running", "RUNNING", OLD, nodes=2)
    _add_run(d1, "flow:fresh", "CANCELLED", RECENT, nodes=1)
    result = await sweep(d1, NOW)
    assert result == SweepResult(jobs=0, runs=2, nodes=5)
    assert _ids(d1, "run") == {"flow:running", "flow:fresh"}
    assert {r[0] for r in d1.connection.execute("SELECT DISTINCT run_id FROM run_node")} == _ids(d1, "run")


async def test_run_limit_deletes_exactly_the_nodes_of_the_runs_it_deletes(d1: D1Database) -> None:
    for i in range(3):
        _add_run(d1, f"flow:r{i}", "COMPLETED", OLD + i, nodes=2)
    assert await sweep(d1, NOW, limit=2) == SweepResult(jobs=0, runs=2, nodes=4)
    assert _ids(d1, "run") == {"flow:r2"}
    assert {r[0] for r in d1.connection.execute("SELECT DISTINCT run_id FROM run_node")} == {"flow:r2"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"older_than_ms": -1}, "older_than_ms must not be negative"),
        ({"limit": 0}, "limit must be at least 1"),
    ],
)
async def test_bad_arguments_name_the_field(d1: D1Database, kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        await sweep(d1, NOW, **kwargs)
