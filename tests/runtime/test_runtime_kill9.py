"""kill -9 of a running ``tsumugi dev``: nothing acknowledged is lost, alarms fire, unacked messages return."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

FIXTURES = Path(__file__).parent / "fixtures"
CONFIGS = [str(FIXTURES / "conformance" / "wrangler.jsonc"), str(FIXTURES / "peer" / "wrangler.toml")]
DEADLINE_S = 20.0

pytestmark = pytest.mark.slow


def wait_for(what: str, probe: Callable[[], Any]) -> Any:
    """Poll ``probe`` until it returns something truthy, failing after ``DEADLINE_S``."""
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        value = probe()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class DevProcess:
    def __init__(self, data_dir: Path, log: Path) -> None:
        self.log = log
        self._out = log.open("w")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tsumugi_dev",
                "dev",
                *CONFIGS,
                "--data-dir",
                str(data_dir),
                "--port",
                "0",
            ],
            stdout=self._out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.url = wait_for("the conformance URL", self._url)
        wait_for("readiness", lambda: "ready" in log.read_text())

    def _url(self) -> str | None:
        if self.proc.poll() is not None:
            raise AssertionError(f"tsumugi dev exited early:\n{self.log.read_text()}")
        found = re.search(r"^conformance: (http://\S+)$", self.log.read_text(), re.M)
        return found.group(1) if found else None

    def get(self, path: str) -> Any:
        return httpx.get(self.url + path, timeout=5).json()

    def state(self) -> dict[str, Any]:
        return self.get("/state?name=k9")

    def kill(self, sig: int) -> int:
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=DEADLINE_S)
        self._out.close()
        return code


def test_kill_minus_nine_loses_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = DevProcess(data, tmp_path / "first.log")
    try:
        for _ in range(3):
            first.get("/counter/increment?name=k9")
        alarm_at = int(time.time() * 1000) + 4_000
        assert first.get(f"/counter/alarm?name=k9&at={alarm_at}") == {"alarm": alarm_at}
        first.get("/send?n=2&kind=hang&first=0")  # delivered after 1 s, then hangs: in flight at the kill
        wait_for("the hanging delivery", lambda: len(first.state()["deliveries"]) == 2)
        first.get("/send?n=2&kind=ok&first=10&delay=1")  # still queued at the kill
        before = first.state()
        assert before["value"] == 3
        assert before["fired"] == []
        assert before["alarm"] == alarm_at
        assert [(d["n"], d["attempts"]) for d in before["deliveries"]] == [(0, 1), (1, 1)]
    finally:
        assert first.kill(signal.SIGKILL) == -signal.SIGKILL

    second = DevProcess(data, tmp_path / "second.log")
    try:
        after = wait_for("the alarm and redeliveries", lambda: _settled(second.state()))
        assert after["value"] == 3
        assert after["fired"] == [0]
        delivered = sorted((d["n"], d["attempts"]) for d in after["deliveries"])
        assert delivered == [(0, 1), (0, 2), (1, 1), (1, 2), (10, 1), (11, 1)]
    finally:
        assert second.kill(signal.SIGINT) == 0
    assert "tsumugi dev: stopped" in second.log.read_text()


def _settled(state: dict[str, Any]) -> dict[str, Any] | None:
    return state if state["fired"] and len(state["deliveries"]) >= 6 else None
