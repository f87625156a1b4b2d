"""A performer living inside the scheduler Worker: the consumer finds it in ``ctx.exports``, not in env.

``ctx.exports`` is not wrapped by the SDK, so only strings and numbers cross to the performer and back, and
the heartbeat's answer crosses a function stub as text (ADR-0042, ADR-0043); with the runtime as strict as
workerd, a ``dict`` on either path would fail these tests.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tsumugi_client import create_client
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.config import load_config
from tsumugi_dev.runtime import LocalRuntime

INLINE_CONFIG = Path(__file__).parent / "fixtures" / "inline_scheduler" / "wrangler.jsonc"
INLINE = "tsumugi-inline"


@pytest.fixture
async def inline(tmp_path: Path, clock: VirtualClock) -> AsyncIterator[LocalRuntime]:
    runtime = LocalRuntime([load_config(INLINE_CONFIG)], data_dir=tmp_path / "data", clock=clock)
    await runtime.start()
    yield runtime
    await runtime.stop()
    assert clock.crashes == []


async def test_a_performer_exported_by_the_scheduler_worker_runs_its_jobs(
    inline: LocalRuntime, clock: VirtualClock
) -> None:
    env = inline.env(INLINE)
    assert not hasattr(env, "Echo")  # no Service Binding: only ctx.exports can reach it
    client = create_client()
    job_id = await client.enqueue(env, binding="Echo", payload={"n": 1})
    await clock.advance(100)

    job = await client.get(env, job_id)
    assert job is not None
    assert (job.state, job.attempts) == ("COMPLETED", 1)
    assert job.result_value() == {"echo": {"n": 1}, "binding": "Echo", "attempt": 1}
    row = await inline.d1("tsumugi-inline").prepare("SELECT state FROM job WHERE id = ?").bind(job_id).first()
    assert row is not None
    assert row["state"] == "COMPLETED"


async def test_a_listed_performer_neither_exported_nor_bound_fails_as_not_found(
    inline: LocalRuntime, clock: VirtualClock
) -> None:
    env = inline.env(INLINE)
    client = create_client()
    job_id = await client.enqueue(env, binding="Missing", payload=None, max_attempts=1)
    await clock.advance(100)

    job = await client.get(env, job_id)
    assert job is not None
    assert job.state == "FAILED"
    assert (job.attempts_log[0].error or "").startswith("performer not found: Missing")


async def test_an_exported_performer_sees_a_cancel_request_through_its_heartbeat(
    inline: LocalRuntime, clock: VirtualClock
) -> None:
    env = inline.env(INLINE)
    client = create_client()
    job_id = await client.enqueue(env, binding="Patient", payload=60)
    await clock.advance(6_000)  # heartbeats at 0 s and 5 s get through the 5 s throttle

    running = await client.get(env, job_id)
    assert running is not None
    assert running.progress == pytest.approx(5 / 60)
    assert (await client.cancel(env, job_id)).requested is True
    await clock.advance(5_000)  # the next heartbeat answers cancel_requested

    stopped = await client.get(env, job_id)
    assert stopped is not None
    assert stopped.state == "CANCELLED"
    assert (stopped.attempts_log[0].error or "").startswith("PatientCancelledError: cancelled after 10s")
