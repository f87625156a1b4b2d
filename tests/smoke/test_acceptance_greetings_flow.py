"""Issue 13, acceptance 2: through a real ``tsumugi dev`` of this repository, ``POST /api/runs`` of the
``greetings`` flow over three names reaches COMPLETED with its nodes and the fan-out summary.

The dev server's output is read line by line (``dev_process.DevProcess``); the test waits for its lines (the URL, ``ready``,
``run greetings:<id> COMPLETED``) with a deadline instead of polling or sleeping.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.dev_process import DevProcess

DEADLINE_S = 90.0
TOKEN = "acceptance-token"
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path: Path) -> Iterator[DevProcess]:
    """``tsumugi dev --port 0`` at the repository root, state in a temporary folder."""
    env = {**os.environ, "TSUMUGI_TOKEN": TOKEN}
    dev = DevProcess(ROOT, "--data-dir", str(tmp_path / "data"), env=env, timeout_s=DEADLINE_S)
    try:
        yield dev
    finally:
        assert dev.stop() == 0, "\n".join(dev.lines)


def test_greetings_run_reaches_completed_with_its_nodes_and_fan_out_summary(server: DevProcess) -> None:
    deadline = time.monotonic() + DEADLINE_S
    url = server.ready_url("tsumugi-scheduler", deadline)
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
