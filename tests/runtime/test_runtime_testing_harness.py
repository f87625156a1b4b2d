"""The README's "Testing your performers" example, kept true: the scheduler under an injected duplicate delivery."""

from __future__ import annotations

from tsumugi_client import create_client
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime


async def test_an_at_most_once_job_runs_once_when_its_dispatch_is_delivered_twice(
    repo_system: tuple[LocalRuntime, VirtualClock],
) -> None:
    runtime, clock = repo_system
    duplicate = runtime.faults.duplicate_next("tsumugi")  # the dispatch comes back after it was acked
    client, producer = create_client(), runtime.env("tsumugi-producer")
    job_id = await client.enqueue(
        producer, binding="Hello", payload={"name": "Ada"}, guarantee="at-most-once"
    )
    await clock.advance(1_000)

    job = await client.get(producer, job_id)
    assert job is not None
    assert (job.state, job.attempts, len(job.attempts_log)) == ("COMPLETED", 1, 1)
    assert duplicate.hits == 1
    assert runtime.queues.pending("tsumugi") == []


async def test_a_lost_dispatch_is_recovered_by_the_reaper(
    repo_system: tuple[LocalRuntime, VirtualClock],
) -> None:
    runtime, clock = repo_system
    lost = runtime.faults.drop_next("tsumugi")
    client, producer = create_client(), runtime.env("tsumugi-producer")
    job_id = await client.enqueue(producer, binding="Hello", payload={"name": "Bo"}, timeout_ms=1_000)
    await clock.advance(100)
    assert lost.hits == 1
    job = await client.get(producer, job_id)
    assert job is not None
    assert job.state == "QUEUED"  # dispatched, but the message vanished
    await clock.advance(60_000)
    job = await client.get(producer, job_id)
    assert job is not None
    assert (job.state, job.attempts, job.result_value()) == ("COMPLETED", 2, "Hello, Bo!")
