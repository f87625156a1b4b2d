"""Fan-out and spawn items meet their performer's payload type before they are stored as jobs (ADR-0123).

A child job's payload is checked where every other job's is: the Run object sends its jobs through the
scheduler's enqueue, which asks the performer's published type (`PayloadSchemas`). A child whose payload
the type refuses fails alone, with the field and the rule, and no job is made for it: no attempt is spent
at a performer that would only refuse it. ``Patient`` publishes ``int`` (flow_fixture).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_flow_rules import Runs

from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime

WORKER = "tsumugi-flows"
RULE = "must be an integer, got a string"


@pytest.fixture
def runs(flows: LocalRuntime, fixture_module: Any) -> Runs:
    return Runs(flows)


async def _jobs_of(runs: Runs, binding: str) -> list[str]:
    d1 = runs.runtime.d1(WORKER)
    rows = await d1.prepare("SELECT id FROM job WHERE binding = ?").bind(binding).all()
    return [str(r["id"]) for r in rows.results]


async def test_a_fan_out_item_the_performer_type_refuses_fails_that_child_alone(
    runs: Runs, clock: VirtualClock
) -> None:
    await runs.start("waits:typed", {"seconds": [0, "soon", 1]})
    await clock.advance(5_000)
    run, nodes = await runs.read("waits:typed")
    assert [nodes[f"each:{i}"]["state"] for i in range(3)] == ["COMPLETED", "FAILED", "COMPLETED"]
    assert nodes["each:1"]["error"] == f"invalid job: payload {RULE}"
    assert json.loads(nodes["each"]["result"]) == {"total": 3, "succeeded": 2, "failed": 1}
    assert len(await _jobs_of(runs, "Patient")) == 2  # none was made for the refused child
    assert run["state"] == "COMPLETED"


async def test_a_spawned_child_the_performer_type_refuses_fails_with_the_rule(
    runs: Runs, clock: VirtualClock
) -> None:
    # Spawner spawns each child with the payload "payload of <id>": Echo takes it, Patient's int refuses it.
    await runs.start("spawny:typed", {"children": {"ok": "Echo", "typed": "Patient"}})
    await clock.advance(5_000)
    run, nodes = await runs.read("spawny:typed")
    assert (nodes["parent:ok"]["state"], nodes["parent:typed"]["state"]) == ("COMPLETED", "FAILED")
    assert nodes["parent:typed"]["error"] == f"invalid job: payload {RULE}"
    assert await _jobs_of(runs, "Patient") == []
    # As any failed spawned child: the parent stays COMPLETED, its downstream is skipped, the run fails.
    assert (run["state"], nodes["parent"]["state"], nodes["after"]["state"]) == (
        "FAILED",
        "COMPLETED",
        "SKIPPED",
    )
