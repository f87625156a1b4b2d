"""Under the real clock, Analytics Engine points are stored on a thread of the store's own (ADR-0036).

A gate (a trace callback that holds the store's thread at one statement until the test lets it go) makes "a
store is under way" deterministic; nothing here waits on time.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.clock import START_MS
from tsumugi_dev.analytics import AnalyticsEngineDataset, AnalyticsStore
from tsumugi_dev.clock import RealClock, VirtualClock
from tsumugi_dev.runtime import LocalRuntime

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CONFIGS = [FIXTURES / "conformance" / "wrangler.jsonc", FIXTURES / "peer" / "wrangler.toml"]
GATE_LIMIT_S = 10.0  # only a broken implementation ever waits this long


class Gate:
    """Records ``(statement, thread)`` of a connection and can hold one statement until ``release``."""

    def __init__(self, conn: sqlite3.Connection, hold: str | None = None) -> None:
        self.statements: list[tuple[str, int]] = []
        self.reached = threading.Event()
        self.released = threading.Event()
        self._hold = hold
        conn.set_trace_callback(self._trace)

    def _trace(self, statement: str) -> None:
        self.statements.append((statement, threading.get_ident()))
        if self._hold is not None and statement.startswith(self._hold):
            self._hold = None
            self.reached.set()
            self.released.wait(GATE_LIMIT_S)

    def threads_of(self, prefix: str) -> set[int]:
        return {thread for statement, thread in self.statements if statement.startswith(prefix)}

    def release_when(self, began: threading.Event) -> threading.Thread:
        """Let the held statement go once ``began`` is set (from another thread: the loop may be blocked)."""

        def watch() -> None:
            began.wait(GATE_LIMIT_S)
            self.released.set()

        watcher = threading.Thread(target=watch)
        watcher.start()
        return watcher


def _store_conn(store: AnalyticsStore) -> sqlite3.Connection:
    """The connection the store writes through."""
    return store._conn  # pyright: ignore[reportPrivateUsage]


def _signal_before(began: threading.Event, call: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        began.set()
        return call(*args, **kwargs)

    return wrapped


# -- Analytics Engine --------------------------------------------------------------------------------------


async def test_offloaded_points_are_stored_off_the_loop_in_order_one_transaction_per_step(
    tmp_path: Path,
) -> None:
    store = AnalyticsStore(tmp_path / "analytics.sqlite", VirtualClock(START_MS), offload=True)
    dataset = AnalyticsEngineDataset(store, "ds")
    gate = Gate(_store_conn(store))
    for step in range(5):
        for n in range(10):
            dataset.writeDataPoint({"blobs": [f"{step}-{n}"], "doubles": [float(step * 10 + n)]})
        await asyncio.sleep(0)  # the step ends: its points go to the store's thread
    rows = store.query("SELECT double1 FROM ds ORDER BY rowid")
    assert [r["double1"] for r in rows] == [float(n) for n in range(50)]
    assert [s for s, _ in gate.statements].count("BEGIN IMMEDIATE") == 5
    assert gate.threads_of("INSERT")
    assert threading.get_ident() not in gate.threads_of("INSERT")
    store.close()


async def test_a_query_waits_for_the_store_under_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = AnalyticsStore(tmp_path / "analytics.sqlite", VirtualClock(START_MS), offload=True)
    dataset = AnalyticsEngineDataset(store, "ds")
    gate = Gate(_store_conn(store), hold="BEGIN IMMEDIATE")
    waiting = threading.Event()
    monkeypatch.setattr(concurrent.futures, "wait", _signal_before(waiting, concurrent.futures.wait))
    for n in range(20):
        dataset.writeDataPoint({"doubles": [float(n)]})
    await asyncio.sleep(0)
    assert gate.reached.wait(GATE_LIMIT_S)  # the store's thread holds the transaction's first statement
    watcher = gate.release_when(waiting)
    assert store.query("SELECT count(*) AS n FROM ds") == [{"n": 20}]
    watcher.join()
    store.close()


async def test_close_stores_what_is_buffered_and_waits_for_the_store_under_way(tmp_path: Path) -> None:
    path = tmp_path / "analytics.sqlite"
    store = AnalyticsStore(path, VirtualClock(START_MS), offload=True)
    dataset = AnalyticsEngineDataset(store, "ds")
    gate = Gate(_store_conn(store), hold="BEGIN IMMEDIATE")
    executor: concurrent.futures.ThreadPoolExecutor = store._thread  # pyright: ignore[reportPrivateUsage, reportAssignmentType]
    shutting_down = threading.Event()
    executor.shutdown = _signal_before(shutting_down, executor.shutdown)
    dataset.writeDataPoint({"blobs": ["first"]})
    await asyncio.sleep(0)
    assert gate.reached.wait(GATE_LIMIT_S)
    dataset.writeDataPoint({"blobs": ["buffered"]})  # still in this step's buffer when close runs
    watcher = gate.release_when(shutting_down)
    store.close()
    watcher.join()
    reopened = AnalyticsStore(path, VirtualClock(START_MS))
    assert reopened.query("SELECT blob1 FROM ds ORDER BY rowid") == [
        {"blob1": "first"},
        {"blob1": "buffered"},
    ]
    reopened.close()


# -- The runtime's choice ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("clock", "offload"), [(VirtualClock, False), (RealClock, True)])
async def test_the_runtime_offloads_analytics_only_under_the_real_clock(
    tmp_path: Path, clock: type[VirtualClock] | type[RealClock], offload: bool
) -> None:
    runtime = LocalRuntime(CONFIGS, data_dir=tmp_path / "data", clock=clock())
    await runtime.start()
    try:
        metrics_gate = Gate(_store_conn(runtime.analytics))
        loop_thread = threading.get_ident()
        runtime.analytics.write("conformance_metrics", ["x"], [1.0], "")
        await asyncio.sleep(0)
        assert runtime.analytics.query("SELECT count(*) AS n FROM conformance_metrics") == [{"n": 1}]
        assert (loop_thread not in metrics_gate.threads_of("INSERT")) is offload
    finally:
        await runtime.stop()
