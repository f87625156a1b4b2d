"""Flow runs on the whole local system: the Run Durable Object with the real shards, queue and performers."""

from __future__ import annotations

import json
from typing import Any

from system_driver import SCHEDULER, Driver

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


async def test_greetings_completes_with_a_fan_out_summary(system: LocalRuntime, clock: VirtualClock,
                                                         driver: Driver) -> None:  # fmt: skip
    assert await _start(system, "greetings:one", "greetings", {"names": ["a", "b", "c"]}) == {
        "id": "greetings:one", "created": True}  # fmt: skip
    await clock.advance(1_000)
    run, nodes = await _run(system, "greetings:one")
    assert run is not None
    assert (run["state"], run["node_total"], run["node_done"], run["node_failed"]) == ("COMPLETED", 6, 6, 0)
    assert [(n["node_id"], n["state"]) for n in nodes] == [
        ("names", "COMPLETED"), ("hello", "COMPLETED"), ("report", "COMPLETED"),
        ("hello:0", "COMPLETED"), ("hello:1", "COMPLETED"), ("hello:2", "COMPLETED"),
    ]  # fmt: skip
    assert json.loads(nodes[1]["result"]) == {"total": 3, "succeeded": 3, "failed": 0}
    report = await driver.job(nodes[2]["job_id"])
    assert json.loads(str(report.result)) == "greeted 3 of 3 (0 failed)"
