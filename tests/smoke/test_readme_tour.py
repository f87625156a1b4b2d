"""The README's tour, for real: `tsumugi dev` from the repository root, then the curl steps over HTTP.

Starts the same command the README's run command ends in (``tsumugi dev`` with no CONFIG, at the repository root)
as a subprocess with the real clock, enqueues a ``Hello`` job with ``POST /api/jobs`` and reads it back
COMPLETED with ``GET /api/jobs/{id}``, as the README shows, then stops it with Ctrl-C (SIGINT). The server is
waited on by its output lines (``dev_process.DevProcess``), not by polling.
"""

from __future__ import annotations

import os
import re
import signal
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.dev_process import DevProcess

ROOT = Path(__file__).resolve().parents[2]
DEADLINE_S = 30.0
TOKEN = "readme-tour-token"

pytestmark = pytest.mark.slow


class TourDev(DevProcess):
    """``tsumugi dev`` at the repository root, as the README's run command starts it, ready; Ctrl-C stops it."""

    def __init__(self, tmp_path: Path, env: dict[str, str]) -> None:
        super().__init__(
            ROOT,
            "--data-dir",
            str(tmp_path / "data"),
            env=env,
            stop_signal=signal.SIGINT,
            timeout_s=DEADLINE_S,
        )
        try:
            self.url = self.ready_url("tsumugi-scheduler")
        except BaseException:
            self.stop()
            raise


@pytest.fixture
def dev_system(tmp_path: Path) -> Iterator[TourDev]:
    dev = TourDev(tmp_path, {**os.environ, "TSUMUGI_TOKEN": TOKEN})
    try:
        yield dev
    finally:
        dev.stop()


def test_readme_curl_steps_enqueue_hello_and_read_it_back_completed(dev_system: TourDev) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=dev_system.url, timeout=10.0) as http:
        created = http.post(
            "/api/jobs", headers=auth, json={"binding": "Hello", "payload": {"name": "Tsumugi"}}
        )
        assert created.status_code == 201, created.text
        job_id = created.json()["id"]
        assert job_id.startswith("Hello#0:")

        dev_system.wait_for(rf"job {re.escape(job_id)} COMPLETED")
        job = http.get("/api/jobs/" + urllib.parse.quote(job_id, safe=""), headers=auth).json()["job"]
        assert job["state"] == "COMPLETED", job
        assert job["result"] == '"Hello, Tsumugi!"'
        assert job["attempts"] == 1

        assert http.get("/api/jobs", headers={"Authorization": "Bearer wrong"}).status_code == 401
        listed = http.get("/api/jobs", headers=auth, params={"binding": "Hello"}).json()
        assert [row["id"] for row in listed["jobs"]] == [job_id]


def test_ctrl_c_stops_the_system_cleanly(dev_system: TourDev) -> None:
    assert dev_system.stop() == 0
    assert "stopped" in dev_system.text()


def test_without_tsumugi_token_a_generated_token_is_printed_and_accepted(tmp_path: Path) -> None:
    dev = TourDev(tmp_path, {k: v for k, v in os.environ.items() if k != "TSUMUGI_TOKEN"})
    try:
        token = dev.wait_for(r"API token: (\S+)")
        with httpx.Client(base_url=dev.url, timeout=10.0) as http:
            assert (
                http.get("/api/jobs", headers={"Authorization": f"Bearer {token.group(1)}"}).status_code
                == 200
            )
            assert http.get("/api/jobs").status_code == 401
    finally:
        dev.stop()
