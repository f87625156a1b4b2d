"""The README's tour, for real: `tsumugi dev` from the repository root, then the curl steps over HTTP.

Starts the same command the README's run command ends in (``tsumugi dev`` with no CONFIG, at the repository root)
as a subprocess with the real clock, enqueues a ``Hello`` job with ``POST /api/jobs`` and reads it back
COMPLETED with ``GET /api/jobs/{id}``, as the README shows, then stops it with Ctrl-C (SIGINT).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
DEADLINE_S = 30.0
TOKEN = "readme-tour-token"

pytestmark = pytest.mark.slow


def wait_for(what: str, probe: Callable[[], Any]) -> Any:
    """Poll ``probe`` until it returns something truthy; fail after ``DEADLINE_S``."""
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        value = probe()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class DevProcess:
    """``tsumugi dev`` at the repository root, as the README's run command starts it, with its log."""

    def __init__(self, tmp_path: Path, env: dict[str, str]) -> None:
        self.log = tmp_path / "dev.log"
        self._out = self.log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tsumugi_dev", "dev", "--data-dir", str(tmp_path / "data"), "--port", "0"],
            cwd=ROOT,
            stdout=self._out,
            stderr=subprocess.STDOUT,
            env={**env, "PYTHONUNBUFFERED": "1"},
        )
        wait_for("readiness", self._ready)
        found = re.search(r"tsumugi-scheduler: (http://127\.0\.0\.1:\d+)", self.text())
        assert found, self.text()
        self.url = found.group(1)

    def text(self) -> str:
        return self.log.read_text()

    def _ready(self) -> bool:
        assert self.proc.poll() is None, self.text()
        return "ready" in self.text()

    def interrupt(self) -> int:
        """Ctrl-C, then the exit status (killed if it does not stop in time)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
        finally:
            self._out.close()


@pytest.fixture
def dev_system(tmp_path: Path) -> Iterator[DevProcess]:
    dev = DevProcess(tmp_path, {**os.environ, "TSUMUGI_TOKEN": TOKEN})
    try:
        yield dev
    finally:
        dev.interrupt()


def test_readme_curl_steps_enqueue_hello_and_read_it_back_completed(dev_system: DevProcess) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=dev_system.url, timeout=10.0) as http:
        created = http.post(
            "/api/jobs", headers=auth, json={"binding": "Hello", "payload": {"name": "Tsumugi"}}
        )
        assert created.status_code == 201, created.text
        job_id = created.json()["id"]
        assert job_id.startswith("Hello#0:")

        path = "/api/jobs/" + urllib.parse.quote(job_id, safe="")

        def completed() -> dict[str, Any] | None:
            job = http.get(path, headers=auth).json()["job"]
            return job if job["state"] == "COMPLETED" else None

        job = wait_for("the Hello job to complete", completed)
        assert job["result"] == '"Hello, Tsumugi!"'
        assert job["attempts"] == 1

        assert http.get("/api/jobs", headers={"Authorization": "Bearer wrong"}).status_code == 401
        listed = http.get("/api/jobs", headers=auth, params={"binding": "Hello"}).json()
        assert [row["id"] for row in listed["jobs"]] == [job_id]


def test_ctrl_c_stops_the_system_cleanly(dev_system: DevProcess) -> None:
    assert dev_system.interrupt() == 0
    assert "stopped" in dev_system.text()


def test_without_tsumugi_token_a_generated_token_is_printed_and_accepted(tmp_path: Path) -> None:
    dev = DevProcess(tmp_path, {k: v for k, v in os.environ.items() if k != "TSUMUGI_TOKEN"})
    try:
        token = re.search(r"API token: (\S+)", dev.text())
        assert token, dev.text()
        with httpx.Client(base_url=dev.url, timeout=10.0) as http:
            assert (
                http.get("/api/jobs", headers={"Authorization": f"Bearer {token.group(1)}"}).status_code
                == 200
            )
            assert http.get("/api/jobs").status_code == 401
    finally:
        dev.interrupt()
