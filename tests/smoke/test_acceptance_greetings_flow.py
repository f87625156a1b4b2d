"""Issue 13, acceptance 2: through a real ``tsumugi dev`` of this repository, ``POST /api/runs`` of the
``greetings`` flow over three names reaches COMPLETED with its nodes and the fan-out summary.

The dev server's output is read line by line on a thread; the test waits for its lines (the URL, ``ready``,
``run greetings:<id> COMPLETED``) with a deadline instead of polling or sleeping.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

DEADLINE_S = 90.0
TOKEN = "acceptance-token"
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


class DevServer:
    """``tsumugi dev --port 0`` at the repository root; its output lines arrive on a queue."""

    def __init__(self, data_dir: Path) -> None:
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tsumugi_dev", "dev", "--data-dir", str(data_dir), "--port", "0"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "TSUMUGI_TOKEN": TOKEN, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, pattern: str, deadline: float) -> re.Match[str]:
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
            self._reader.join(timeout=DEADLINE_S)
            assert self.proc.stdout is not None
            self.proc.stdout.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[DevServer]:
    dev = DevServer(tmp_path / "data")
    try:
        yield dev
    finally:
        assert dev.stop() == 0, "\n".join(dev.lines)


def test_greetings_run_reaches_completed_with_its_nodes_and_fan_out_summary(server: DevServer) -> None:
    deadline = time.monotonic() + DEADLINE_S
    url = server.wait_for(r"tsumugi-scheduler: (http://127\.0\.0\.1:\d+)", deadline).group(1)
    server.wait_for(r"tsumugi dev: ready", deadline)
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10.0) as http:
        created = http.post("/api/runs", json={"flow": "greetings", "input": {"names": ["a", "b", "c"]}})
        assert created.status_code == 201, created.text
        run_id = created.json()["id"]
        assert run_id.startswith("greetings:")
        server.wait_for(rf"run {re.escape(run_id)} COMPLETED", deadline)
        detail = http.get(f"/api/runs/{run_id}")  # the line is logged once the run is projected
        assert detail.status_code == 200, detail.text
    body = detail.json()
    assert body["run"]["state"] == "COMPLETED"
    assert (body["run"]["node_total"], body["run"]["node_done"], body["run"]["node_failed"]) == (6, 6, 0)
    nodes = {n["id"]: n for n in body["nodes"]}
    assert list(nodes) == ["names", "hello", "report", "hello:0", "hello:1", "hello:2"]
    assert all(n["state"] == "COMPLETED" for n in nodes.values())
    assert json.loads(nodes["hello"]["result"]) == {"total": 3, "succeeded": 3, "failed": 0}
    assert [nodes[f"hello:{i}"]["parent"] for i in range(3)] == ["hello"] * 3
    assert json.loads(body["run"]["output"]) == "greeted 3 of 3 (0 failed)"
