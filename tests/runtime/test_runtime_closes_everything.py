"""A runtime run for a while and stopped leaves nothing open: no file of its data folder, no live connection,
no ResourceWarning when what it dropped is collected (issue 14). A start that fails closes what it opened.

Checked three ways, so the test means the same on every Python: the process's open file descriptors (Linux
``/proc/self/fd``), every ``sqlite3.Connection`` still in memory, and a collection with ``ResourceWarning`` as
an error (Python 3.13 warns for an unclosed connection; 3.11 does not, which is why the first two exist).
"""

from __future__ import annotations

import gc
import os
import sqlite3
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from tests.support.clock import START_MS, installed
from tsumugi_client import create_client
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.config import ConfigError, load_config
from tsumugi_dev.project import project_worker_configs
from tsumugi_dev.runtime import LocalRuntime

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"


def files_open_under(folder: Path) -> list[str]:
    """Paths under ``folder`` this process holds open (SQLite files, their -wal and -shm)."""
    found: list[str] = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed between the listing and the read (the listing's own descriptor)
            continue
        if target.startswith(str(folder.resolve())):
            found.append(target)
    return sorted(found)


def open_connections() -> list[sqlite3.Connection]:
    """Every sqlite3 connection still in memory that is not closed."""
    still_open: list[sqlite3.Connection] = []
    for obj in gc.get_objects():
        if isinstance(obj, sqlite3.Connection):
            try:
                obj.total_changes  # noqa: B018  # raises ProgrammingError once closed
            except sqlite3.ProgrammingError:
                continue
            still_open.append(obj)
    return still_open


def collected_warnings() -> list[str]:
    """What a full collection reports, with ResourceWarning raised as an error (as the suite runs)."""
    caught: list[Any] = []
    previous = sys.unraisablehook
    sys.unraisablehook = caught.append
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)
            gc.collect()
    finally:
        sys.unraisablehook = previous
    return [f"{u.exc_value!r} in {u.object!r}" for u in caught]


async def test_a_runtime_run_for_a_while_and_stopped_leaves_nothing_open(tmp_path: Path) -> None:
    data = tmp_path / "data"
    before = {id(c) for c in open_connections()}
    clock = VirtualClock(START_MS)
    runtime = LocalRuntime([load_config(p) for p in project_worker_configs(REPO)], data_dir=data, clock=clock)
    with installed(clock):
        await runtime.start()
        try:
            client = create_client()
            producer = runtime.env("tsumugi-producer")
            ids = [
                await client.enqueue(producer, binding="Hello", payload={"name": f"n{i}"}) for i in range(5)
            ]
            ids.append(await client.enqueue(producer, binding="Boom", payload=None, max_attempts=2))
            await clock.advance(120_000)  # deliveries, retries, projection to D1, metrics, alarms
            details = [await client.get(producer, job_id) for job_id in ids]
            assert [d.state if d else None for d in details] == ["COMPLETED"] * 5 + ["FAILED"]
            assert files_open_under(data)  # the runtime does hold its files while it runs
        finally:
            await runtime.stop()
    assert files_open_under(data) == []
    assert [c for c in open_connections() if id(c) not in before] == []
    assert collected_warnings() == []


async def test_a_start_that_fails_on_a_bad_config_closes_what_it_opened(tmp_path: Path) -> None:
    data = tmp_path / "data"
    # The conformance Worker binds a service "peer" that is not part of this runtime: wiring fails after the
    # runtime's own database, Analytics Engine's and the Worker's D1 database were opened.
    conformance = FIXTURES / "conformance" / "wrangler.jsonc"
    runtime = LocalRuntime([conformance], data_dir=data, clock=VirtualClock(START_MS))
    with pytest.raises(ConfigError, match="Worker 'peer' is not part of this runtime"):
        await runtime.start()
    assert files_open_under(data) == []
    assert collected_warnings() == []
    await runtime.stop()  # nothing left to stop: still fine
