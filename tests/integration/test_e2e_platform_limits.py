"""The scheduler inside Cloudflare's per-invocation limits, on the strict local runtime (issue 9, items 6-9).

Each test builds the situation the issue describes; against the scheduler before ADR-0044..0047 each fails:
the three big dispatches stay QUEUED (the one ``sendBatch`` is refused), 750 of 1,000 points are dropped, an
alarm runs 1,000 D1 statements (no margin), and a heartbeating job is killed with its consumer at 15 minutes
and redelivered instead of timing out.
"""

from __future__ import annotations

import pytest

from tests.integration.system_driver import Driver
from tsumugi_client import EnqueueItemDict, EnqueueValidationError
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime

KIB = 1024
MAX_TIMEOUT_MS = 840_000  # tsumugi_core.options.MAX_TIMEOUT_MS (spelled out: the proof runs without it)


async def test_three_jobs_with_100_kib_payloads_dispatched_in_one_tick_all_complete(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    # ~100 KiB each: one message fits (128,000 bytes), two together do (256,000), three do not.
    ids = [await driver.enqueue("Hello", {"name": c * (100 * KIB - 20)}) for c in "abc"]
    await clock.advance(1_000)
    states = [(await driver.job(job_id)).state for job_id in ids]
    assert states == ["COMPLETED"] * 3


HALVES = [0.5] * 14_000
"""56,001 bytes of JSON (a 56,148-byte dispatch message): Cloudflare takes it. As V8 would serialise it, 9 bytes a
number, it is over 126,000: the size rule of ADR-0044 refused it (issue 22, item 3; ADR-0106)."""


async def test_a_payload_of_14000_halves_is_taken_through_rest_and_the_client_and_dispatched(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    status, created = await driver.rest(
        "POST", "/api/jobs", {"binding": "Boom", "payload": HALVES, "maxAttempts": 1}
    )
    assert status == 201, created
    by_client = await driver.enqueue("Boom", HALVES, max_attempts=1)
    await clock.advance(1_000)
    for job_id in (created["id"], by_client):
        job = await driver.job(job_id)
        # Dispatched through the local queue (which measures JSON as Cloudflare does) and run: Boom fails.
        assert (job.state, job.attempts) == ("FAILED", 1)


async def test_a_payload_over_the_queue_limit_as_json_is_refused_naming_the_field_and_the_rule(
    clock: VirtualClock, driver: Driver
) -> None:
    # 30,001 bytes as msgspec writes it (1e20), 132,001 as JavaScript does (100000000000000000000).
    payload = [1e20] * 6_000
    rule = "must be at most 120000 bytes as a queue message carries it (UTF-8 JSON as JavaScript writes it"
    status, body = await driver.rest("POST", "/api/jobs", {"binding": "Boom", "payload": payload})
    assert (status, body["field"]) == (400, "payload")
    assert body["rule"].startswith(rule)
    assert body["rule"].endswith("got 132001")
    with pytest.raises(EnqueueValidationError) as caught:
        await driver.enqueue("Boom", payload)
    assert (caught.value.field, caught.value.rule) == ("payload", body["rule"])
    await clock.advance(100)
    assert await driver.jobs_of("Boom") == []


async def test_a_thousand_terminal_changes_lose_no_metrics_points(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    items: list[EnqueueItemDict] = [
        {"binding": "Hello", "payload": {"name": f"n{i}"}, "delay_ms": 3_600_000} for i in range(1_000)
    ]
    ids = await driver.client.enqueue_many(driver.producer_env, items)
    await clock.advance(1_000)  # projected as SCHEDULED
    for job_id in ids:
        await driver.client.cancel(driver.producer_env, job_id)
    await clock.advance(1_000)  # 1,000 CANCELLED changes: one alarm would write 1,000 points
    points = system.analytics.query("SELECT count(*) AS n FROM tsumugi_metrics WHERE blob1 = 'CANCELLED'")
    assert points[0]["n"] == 1_000
    assert system.limits.dropped_points == 0
    assert {row["state"] for row in await driver.jobs_of("Hello")} == {"CANCELLED"}


async def test_a_big_backlog_is_projected_with_at_most_800_d1_queries_per_alarm(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    items: list[EnqueueItemDict] = [
        {"binding": "Hello", "payload": {"name": f"n{i}"}, "delay_ms": 3_600_000} for i in range(1_500)
    ]
    await driver.client.enqueue_many(driver.producer_env, items)
    await clock.advance(1_000)
    assert len(await driver.jobs_of("Hello")) == 1_500  # everything projected, over several alarms
    assert 0 < system.limits.most_d1_queries <= 800  # Cloudflare's 1,000, with 200 to spare


async def test_a_heartbeating_job_times_out_before_its_consumer_invocation_ends(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    # Slow heartbeats every second, so its 60 s timeout keeps moving; the invocation's 15 minutes do not.
    job_id = await driver.enqueue("Slow", {"seconds": 20 * 60}, max_attempts=1)
    await clock.advance(16 * 60_000)
    job = await driver.job(job_id)
    assert job.state == "FAILED"
    assert job.attempts == 1
    assert f"stopped at {MAX_TIMEOUT_MS} ms" in (job.attempts_log[0].error or "")
    assert job.attempts_log[0].finished_at - (job.attempts_log[0].started_at or 0) < 15 * 60_000
