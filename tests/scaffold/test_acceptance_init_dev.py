"""Issue 9, acceptance 1: ``tsumugi init``, ``tsumugi add-performer Resize``, then ``tsumugi dev`` on that project
serves a job on its example performer and one on ``Resize`` to COMPLETED through its REST API.

Each command runs as a real subprocess of this environment's Python (``python -m tsumugi_dev``), in the new
project's folder. The dev server's output is read line by line on a thread: the test waits for its lines
(the ports, "ready", each job's ``COMPLETED`` event) with a deadline instead of polling, then reads each job
with ``GET /api/jobs/<id>``. The server is always stopped, killed if it does not stop in time.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

DEADLINE_S = 60.0
TOKEN = "acceptance-token"

pytestmark = pytest.mark.slow


def tsumugi(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tsumugi_dev", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=DEADLINE_S,
    )


class DevServer:
    """``tsumugi dev --port 0`` in ``root``; its output lines arrive on a queue."""

    def __init__(self, root: Path) -> None:
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tsumugi_dev", "dev", "--port", "0"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "TSUMUGI_TOKEN": TOKEN, "PYTHONUNBUFFERED": "1"},
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, pattern: str, deadline: float) -> re.Match[str]:
        """The first line (seen so far or arriving before ``deadline``) that matches ``pattern``."""
        compiled = re.compile(pattern)
        for line in self.lines:
            if found := compiled.search(line):
                return found
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                raise AssertionError("tsumugi dev exited:\n" + "\n".join(self.lines))
            self.lines.append(line)
            if found := compiled.search(line):
                return found
        raise AssertionError(f"no line matching {pattern!r} in time:\n" + "\n".join(self.lines))

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
        finally:
            self._reader.join(timeout=DEADLINE_S)  # the pipe is at its end once the process has gone
            assert self.proc.stdout is not None
            self.proc.stdout.close()


@pytest.fixture
def initialised(tmp_path: Path) -> Path:
    root = tmp_path / "photo-shop"
    made = tsumugi(tmp_path, "init", str(root))
    assert made.returncode == 0, made.stderr
    added = tsumugi(root, "add-performer", "Resize")
    assert added.returncode == 0, added.stderr
    assert "added Resize" in added.stdout
    return root


@pytest.fixture
def server(initialised: Path) -> Iterator[DevServer]:
    dev = DevServer(initialised)
    try:
        yield dev
    finally:
        assert dev.stop() == 0, "\n".join(dev.lines)


def _enqueue(http: httpx.Client, binding: str, payload: dict[str, Any]) -> str:
    created = http.post("/api/jobs", json={"binding": binding, "payload": payload})
    assert created.status_code == 201, created.text
    job_id = created.json()["id"]
    assert job_id.startswith(f"{binding}#0:")
    return job_id


def test_init_add_performer_then_dev_serves_both_performers_to_completed(server: DevServer) -> None:
    deadline = time.monotonic() + DEADLINE_S
    url = server.wait_for(r"photo-shop-scheduler: (http://127\.0\.0\.1:\d+)", deadline).group(1)
    server.wait_for(r"tsumugi dev: ready", deadline)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=url, headers=auth, timeout=10.0) as http:
        hello = _enqueue(http, "Hello", {"name": "Ada"})
        resize = _enqueue(http, "Resize", {"width": 640})
        results: dict[str, Any] = {}
        for job_id in (hello, resize):
            server.wait_for(rf"job {re.escape(job_id)} COMPLETED", deadline)
            job = http.get("/api/jobs/" + urllib.parse.quote(job_id, safe="")).json()["job"]
            assert job["state"] == "COMPLETED", job
            assert job["attempts"] == 1
            results[job_id] = job["result"]
    assert results == {hello: '"Hello, Ada!"', resize: '{"received":{"width":640}}'}


def test_the_scaffolds_own_tests_pass(initialised: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=initialised,
        capture_output=True,
        text=True,
        check=False,
        timeout=DEADLINE_S,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
