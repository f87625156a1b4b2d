"""Flow runs on the whole local system: the Run Durable Object with the real shards, queue and performers."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.integration.fixtures.system.src.system_performers import GreetingsInput, greetings
from tests.integration.system_driver import SCHEDULER, TOKEN, Driver
from tsumugi_client import AsyncTsumugiClient, RunStartError, TsumugiClientError, create_client
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime


async def _start(system: LocalRuntime, run_id: str, flow: str, run_input: Any, **kw: Any) -> dict[str, Any]:
    stub = system.env(SCHEDULER).RUN.getByName(run_id)
    return dict(await stub.start(run_id, flow, json.dumps(run_input), kw.get("deadline_ms"), None, 0))


async def _run(system: LocalRuntime, run_id: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    d1 = system.d1("tsumugi")
    run = await d1.prepare("SELECT * FROM run WHERE id = ?").bind(run_id).first()
    nodes = await d1.prepare("SELECT * FROM run_node WHERE run_id = ? ORDER BY position").bind(run_id).all()
    return (None if run is None else dict(run)), [dict(n) for n in nodes.results]


async def test_greetings_completes_with_a_fan_out_summary(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    assert await _start(system, "greetings:one", "greetings", {"names": ["a", "b", "c"]}) == {
        "id": "greetings:one",
        "created": True,
    }
    await clock.advance(1_000)
    run, nodes = await _run(system, "greetings:one")
    assert run is not None
    assert (run["state"], run["node_total"], run["node_done"], run["node_failed"]) == ("COMPLETED", 6, 6, 0)
    assert [(n["node_id"], n["state"]) for n in nodes] == [
        ("names", "COMPLETED"),
        ("hello", "COMPLETED"),
        ("report", "COMPLETED"),
        ("hello:0", "COMPLETED"),
        ("hello:1", "COMPLETED"),
        ("hello:2", "COMPLETED"),
    ]
    assert json.loads(nodes[1]["result"]) == {"total": 3, "succeeded": 3, "failed": 0}
    report = await driver.job(nodes[2]["job_id"])
    assert json.loads(str(report.result)) == "greeted 3 of 3 (0 failed)"


async def test_rest_starts_lists_reads_and_controls_runs(clock: VirtualClock, driver: Driver) -> None:
    assert await driver.rest("GET", "/api/flows") == (200, {"flows": ["greetings"]})
    for body, message in [
        ({}, "flow is required"),
        ({"flow": "nope", "input": 1}, "unknown flow: nope"),
        ({"flow": "greetings"}, "input is required"),
        ({"flow": "greetings", "input": {}, "id": 3}, "id must be a string"),
        ({"flow": "greetings", "input": {}, "deadlineMs": 0}, "deadlineMs must be a positive integer"),
        ([], "body must be an object"),
    ]:
        assert await driver.rest("POST", "/api/runs", body) == (400, {"error": message}), body
    status, created = await driver.rest(
        "POST", "/api/runs", {"flow": "greetings", "input": {"names": ["x"]}, "id": "r1"}
    )
    assert (status, created) == (201, {"id": "greetings:r1"})
    assert await driver.rest(
        "POST", "/api/runs", {"flow": "greetings", "input": {"names": []}, "id": "r1"}
    ) == (201, created)
    await clock.advance(1_000)
    status, listing = await driver.rest("GET", "/api/runs?flow=greetings&state=COMPLETED")
    assert status == 200
    assert [(r["id"], r["node_total"], r["node_done"]) for r in listing["runs"]] == [("greetings:r1", 4, 4)]
    assert listing["total"] == 1
    status, detail = await driver.rest("GET", "/api/runs/greetings:r1")
    assert status == 200
    assert (detail["run"]["state"], detail["run"]["retryable"], json.loads(detail["run"]["input"])) == (
        "COMPLETED",
        False,
        {"names": ["x"]},
    )
    assert json.loads(detail["run"]["output"]) == "greeted 1 of 1 (0 failed)"
    assert all(n["waiting_on"] == [] for n in detail["nodes"])
    assert [n["id"] for n in detail["nodes"]] == ["names", "hello", "report", "hello:0"]
    assert all(n["scheduled_at"] <= n["finished_at"] for n in detail["nodes"])  # each node's waterfall bar
    assert detail["nodes"][3]["origin"] == "fanOut"
    assert detail["nodes"][3]["parent"] == "hello"
    assert await driver.rest("POST", "/api/runs/greetings:r1/cancel") == (
        409,
        {"ok": False, "reason": "invalid-state", "error": "not allowed in the current state"},
    )
    assert (await driver.rest("POST", "/api/runs/greetings:r1/retry"))[0] == 409
    assert (await driver.rest("POST", "/api/runs/greetings:never/retry"))[0] == 410
    assert await driver.rest("POST", "/api/runs/nocolon/cancel") == (400, {"error": "invalid run id"})


class _RuntimeTransport(httpx.AsyncBaseTransport):
    """httpx requests answered by the scheduler Worker's fetch on the local runtime."""

    def __init__(self, system: LocalRuntime) -> None:
        self.system = system

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = request.content.decode() or None
        answer = await self.system.fetch(
            SCHEDULER, str(request.url), method=request.method, headers=dict(request.headers), body=body
        )
        return httpx.Response(answer.status, content=(await answer.text()).encode())


