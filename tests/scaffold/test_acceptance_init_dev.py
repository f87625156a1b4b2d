"""Issue 9, acceptance 1: ``tsumugi init``, ``tsumugi add-performer Resize``, then ``tsumugi dev`` on that project
serves a job on its example performer and one on ``Resize`` to COMPLETED through its REST API.

Each command runs as a real subprocess of this environment's Python (``python -m tsumugi_dev``), in the new
project's folder. The dev server's output is read line by line (``dev_process.DevProcess``): the test waits for its lines
(the ports, "ready", each job's ``COMPLETED`` event) with a deadline instead of polling, then reads each job
with ``GET /api/jobs/<id>``. The server is always stopped, killed if it does not stop in time.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.dev_process import DevProcess

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


def dev_server(root: Path) -> DevProcess:
    """``tsumugi dev --port 0`` in ``root`` with this repository's environment and the acceptance token.

    This environment does not install the project's performers package (the project's own environment does:
    test_acceptance_user_project.py runs it with ``uv run``), so its ``src`` goes on ``PYTHONPATH`` here.
    """
    env = {**os.environ, "TSUMUGI_TOKEN": TOKEN, "PYTHONPATH": str(root / "performers" / "src")}
    return DevProcess(root, env=env, timeout_s=DEADLINE_S)


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
def server(initialised: Path) -> Iterator[DevProcess]:
    dev = dev_server(initialised)
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


def test_init_add_performer_then_dev_serves_both_performers_to_completed(server: DevProcess) -> None:
    deadline = time.monotonic() + DEADLINE_S
    url = server.ready_url("photo-shop-scheduler", deadline)
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
        env={**os.environ, "PYTHONPATH": str(initialised / "performers" / "src")},
        capture_output=True,
        text=True,
        check=False,
        timeout=DEADLINE_S,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
