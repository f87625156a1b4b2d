"""Run and schedule calls take `timedelta` for their durations (ADR-0156) and send milliseconds."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace
from typing import Any

import pytest

from tsumugi_client import create_client
from tsumugi_client._schedules import schedule_body
from tsumugi_core.exceptions import InvalidFieldError


class _Scheduler:
    """The scheduler's RPC entrypoint as a Service Binding shows it: records what start_run receives."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    async def start_run(self, body: dict[str, Any]) -> str:
        self.bodies.append(body)
        return "f:1"


async def test_a_run_deadline_may_be_a_timedelta() -> None:
    scheduler = _Scheduler()
    env = SimpleNamespace(TSUMUGI=scheduler)
    assert await create_client().start_run(env, "f", {"a": 1}, deadline_ms=dt.timedelta(minutes=5)) == "f:1"
    await create_client().start_run(env, "f", None, deadline_ms=90_000)
    assert [body["deadlineMs"] for body in scheduler.bodies] == [300_000, 90_000]


async def test_a_run_deadline_finer_than_a_millisecond_is_refused_before_sending() -> None:
    scheduler = _Scheduler()
    with pytest.raises(InvalidFieldError, match="whole number of milliseconds") as raised:
        await create_client().start_run(
            SimpleNamespace(TSUMUGI=scheduler), "f", {}, deadline_ms=dt.timedelta(microseconds=1)
        )
    assert raised.value.field == "deadline_ms"
    assert scheduler.bodies == []


def test_schedule_durations_may_be_timedeltas() -> None:
    body = schedule_body(
        "nightly",
        binding="Report",
        every_ms=dt.timedelta(hours=1),
        timeout_ms=dt.timedelta(seconds=30),
        max_attempts=3,
    )
    assert body == {
        "name": "nightly",
        "binding": "Report",
        "everyMs": 3_600_000,
        "timeoutMs": 30_000,
        "maxAttempts": 3,
    }
    assert schedule_body(flow="greetings", deadline_ms=dt.timedelta(days=1)) == {
        "flow": "greetings",
        "deadlineMs": 86_400_000,
    }
    with pytest.raises(InvalidFieldError) as raised:
        schedule_body(every_ms=dt.timedelta(microseconds=10))
    assert raised.value.field == "every_ms"