@pytest.mark.parametrize("transport", ["rpc", "http"])
async def test_the_clients_start_read_and_steer_runs(
    system: LocalRuntime, clock: VirtualClock, driver: Driver, transport: str
) -> None:
    """The Worker client (env first) and the HTTP client make the same run calls with the same answers."""
    pool = httpx.AsyncClient(transport=_RuntimeTransport(system))
    http = (
        AsyncTsumugiClient("http://scheduler", token=TOKEN, http_client=pool) if transport == "http" else None
    )
    worker = create_client()
    env = driver.producer_env

    def call(name: str, *args: Any, **options: Any) -> Any:
        if http is not None:
            return getattr(http, name)(*args, **options)
        return getattr(worker, name)(env, *args, **options)

    try:
        run_id = await call("start_run", greetings, GreetingsInput(names=["p", "q"]), run_id="c1")
        assert run_id == "greetings:c1"
        assert await call("start_run", "greetings", {"names": []}, run_id="c1") == run_id
        with pytest.raises(RunStartError, match=r"^unknown flow: nope$"):
            await call("start_run", "nope", {})
        await clock.advance(1_000)
        detail = await call("get_run", run_id)
        assert detail is not None
        assert (detail.run.state, detail.run.output_value()) == ("COMPLETED", "greeted 2 of 2 (0 failed)")
        assert detail.run.input_value() == {"names": ["p", "q"]}
        assert [n.id for n in detail.nodes] == ["names", "hello", "report", "hello:0", "hello:1"]
        assert await call("get_run", "greetings:none") is None
        with pytest.raises(TsumugiClientError) as refused:
            await call("cancel_run", run_id)
        assert (refused.value.status, refused.value.reason) == (409, "invalid-state")
        with pytest.raises(TsumugiClientError) as gone:
            await call("retry_run", "greetings:none")
        assert (gone.value.status, gone.value.reason) == (410, "gone")
    finally:
        await pool.aclose()


async def test_a_wide_fan_out_stays_within_the_sql_bind_limit(
    system: LocalRuntime, clock: VirtualClock
) -> None:
    names = [f"n{i}" for i in range(60)]  # 60 children: inserts and snapshots are chunked under 100 binds
    await _start(system, "greetings:wide", "greetings", {"names": names})
    await clock.advance(2_000)
    run, nodes = await _run(system, "greetings:wide")
    assert run is not None
    assert (run["state"], run["node_total"], run["node_done"]) == ("COMPLETED", 63, 63)
    assert json.loads(nodes[1]["result"]) == {"total": 60, "succeeded": 60, "failed": 0}


async def test_an_empty_fan_out_completes_with_a_zero_summary_in_the_same_tick(
    system: LocalRuntime, clock: VirtualClock
) -> None:
    # Found by the whole-system simulator: the container expanded to nothing, and its aggregate decision in
    # the same tick was dropped as "already handled", leaving the run RUNNING forever.
    await _start(system, "greetings:empty", "greetings", {"names": []})
    await clock.advance(1_000)
    run, nodes = await _run(system, "greetings:empty")
    assert run is not None
    assert (run["state"], [n["state"] for n in nodes]) == ("COMPLETED", ["COMPLETED"] * 3)
    assert json.loads(nodes[1]["result"]) == {"total": 0, "succeeded": 0, "failed": 0}
