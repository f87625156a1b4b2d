"""Issue 23, acceptance 4: one ``tsumugi dev`` per data directory; a removed or replaced one is noticed (ADR-0114)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.dev_process import DevProcess
from tsumugi_dev.data_dir_lock import DataDirInUseError, lock_data_dir, watch_data_dir

REPO = Path(__file__).resolve().parents[2]
TOKEN = "lock-token"


def test_a_second_lock_on_the_same_directory_names_the_holder(tmp_path: Path) -> None:
    # flock locks belong to the open file, so a second open in this process conflicts as another process would.
    held = lock_data_dir(tmp_path / "data")
    held.record(8787)
    with pytest.raises(
        DataDirInUseError, match=rf"in use by another tsumugi dev \(pid {os.getpid()}, serving on port 8787\)"
    ):
        lock_data_dir(tmp_path / "data")
    held.release()
    lock_data_dir(tmp_path / "data").release()  # free again once released


def test_removed_and_replaced_directories_are_noticed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    lock = lock_data_dir(data)
    assert lock.problem() is None
    shutil.rmtree(data)
    assert lock.problem() == f"the data directory {data} was removed while tsumugi dev was running"
    data.mkdir()
    (data / "dev.lock").write_text("{}")
    assert lock.problem() == f"the data directory {data} was replaced while tsumugi dev was running"
    lock.release()


async def test_the_watch_reports_and_stops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    lock = lock_data_dir(data)
    stop = asyncio.Event()
    watch = asyncio.create_task(watch_data_dir(lock, stop, interval_s=0.01))
    shutil.rmtree(data)
    await asyncio.wait_for(watch, 10)
    assert stop.is_set()
    assert "was removed while tsumugi dev was running; stopping" in capsys.readouterr().err
    lock.release()


@pytest.fixture
def first(tmp_path: Path) -> Iterator[DevProcess]:
    dev = DevProcess(REPO, "--data-dir", str(tmp_path / "data"), env={**os.environ, "TSUMUGI_TOKEN": TOKEN})
    try:
        yield dev
    finally:
        dev.stop()


@pytest.mark.slow
def test_a_second_dev_on_a_directory_in_use_exits_naming_the_first_which_keeps_serving(
    first: DevProcess, tmp_path: Path
) -> None:
    deadline = time.monotonic() + first.timeout_s
    url = first.ready_url("tsumugi-scheduler", deadline)
    second = subprocess.run(
        [sys.executable, "-m", "tsumugi_dev", "dev", "--port", "0", "--data-dir", str(tmp_path / "data")],
        cwd=REPO,
        env={**os.environ, "TSUMUGI_TOKEN": TOKEN},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert second.returncode != 0
    port = url.rsplit(":", 1)[1]
    assert f"in use by another tsumugi dev (pid {first.proc.pid}, serving on port {port})" in second.stderr
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10) as http:
        created = http.post("/api/jobs", json={"binding": "Hello", "payload": {"name": "still here"}})
        assert created.status_code == 201, created.text
        first.wait_for(rf"job {created.json()['id']} COMPLETED", deadline)


@pytest.mark.slow
def test_removing_the_directory_under_a_running_dev_is_reported(first: DevProcess, tmp_path: Path) -> None:
    deadline = time.monotonic() + first.timeout_s
    first.ready_url("tsumugi-scheduler", deadline)
    shutil.rmtree(tmp_path / "data")
    first.wait_for(r"was removed while tsumugi dev was running; stopping", deadline)
    assert first.proc.wait(timeout=first.timeout_s) == 3


def test_a_dev_that_stops_early_releases_the_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A config that does not load ends the dev before it serves; the next one on the directory must not be
    # told it is in use (the lock is released on every way out).
    from tsumugi_dev.cli import run_dev

    for _ in range(2):
        assert run_dev([tmp_path / "missing.jsonc"], data_dir=tmp_path / "data", port=0) == 2
        assert "in use" not in capsys.readouterr().err
