"""Stored attempt errors keep their traceback, with paths relative to the import root (issue 15 item 9)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.integration.system_driver import Driver
from tsumugi_dev.clock import VirtualClock

REPO = Path(__file__).resolve().parents[2]


async def test_a_stored_traceback_names_no_absolute_path(clock: VirtualClock, driver: Driver) -> None:
    job_id = await driver.enqueue("Boom", None, max_attempts=1)
    await clock.advance(1_000)

    error = (await driver.job(job_id)).attempts_log[0].error or ""
    assert error.startswith("RuntimeError: intentional failure\nTraceback (most recent call last):")
    files = re.findall(r'File "([^"]*)", line \d+', error)
    assert "system_performers.py" in files, error  # the tests' Boom, relative to its Worker's folder
    assert [f for f in files if f.startswith("/")] == [], files
    assert str(REPO) not in error
    assert f"{Path.home()}/" not in error
    assert "site-packages/" not in error
