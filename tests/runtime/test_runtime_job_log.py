"""``tsumugi dev`` logs one line per job event: the scheduler's shard logs each projected change on ``tsumugi.jobs``."""

from __future__ import annotations

import io
import logging
from typing import Any

import pytest

from tsumugi_client import create_client
from tsumugi_dev.cli import configure_logging
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime
from tsumugi_scheduler.shard_host import JOB_LOGGER


async def enqueue(runtime: LocalRuntime, binding: str, payload: Any, **options: Any) -> str:
    return await create_client().enqueue(
        runtime.env("tsumugi-producer"), binding=binding, payload=payload, **options
    )


def lines_of(caplog: pytest.LogCaptureFixture, job_id: str) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.name == JOB_LOGGER and f"job {job_id} " in r.getMessage()
    ]


async def test_a_successful_job_logs_queued_then_completed(
    repo_system: tuple[LocalRuntime, VirtualClock], caplog: pytest.LogCaptureFixture
) -> None:
    runtime, clock = repo_system
    caplog.set_level(logging.INFO, logger="tsumugi")
    job_id = await enqueue(runtime, "Hello", {"name": "log"}, delay_ms=1_000)
    await clock.advance(0)
    assert lines_of(caplog, job_id) == [f"job {job_id} SCHEDULED attempt 0"]
    await clock.advance(1_100)
    assert lines_of(caplog, job_id)[1:] == [
        f"job {job_id} QUEUED attempt 1",
        f"job {job_id} COMPLETED attempt 1",
    ]


async def test_a_failing_job_logs_each_attempt_with_its_error(
    repo_system: tuple[LocalRuntime, VirtualClock], caplog: pytest.LogCaptureFixture
) -> None:
    runtime, clock = repo_system
    caplog.set_level(logging.INFO, logger="tsumugi")
    job_id = await enqueue(runtime, "Boom", None, max_attempts=2)
    await clock.advance(5_000)
    lines = lines_of(caplog, job_id)
    assert lines[:2] == [f"job {job_id} SCHEDULED attempt 0", f"job {job_id} QUEUED attempt 1"]
    assert f"job {job_id} SCHEDULED attempt 1 error: RuntimeError: intentional failure" in lines
    assert lines[-1] == f"job {job_id} FAILED attempt 2 error: RuntimeError: intentional failure"
    assert all("\n" not in line for line in lines)


async def test_heartbeat_progress_is_logged(
    repo_system: tuple[LocalRuntime, VirtualClock], caplog: pytest.LogCaptureFixture
) -> None:
    runtime, clock = repo_system
    caplog.set_level(logging.INFO, logger="tsumugi")
    job_id = await enqueue(runtime, "Slow", {"seconds": 10})
    await clock.advance(6_000)
    assert f"job {job_id} RUNNING attempt 1 progress 0.5" in lines_of(caplog, job_id)


def test_the_dev_console_shows_job_lines() -> None:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    stream = io.StringIO()
    try:
        configure_logging(stream)
        logging.getLogger(JOB_LOGGER).info("job H#0:x COMPLETED attempt 1")
    finally:
        root.handlers[:] = handlers  # give the root logger back to pytest
        root.setLevel(level)
    assert stream.getvalue().rstrip().endswith("job H#0:x COMPLETED attempt 1")


async def test_a_live_attempt_line_never_carries_the_previous_attempts_error(
    repo_system: tuple[LocalRuntime, VirtualClock], caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 26 item 1: "RUNNING attempt 2 error: <attempt 1's error>" read as if attempt 2 had failed.
    runtime, clock = repo_system
    caplog.set_level(logging.INFO, logger="tsumugi")
    job_id = await enqueue(runtime, "Slow", {"seconds": 3}, max_attempts=2, timeout_ms=1_000)
    await clock.advance(120_000)
    lines = lines_of(caplog, job_id)
    live = [line for line in lines if " RUNNING " in line or " QUEUED " in line]
    assert any(" attempt 2" in line for line in live), lines
    assert [line for line in live if "error:" in line] == []
    assert any("error:" in line for line in lines), lines  # the failed attempt's own line keeps it


def test_by_default_the_console_shows_job_events_and_warnings_and_verbose_the_rest() -> None:
    # Issue 26 item 6: of 1,162 lines, 404 were job events; request and alarm lines were the rest.
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    shown: dict[bool, str] = {}
    try:
        for verbose in (False, True):
            stream = io.StringIO()
            configure_logging(stream, verbose=verbose)
            logging.getLogger(JOB_LOGGER).info("job H#0:x COMPLETED attempt 1")
            logging.getLogger("tsumugi.runs").info("run greetings:a COMPLETED")
            logging.getLogger("tsumugi_dev").info(
                "tsumugi-scheduler GET http://127.0.0.1:8787/api/jobs -> 200"
            )
            logging.getLogger("tsumugi_dev").info("alarm of JobShard ab12 ran (retry 0)")
            logging.getLogger("tsumugi_scheduler").warning("outbox send failed; retrying")
            logging.getLogger("tsumugi_examples").info("mail sink: mail-1 to a@example.com: hi")
            shown[verbose] = stream.getvalue()
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    quiet = [line.split(" ", 2)[2] for line in shown[False].splitlines()]
    assert quiet == [
        "job H#0:x COMPLETED attempt 1",
        "run greetings:a COMPLETED",
        "outbox send failed; retrying",
        "mail sink: mail-1 to a@example.com: hi",
    ]
    assert len(shown[True].splitlines()) == 6
