"""A retry by filter leaves run nodes' jobs out: the shard refuses them, so they would be selected forever."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.api_world import SteppedClock, World
from tsumugi_performer import JobContext, Performer
from tsumugi_performer.flow import FlowBuilder, flow
from tsumugi_scheduler.definition import define_tsumugi


class Work(Performer[Any, Any]):
    async def perform(self, payload: Any, ctx: JobContext) -> Any:
        return payload


@flow("once", dict)
def once(f: FlowBuilder[dict[str, Any]]) -> None:
    f.node("w", Work, input=lambda run, deps: run, max_attempts=1)


@pytest.fixture
async def world(tmp_path: Path, clock: SteppedClock) -> AsyncIterator[World]:
    built = World(tmp_path, clock, define_tsumugi(performers=["Work"], flows=[once]))
    yield built
    await built.aclose()


async def test_a_failed_node_job_does_not_hold_back_the_retryable_jobs_behind_it(world: World) -> None:
    status, _ = await world.request("POST", "/api/runs", {"flow": "once", "input": {}, "id": "r"})
    assert status == 201
    await world.env.RUN.getByName("once:r").host.alarm()  # enqueues the node's job
    node = world.env.RUN.getByName("once:r").host.engine.store.node("w")
    assert node is not None
    assert node.job_id is not None
    node_job = node.job_id
    await world.fail(node_job)
    world.clock.advance(1)
    plain = await world.enqueue("Work", maxAttempts=1)  # a job of its own, created later
    await world.fail(plain)
    await world.tick_and_project()
    _, listed = await world.request("GET", "/api/jobs?binding=Work&state=FAILED")
    assert {j["id"] for j in listed["jobs"]} == {node_job, plain}  # both FAILED, the node's the oldest

    status, body = await world.request("POST", "/api/jobs/bulk-retry", {"binding": "Work", "limit": 1})
    assert (status, body) == (200, {"ok": [plain], "failed": [], "remaining": 0})
    # By id the node's job is still refused, naming why (its run's resume runs the node again).
    status, body = await world.request("POST", "/api/jobs/bulk-retry", {"ids": [node_job]})
    assert (status, [f["id"] for f in body["failed"]]) == (200, [node_job])
