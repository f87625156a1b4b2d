"""Who did what (issue 30, ADR-0151): a state change through the API records the identity that made it, in
the job's log line and in the job detail; a refused one records, and changes, nothing."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.api.api_world import T0, TOKEN, SteppedClock, World, quoted
from tsumugi_scheduler.readmodel import sweep

OPERATOR = {"authorization": "Bearer operator-token"}
VIEWER = {"authorization": "Bearer viewer-token"}


@pytest.fixture
async def world(tmp_path: Path, clock: SteppedClock) -> AsyncIterator[World]:
    built = World(tmp_path, clock)
    built.env.TSUMUGI_OPERATOR_TOKEN = "operator-token"  # type: ignore[attr-defined]
    built.env.TSUMUGI_VIEWER_TOKEN = "viewer-token"  # type: ignore[attr-defined]
    yield built
    await built.aclose()


async def detail(world: World, job_id: str) -> dict[str, object]:
    status, body = await world.request("GET", f"/api/jobs/{quoted(job_id)}")
    assert status == 200, body
    return body


async def test_a_cancel_records_who_made_it_in_the_detail_and_the_log(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    job_id = await world.enqueue("MAIL", delayMs=60_000)
    world.clock.advance(5)
    with caplog.at_level(logging.INFO, logger="tsumugi.jobs"):
        assert (await world.request("POST", f"/api/jobs/{quoted(job_id)}/cancel", headers=OPERATOR))[0] == 200
    body = await detail(world, job_id)
    assert body["actions"] == [
        {
            "at": T0 + 5,
            "by": "TSUMUGI_OPERATOR_TOKEN",
            "role": "operator",
            "action": "cancelJob",
            "target": job_id,
        }
    ]
    assert f"job {job_id} cancelJob by TSUMUGI_OPERATOR_TOKEN (operator)" in caplog.messages


async def test_retry_reschedule_and_the_bindings_policy_change_are_listed_newest_first(world: World) -> None:
    failed = await world.enqueue("MAIL", maxAttempts=1)
    await world.fail(failed)
    assert (await world.request("POST", f"/api/jobs/{quoted(failed)}/retry", headers=OPERATOR))[0] == 200
    world.clock.advance(10)
    assert (await world.request("POST", "/api/bindings/MAIL/policy", {"concurrency": 2}))[0] == 200
    world.clock.advance(10)
    status, _ = await world.request(
        "POST", f"/api/jobs/{quoted(failed)}/reschedule", {"delayMs": 1_000}, headers=OPERATOR
    )
    assert status == 200
    actions = (await detail(world, failed))["actions"]
    assert [(a["action"], a["by"], a["target"]) for a in actions] == [  # type: ignore[union-attr]
        ("rescheduleJob", "TSUMUGI_OPERATOR_TOKEN", failed),
        ("setBindingPolicy", "TSUMUGI_TOKEN", "binding:MAIL"),
        ("retryJob", "TSUMUGI_OPERATOR_TOKEN", failed),
    ]
    # Another binding's job shows none of it.
    other = await world.enqueue("SMS", partitionKey="p")
    assert (await detail(world, other))["actions"] == []


async def test_a_bulk_cancel_records_each_job_it_changed(world: World) -> None:
    first, second = await world.enqueue("MAIL"), await world.enqueue("MAIL")
    status, body = await world.request(
        "POST", "/api/jobs/bulk-cancel", {"ids": [first, second, "MAIL#0:nope"]}, headers=OPERATOR
    )
    assert status == 200, body
    assert sorted(body["ok"]) == sorted([first, second])
    for job_id in (first, second):
        assert [a["action"] for a in (await detail(world, job_id))["actions"]] == ["bulkCancelJobs"]  # type: ignore[union-attr]


async def test_a_refused_change_records_and_changes_nothing(world: World) -> None:
    job_id = await world.enqueue("MAIL", delayMs=60_000)
    status, _ = await world.request("POST", f"/api/jobs/{quoted(job_id)}/cancel", headers=VIEWER)
    assert status == 403
    body = await detail(world, job_id)
    assert (body["job"]["state"], body["actions"]) == ("SCHEDULED", [])  # type: ignore[index]
    # A change the shard refuses (409) records nothing either.
    assert (await world.request("POST", f"/api/jobs/{quoted(job_id)}/retry", headers=OPERATOR))[0] == 409
    assert (await detail(world, job_id))["actions"] == []


async def test_the_sweep_drops_actions_past_the_read_models_retention(world: World) -> None:
    job_id = await world.enqueue("MAIL", delayMs=60_000)
    assert (
        await world.request(
            "POST", f"/api/jobs/{quoted(job_id)}/cancel", headers={"authorization": f"Bearer {TOKEN}"}
        )
    )[0] == 200
    assert (await sweep(world.d1, T0 + 1_000, older_than_ms=1_000)).actions == 0  # not older than the cutoff
    assert (await sweep(world.d1, T0 + 1_001, older_than_ms=1_000)).actions == 1
