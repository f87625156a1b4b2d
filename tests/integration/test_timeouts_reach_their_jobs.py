"""Issue 26, item 9: "Timeout 1 min" was shown on a job whose timeout is 600 s.

A timeout set anywhere but on the enqueue itself must reach the job it makes, and the job's detail (what the
dashboard's "Timeout" row and ``GET /api/jobs/{id}`` print) must be that job's own: a flow node's
``timeout_ms``, a fan-out's (on each child), and a run-time schedule's. Each value differs from the 60 s default,
so a dropped option would show the default and fail here. The jobs run on the local runtime's real Workers.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

from tests.integration.system_driver import Driver
from tsumugi_client import create_client
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime

FLOWS = "tsumugi-flows"
"""The flow fixture's Worker (tests/integration/conftest.py); ``slow`` and ``waits`` give 120 s timeouts."""


async def _nodes(runtime: LocalRuntime, run_id: str) -> dict[str, dict[str, Any]]:
    d1 = runtime.d1(FLOWS)
    rows = await d1.prepare("SELECT * FROM run_node WHERE run_id = ? ORDER BY position").bind(run_id).all()
    return {n["node_id"]: dict(n) for n in rows.results}


async def _start(runtime: LocalRuntime, run_id: str, run_input: Any) -> None:
    env = runtime.env(FLOWS)
    flow = run_id.partition(":")[0]
    await env.RUN.getByName(run_id).start(run_id, flow, json.dumps(run_input), None, None, 0)


async def test_a_flow_nodes_timeout_is_its_jobs_timeout(
    flows: LocalRuntime, fixture_module: Any, clock: VirtualClock
) -> None:
    # flow_fixture: `slow`'s node "wait" sets timeout_ms=120_000; `waits` fans out with timeout_ms=120_000.
    await _start(flows, "slow:t", {"seconds": 2})
    await _start(flows, "waits:t", {"seconds": [1, 2]})
    await clock.advance(500)  # the nodes' jobs are made and running
    client = create_client()
    env = flows.env(FLOWS)
    wait = (await _nodes(flows, "slow:t"))["wait"]["job_id"]
    children = [n["job_id"] for k, n in (await _nodes(flows, "waits:t")).items() if k.startswith("each:")]
    assert len(children) == 2
    for job_id in [wait, *children]:
        detail = await client.get(env, job_id)
        assert detail is not None, job_id
        assert (detail.state, detail.timeout_ms) == ("RUNNING", 120_000), job_id
    await clock.advance(3_000)
    finished = await client.get(env, wait)
    assert finished is not None
    assert (finished.state, finished.timeout_ms) == ("COMPLETED", 120_000)


async def test_a_schedules_timeout_is_its_occurrences_timeout_in_the_rest_detail(
    driver: Driver, clock: VirtualClock
) -> None:
    schedules = create_client()
    env = driver.producer_env
    created = await schedules.create_schedule(
        env, "slow-ten", binding="Hello", payload={"name": "t"}, every_ms=60_000, timeout_ms=600_000
    )
    assert created["options"]["timeoutMs"] == 600_000
    job_id = await schedules.trigger_schedule(env, "slow-ten")
    status, body = await driver.rest("GET", "/api/jobs/" + urllib.parse.quote(job_id, safe=""))
    assert status == 200, body
    assert body["job"]["timeout_ms"] == 600_000  # the dashboard prints this one ("10 min"), not the default
    await clock.advance(61_000)  # and the timed occurrence
    timed = [
        j["id"] for j in await driver.jobs_of("Hello") if "slow-ten-" in j["id"] and "-now-" not in j["id"]
    ]
    assert len(timed) == 1
    assert (await driver.job(timed[0])).timeout_ms == 600_000
