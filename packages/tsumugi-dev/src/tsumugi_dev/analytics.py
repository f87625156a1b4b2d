"""Analytics Engine: ``writeDataPoint({blobs, doubles, indexes})`` stored with its timestamp, and a SQL read path.

Points land in one SQLite table with Analytics Engine's column names (``dataset``, ``timestamp``, ``index1``,
``blob1..blob20``, ``double1..double20``, ``_sample_interval``) plus ``timestamp_ms``. ``query`` runs SQLite
SQL over a view per dataset named after it, which is enough for the simple aggregations the metrics API
makes (``count()``, ``sum(_sample_interval)``, ``avg(doubleN)`` grouped by ``blobN``, time filters).

Points are stored once per event-loop step; with ``offload=True`` (the runtime's choice under the real clock, as
for D1) that store runs on a thread of the store's own, so the loop goes on meanwhile. ``query`` and ``close``
wait for the stores under way, so they see every point written before them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime
import functools
import logging
import re
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final, Self

from tsumugi_dev.clock import RuntimeClock
from tsumugi_dev.invocation import admit_data_point
from tsumugi_dev.jsdict import JsDict
from tsumugi_dev.metering import Usage
from tsumugi_dev.state_db import open_state_db

__all__ = ["AnalyticsEngineDataset", "AnalyticsStore"]

MAX_BLOBS = 20
MAX_DOUBLES = 20
MAX_INDEX_BYTES = 96
MAX_BLOB_BYTES = 16_000
_FIELDS: Final = frozenset({"blobs", "doubles", "indexes"})
"""The fields of a data point."""
"""Most bytes all blobs of one point hold together (workerd src/workerd/api/analytics-engine-impl.h:
``MAX_CUMULATIVE_BYTES_IN_BLOBS = 800 * 20``; the docs say "16 KB" per data point)."""
_DATASET_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BLOBS = ", ".join(f"blob{i} TEXT" for i in range(1, MAX_BLOBS + 1))
_DOUBLES = ", ".join(f"double{i} REAL NOT NULL DEFAULT 0" for i in range(1, MAX_DOUBLES + 1))
_INSERT_COLUMNS = (
    ["dataset", "timestamp", "timestamp_ms", "index1"]
    + [f"blob{i}" for i in range(1, MAX_BLOBS + 1)]
    + [f"double{i}" for i in range(1, MAX_DOUBLES + 1)]
)
_log = logging.getLogger("tsumugi_dev")


@functools.cache
def _insert(blobs: int, doubles: int) -> str:
    """The INSERT of a point with ``blobs`` blobs and ``doubles`` doubles: only the columns it uses.

    The others take their defaults (NULL blobs, 0 doubles): the row an INSERT of all 44 columns would store, for
    a quarter of SQLite's work (a job's point holds three blobs and two doubles).
    """
    columns = _INSERT_COLUMNS[: 4 + blobs] + _INSERT_COLUMNS[4 + MAX_BLOBS : 4 + MAX_BLOBS + doubles]
    return f"INSERT INTO data_point ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


class AnalyticsStore:
    """Every dataset's points in one SQLite file."""

    def __init__(self, path: Path | str, clock: RuntimeClock, *, offload: bool = False) -> None:
        self._conn: sqlite3.Connection = open_state_db(path)
        self._clock = clock
        self._conn.execute(
            f"CREATE TABLE IF NOT EXISTS data_point (dataset TEXT NOT NULL, timestamp TEXT NOT NULL, "
            f"timestamp_ms INTEGER NOT NULL, index1 TEXT NOT NULL DEFAULT '', _sample_interval INTEGER NOT NULL "
            f"DEFAULT 1, {_BLOBS}, {_DOUBLES})"
        )
        self._conn.execute("CREATE INDEX IF NOT EXISTS data_point_time ON data_point (dataset, timestamp_ms)")
        self._pending: dict[tuple[int, int], list[tuple[Any, ...]]] = {}
        """Points to store, by (blobs, doubles) count."""
        self._stamp_second: int | None = None
        self._stamp = ""
        self._flush_scheduled = False
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="analytics") if offload else None
        self._last_store: concurrent.futures.Future[None] | None = None
        """The latest store handed to the thread (it runs stores in order: once it is done, all are)."""

    def ensure_dataset(self, dataset: str) -> None:
        """Create the view that ``query`` reads ``dataset`` through."""
        if not _DATASET_NAME.match(dataset):
            raise ValueError(
                f"dataset: {dataset!r} must be letters, digits and underscores, not starting with a digit"
            )
        self._wait_for_stores()  # the file is the thread's while a store is under way
        self._conn.execute(
            f"CREATE VIEW IF NOT EXISTS \"{dataset}\" AS SELECT * FROM data_point WHERE dataset = '{dataset}'"
        )

    def write(self, dataset: str, blobs: list[str | None], doubles: list[float], index: str) -> None:
        """Store one point, stamped now.

        Points are buffered and stored together at the end of the current event-loop step (at once when no
        loop runs), before any ``query``, and on ``close``: ``writeDataPoint`` is fire-and-forget on
        Cloudflare too, and one transaction per step keeps metrics off the hot path of a busy scheduler.
        """
        now = self._clock.now_ms()
        second = now // 1000
        if second != self._stamp_second:  # points come in bursts: one text per second, not per point
            self._stamp_second = second
            self._stamp = datetime.datetime.fromtimestamp(second, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S")
        # Stored by shape (how many blobs and doubles), each through the INSERT of its own columns (`_insert`).
        self._pending.setdefault((len(blobs), len(doubles)), []).append(
            (dataset, self._stamp, now, index, *blobs, *doubles)
        )
        if self._flush_scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        self._flush_scheduled = True
        loop.call_soon(self.flush)

    def flush(self) -> None:
        """Store every buffered point in one transaction (handed to the store's thread when offloaded)."""
        self._flush_scheduled = False
        if not self._pending:
            return
        rows, self._pending = self._pending, {}
        if self._thread is None:
            self._store(rows)
            return
        self._last_store = self._thread.submit(self._store, rows)
        self._last_store.add_done_callback(_report_failure)

    def _wait_for_stores(self) -> None:
        last, self._last_store = self._last_store, None
        if last is not None:
            concurrent.futures.wait([last])

    def _store(self, rows: dict[tuple[int, int], list[tuple[Any, ...]]]) -> None:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            for (blobs, doubles), points in rows.items():
                self._conn.executemany(_insert(blobs, doubles), points)
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def query(self, sql: str) -> list[JsDict]:
        """Run a read-only query and return rows as dicts."""
        if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
            raise ValueError("query: only SELECT statements are allowed")
        self.flush()
        self._wait_for_stores()
        cursor = self._conn.execute(sql)
        names = [d[0] for d in cursor.description]
        return [JsDict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def close(self) -> None:
        """Store what is buffered, wait for the stores under way, then close the file."""
        self.flush()
        if self._thread is not None:
            self._thread.shutdown(wait=True)
            self._last_store = None
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _report_failure(future: concurrent.futures.Future[None]) -> None:
    exc = future.exception()
    if exc is not None:
        _log.error("analytics: points could not be stored", exc_info=exc)


def _blob(value: Any, i: int) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    if not isinstance(value, str):
        raise TypeError(
            f"writeDataPoint: blobs[{i}] must be a string, bytes or None, got {type(value).__name__}"
        )
    return value


def _blobs(values: list[Any]) -> list[str | None]:
    """``values`` checked in place (the caller's own list): a text blob, the common one, costs no call."""
    total = 0
    for i, blob in enumerate(values):
        if type(blob) is not str:
            blob = values[i] = _blob(blob, i)
            if blob is None:
                continue
        total += len(blob) if blob.isascii() else len(blob.encode())
    if total > MAX_BLOB_BYTES:
        # workerd's text (analytics-engine-impl.h), its stray ")" included.
        raise ValueError(f"writeDataPoint(): Cumulative size of blobs exceeds {MAX_BLOB_BYTES} bytes).")
    return values


def _double(value: Any, i: int) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"writeDataPoint: doubles[{i}] must be a number, got {type(value).__name__}")
    return float(value)


def _doubles(values: list[Any]) -> list[float]:
    """``values`` checked in place (the caller's own list): a float, the common double, costs no call."""
    for i, value in enumerate(values):
        if type(value) is not float:
            values[i] = _double(value, i)
    return values


def _index(indexes: list[Any]) -> str:
    if len(indexes) > 1:
        raise ValueError("writeDataPoint(): Maximum of 1 indexes supported.")
    if not indexes or indexes[0] is None:
        return ""
    value = indexes[0].decode() if isinstance(indexes[0], bytes) else indexes[0]
    if not isinstance(value, str):
        raise ValueError(f"writeDataPoint: indexes[0] must be a string or bytes, got {type(value).__name__}")
    if len(value.encode()) > MAX_INDEX_BYTES:
        raise ValueError(f"writeDataPoint(): Size of indexes[0] exceeds {MAX_INDEX_BYTES} bytes).")
    return value


class AnalyticsEngineDataset:
    """The ``env.METRICS`` binding: ``writeDataPoint`` (fire and forget, as on Cloudflare)."""

    def __init__(self, store: AnalyticsStore, dataset: str) -> None:
        store.ensure_dataset(dataset)
        self._store = store
        self.dataset = dataset
        self.usage: Usage | None = None
        """Where the points this binding keeps are metered (set by the runtime; ADR-0130)."""

    def query(self, sql: str) -> list[JsDict]:
        """Local-only read path: a SELECT over this runtime's stored points (view named ``self.dataset``).

        Cloudflare's binding has no read method (metrics are read through the account SQL API); the scheduler
        uses this one when it finds it, so ``/api/metrics`` works under ``tsumugi dev``.
        """
        return self._store.query(sql)

    def writeDataPoint(self, point: dict[str, Any] | None = None) -> None:
        """Store ``{"blobs": [...], "doubles": [...], "indexes": [...]}`` with the current time.

        An invocation keeps its first 250 points; later ones are dropped silently (Cloudflare's limit) and
        counted in ``runtime.limits.dropped_points``.
        """
        point = point or {}
        if not point.keys() <= _FIELDS:  # checked in C; the set of the others only to name them
            unknown = set(point) - _FIELDS
            raise TypeError(
                f"writeDataPoint: unknown field(s) {sorted(unknown)} (allowed: blobs, doubles, indexes)"
            )
        blobs = list(point.get("blobs") or [])
        doubles = list(point.get("doubles") or [])
        if len(blobs) > MAX_BLOBS:  # workerd's texts (analytics-engine-impl.h)
            raise ValueError(f"writeDataPoint(): Maximum of {MAX_BLOBS} blobs supported.")
        if len(doubles) > MAX_DOUBLES:
            raise ValueError(f"writeDataPoint(): Maximum of {MAX_DOUBLES} doubles supported.")
        checked_blobs = _blobs(blobs)
        checked_doubles = _doubles(doubles)
        index = _index(list(point.get("indexes") or []))
        if not admit_data_point():
            return  # beyond the invocation's 250 points: dropped without an error, as on Cloudflare
        if self.usage is not None:
            self.usage.analytics_points += 1
        self._store.write(self.dataset, checked_blobs, checked_doubles, index)
