"""Issue 12, acceptance 2: through a real ``tsumugi dev`` process of this repository's Workers, a run-time
schedule ``everyMs: 1000`` on Hello fires about once a second, pause stops it, resume restarts it, trigger
fires once at once and delete removes it.

The dev server's output is read line by line (``dev_process.DevProcess``): each fired
occurrence shows as ``job Hello#0:<name>-<scheduled_at> ...`` lines. Waits are bounded waits on those lines;
the windows in which nothing may fire are closed by an event of the server's own clock (a Hello job enqueued
with ``delayMs`` completing), never by a sleep.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_acceptance_init_dev import DEADLINE_S, TOKEN

from tests.support.dev_process import DevProcess

REPO = Path(__file__).resolve().parents[2]
NAME = "acceptance-every-second"
OCCURRENCE = rf"job Hello#0:{NAME}-{{at}}-[0-9a-f]{{{{12}}}}"
"""An occurrence's job in the output: its id ends in the Scheduler object's digest (ADR-0177)."""
FIRED = re.compile(rf"job Hello#0:{NAME}-(\d+)-[0-9a-f]{{12}} ")

pytestmark = pytest.mark.slow


class RepoDevServer(DevProcess):
    """``tsumugi dev`` on services/scheduler and services/performers, state in a temporary folder."""

    def __init__(self, data_dir: Path) -> None:
        # No CONFIG: this repository's [tool.tsumugi].workers, with TSUMUGI_TOKEN from the environment.
        env = {**os.environ, "TSUMUGI_TOKEN": TOKEN}
        super().__init__(REPO, "--data-dir", str(data_dir), env=env, timeout_s=DEADLINE_S)

    def occurrences(self) -> set[int]:
        """Scheduled instants of every occurrence of the schedule seen in the output so far."""
        return {int(m.group(1)) for line in self.lines if (m := FIRED.search(line))}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RepoDevServer]:
    dev = RepoDevServer(tmp_path / "data")
    try:
        yield dev
    finally:
        assert dev.stop() == 0, "\n".join(dev.lines)


def _wait_for_quiet_window(server: RepoDevServer, http: httpx.Client, ms: int, deadline: float) -> None:
    """Return once the server's clock has moved ``ms`` on: a Hello job delayed by ``ms`` completes."""
    created = http.post("/api/jobs", json={"binding": "Hello", "payload": {"name": "clock"}, "delayMs": ms})
    assert created.status_code == 201, created.text
    server.wait_for(rf"job {re.escape(created.json()['id'])} COMPLETED", deadline)


def test_every_second_schedule_pause_resume_trigger_delete(server: RepoDevServer) -> None:
    deadline = time.monotonic() + 2 * DEADLINE_S
    url = server.ready_url("tsumugi-scheduler", deadline)
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10.0) as http:
        body = {"name": NAME, "binding": "Hello", "payload": {"name": "every second"}, "everyMs": 1000}
        created = http.post("/api/schedules", json=body)
        assert created.status_code == 201, created.text
        registered = created.json()["schedule"]["created_at"]

        # About once a second: three occurrences, one period apart, each completed.
        started = time.monotonic()
        for k in (1, 2, 3):
            server.wait_for(OCCURRENCE.format(at=registered + k * 1000) + " COMPLETED", deadline)
        assert 1.5 < time.monotonic() - started < 6.0  # three fires took about three seconds, not one or ten
        assert {registered + 1000, registered + 2000, registered + 3000} <= server.occurrences()

        # Pause stops it: nothing scheduled after the pause fires in a 2.5 s window.
        paused = http.post(f"/api/schedules/{NAME}/pause").json()["schedule"]
        assert (paused["paused"], paused["next_occurrences"]) == (True, [])
        _wait_for_quiet_window(server, http, 2_500, deadline)
        assert all(at <= paused["updated_at"] for at in server.occurrences())

        # Trigger fires once, at once, while paused.
        triggered = http.post(f"/api/schedules/{NAME}/trigger")
        assert triggered.status_code == 200, triggered.text
        job_id = triggered.json()["job_id"]
        assert job_id.startswith(f"Hello#0:{NAME}-now-")
        server.wait_for(rf"job {re.escape(job_id)} COMPLETED", deadline)
        assert sum(f"job {job_id} QUEUED" in line for line in server.lines) == 1

        # Resume restarts it on the same phase, from the next boundary.
        resumed = http.post(f"/api/schedules/{NAME}/resume").json()["schedule"]
        assert resumed["paused"] is False
        following = resumed["next_run_at"]
        assert (following - registered) % 1000 == 0
        server.wait_for(OCCURRENCE.format(at=following) + " COMPLETED", deadline)
        server.wait_for(OCCURRENCE.format(at=following + 1000) + " COMPLETED", deadline)

        # Delete removes it: gone from the API, and nothing fires after.
        deleted = http.delete(f"/api/schedules/{NAME}")
        assert deleted.json() == {"ok": True, "name": NAME}
        assert http.get(f"/api/schedules/{NAME}").status_code == 404
        gone_at = max(server.occurrences())
        _wait_for_quiet_window(server, http, 2_500, deadline)
        assert max(server.occurrences()) <= gone_at + 1000  # at most the one in flight as it was deleted
        names = [s["name"] for s in http.get("/api/schedules").json()["schedules"]]
        assert names == ["hello-every-10-minutes"]
