"""Every rule of the Run Durable Object on the local runtime, with the fixture flows of flow_scheduler.

Restarts of the Run object and of job shards mid-run, duplicate and stale job events, a resumed run, a
deadline expiring with work in flight, cancel, subflows and their depth limit, the node limit, removed
flows and nodes, retention.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime
from tsumugi_scheduler.api.runs import read_run

WORKER = "tsumugi-flows"
"""The Worker of the ``flows`` fixture (tests/integration/conftest.py)."""


class Runs:
    def __init__(self, runtime: LocalRuntime) -> None:
        self.runtime = runtime
        self.env = runtime.env(WORKER)

    def stub(self, run_id: str) -> Any:
        return self.env.RUN.getByName(run_id)

    async def start(self, run_id: str, run_input: Any, deadline_ms: int | None = None) -> dict[str, Any]:
        return dict(
            await self.stub(run_id).start(
                run_id, run_id.partition(":")[0], json.dumps(run_input), deadline_ms, None, 0
            )
        )

    async def read(self, run_id: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        d1 = self.runtime.d1("tsumugi-flows")
        run = await d1.prepare("SELECT * FROM run WHERE id = ?").bind(run_id).first()
        assert run is not None, run_id
        nodes = (
            await d1.prepare("SELECT * FROM run_node WHERE run_id = ? ORDER BY position").bind(run_id).all()
        )
        return dict(run), {n["node_id"]: dict(n) for n in nodes.results}

    async def states(self, run_id: str) -> tuple[str, dict[str, str]]:
        run, nodes = await self.read(run_id)
        return run["state"], {k: v["state"] for k, v in nodes.items()}


@pytest.fixture
def runs(flows: LocalRuntime, fixture_module: Any) -> Runs:
    return Runs(flows)


async def test_a_failure_skips_downstream_while_an_independent_branch_finishes_then_resume_completes(
    runs: Runs, clock: VirtualClock
) -> None:
    await runs.start("chain:r", {"key": "k", "wait": 3})
    await clock.advance(1_000)
    state, nodes = await runs.states("chain:r")
    assert (state, nodes) == ("RUNNING", {"a": "COMPLETED", "b": "FAILED", "c": "SKIPPED", "d": "SCHEDULED"})
    await clock.advance(3_000)
    run, detail = await runs.read("chain:r")
    assert (run["state"], detail["d"]["state"], run["node_failed"]) == ("FAILED", "COMPLETED", 1)
    first_b, first_a = detail["b"]["job_id"], detail["a"]["job_id"]

    assert await runs.stub("chain:r").retry() == {"ok": True}
    await clock.advance(1_000)
    run, detail = await runs.read("chain:r")
    assert run["state"] == "COMPLETED"
    assert {k: v["state"] for k, v in detail.items()} == dict.fromkeys("abcd", "COMPLETED")
    assert detail["a"]["job_id"] == first_a  # completed nodes keep their job and result
    assert detail["b"]["job_id"] != first_b  # a re-run gets a new job
    assert detail["b"]["error"] is None


async def test_nodes_carry_when_they_were_scheduled_and_when_they_finished(
    runs: Runs, clock: VirtualClock
) -> None:
    started = clock.now_ms()
    await runs.start("chain:t", {"key": "t", "wait": 3})
    await clock.advance(5_000)
    _, nodes = await runs.read("chain:t")
    times = {k: (v["scheduled_at"], v["finished_at"]) for k, v in nodes.items()}
    a, b, d = times["a"], times["b"], times["d"]
    assert started <= a[0] <= a[1] <= b[0] <= b[1]  # b was scheduled once a had finished
    assert d[1] - d[0] >= 3_000  # Patient slept 3 s
    assert times["c"][0] is None  # skipped: never scheduled
    assert times["c"][1] == nodes["c"]["updated_at"]

    assert await runs.stub("chain:t").retry() == {"ok": True}
    await clock.advance(1)
    _, nodes = await runs.read("chain:t")
    assert nodes["a"]["scheduled_at"] == a[0]  # a completed node keeps its times
    assert nodes["b"]["scheduled_at"] > b[0]  # a re-run node is scheduled anew


async def test_start_is_idempotent_by_run_id_and_the_shape_is_frozen(runs: Runs, clock: VirtualClock) -> None:
    assert await runs.start("fan:one", {"items": [1, 2]}) == {"id": "fan:one", "created": True}
    assert await runs.start("fan:one", {"items": [9]}) == {"id": "fan:one", "created": False}
    await clock.advance(1_000)
    run, nodes = await runs.read("fan:one")
    assert run["state"] == "COMPLETED"
    assert json.loads(run["input"]) == {"items": [1, 2]}
    assert list(nodes) == ["each", "after", "each:k1", "each:k2"]
    assert json.loads(nodes["each"]["result"]) == {"total": 2, "succeeded": 2, "failed": 0}


async def test_failing_fan_out_children_are_counted_and_do_not_fail_downstream(
    runs: Runs, clock: VirtualClock
) -> None:
    await runs.start("failfan:x", {"items": ["p", "q"]})
    await clock.advance(1_000)
    run, nodes = await runs.read("failfan:x")
    assert (run["state"], nodes["after"]["state"]) == ("COMPLETED", "COMPLETED")
    assert json.loads(nodes["each"]["result"]) == {"total": 2, "succeeded": 0, "failed": 2}
    assert run["node_failed"] == 2


async def test_a_child_whose_job_the_scheduler_refuses_fails_alone_with_the_refusal(
    runs: Runs, clock: VirtualClock
) -> None:
    await runs.start(
        "fan:big", {"items": [1, "<unsafe int>", 3]}
    )  # the flow makes 2**53 + 1: JS would round it
    await clock.advance(1_000)
    run, nodes = await runs.read("fan:big")
    assert (run["state"], nodes["after"]["state"]) == ("COMPLETED", "COMPLETED")
    assert [nodes[f"each:k{i}"]["state"] for i in (1, 3)] == ["COMPLETED", "COMPLETED"]
    refused = nodes[f"each:k{2**53 + 1}"]
    assert (refused["state"], refused["job_id"] is not None) == ("FAILED", True)
    assert refused["error"].startswith("invalid job: payload ")
    assert json.loads(nodes["each"]["result"]) == {"total": 3, "succeeded": 2, "failed": 1}


@pytest.mark.parametrize(
    ("items", "error"),
    [
        (["a b"], "fan-out failed: key of item 0 must be 1 to 128 of A-Z a-z 0-9 _ -, got 'ka b'"),
        (["x" * 128], "fan-out failed: key of item 0 must be at most 128 characters, got 129"),
        ([1, 2, 1], "fan-out failed: items 0 and 2 have the same key: 'k1'"),
    ],
)
async def test_a_fan_out_whose_keys_cannot_name_children_fails_its_node_not_the_tick(
    runs: Runs, clock: VirtualClock, items: list[Any], error: str
) -> None:
    await runs.start("fan:keys", {"items": items})
    await clock.advance(1_000)
    run, nodes = await runs.read("fan:keys")
    assert (run["state"], nodes["each"]["state"], nodes["each"]["error"]) == ("FAILED", "FAILED", error)
    assert nodes["after"]["state"] == "SKIPPED"
    assert set(nodes) == {"each", "after"}  # no child was made


async def test_a_child_payload_too_large_for_a_job_fails_that_child_before_it_is_stored(
    runs: Runs, clock: VirtualClock
) -> None:
    await runs.start("plainfan:big", {"items": [1, "<150 KB text>", 3]})  # the flow makes a 150 KB item
    await clock.advance(1_000)
    run, nodes = await runs.read("plainfan:big")
    assert (run["state"], nodes["after"]["state"]) == ("COMPLETED", "COMPLETED")
    assert [nodes[f"each:{i}"]["state"] for i in range(3)] == ["COMPLETED", "FAILED", "COMPLETED"]
    assert nodes["each:1"]["error"] == "invalid job: payload must be at most 102400 bytes as JSON, got 150002"
    assert nodes["each:1"]["job_id"] is None  # never sent
    assert json.loads(nodes["each"]["result"]) == {"total": 3, "succeeded": 2, "failed": 1}


async def test_a_runs_counters_follow_its_children_while_it_runs(runs: Runs, clock: VirtualClock) -> None:
    await runs.start("waits:c", {"seconds": [1, 6]})
    await clock.advance(3_000)  # the first child ended; its ending could start nothing, so it ticked later
    run, nodes = await runs.read("waits:c")
    assert (run["state"], nodes["each:0"]["state"], nodes["each:1"]["state"]) == (
        "RUNNING",
        "COMPLETED",
        "SCHEDULED",
    )
    assert (run["node_total"], run["node_done"]) == (3, 1)
    await clock.advance(5_000)
    run, _ = await runs.read("waits:c")
    assert (run["state"], run["node_done"]) == ("COMPLETED", 3)


async def test_an_expansion_past_the_node_limit_fails_its_node(runs: Runs, clock: VirtualClock) -> None:
    await runs.start("fan:big", {"items": list(range(10))})
    await clock.advance(1_000)
    run, nodes = await runs.read("fan:big")
    assert (run["state"], nodes["each"]["state"], nodes["after"]["state"]) == ("FAILED", "FAILED", "SKIPPED")
    assert nodes["each"]["error"] == "node count exceeded the limit: 8"


async def test_a_deadline_drains_to_failed_awaiting_work_in_flight_and_resume_rearms_it(
    runs: Runs, clock: VirtualClock
) -> None:
    await runs.start("slow:d", {"seconds": 8})
    await clock.advance(6_000)  # the deadline (5 s) passed while "wait" runs
    run, nodes = await runs.read("slow:d")
    assert run["state"] == "RUNNING"
    assert (nodes["then"]["state"], nodes["then"]["error"]) == ("FAILED", "run deadline exceeded: 5000ms")
    assert nodes["wait"]["state"] == "SCHEDULED"
    await clock.advance(4_000)
    run, nodes = await runs.read("slow:d")
    assert (run["state"], nodes["wait"]["state"]) == ("FAILED", "COMPLETED")  # FAILED though all ran

    assert await runs.stub("slow:d").retry() == {"ok": True}
    await clock.advance(1_000)
    state, states = await runs.states("slow:d")
    assert (state, states) == ("COMPLETED", dict.fromkeys(["wait", "then", "later"], "COMPLETED"))


async def test_cancel_stops_unstarted_nodes_and_waits_for_running_jobs(
    runs: Runs, clock: VirtualClock
) -> None:
    await runs.start("slow:c", {"seconds": 3}, deadline_ms=600_000)
    await clock.advance(1_000)
    found = await read_run(runs.runtime.d1("tsumugi-flows"), "slow:c")
    assert found is not None
    assert {n.id: n.waiting_on for n in found.nodes} == {"wait": [], "then": ["wait"], "later": ["wait"]}
    assert found.run.output is None
    assert await runs.stub("slow:c").cancel() == {"ok": True}
    await clock.advance(100)
    state, nodes = await runs.states("slow:c")
    assert (state, nodes["then"], nodes["later"]) == ("RUNNING", "CANCELLED", "CANCELLED")
    await clock.advance(3_000)
    state, nodes = await runs.states("slow:c")
    assert (state, nodes["wait"]) == ("CANCELLED", "COMPLETED")
    assert await runs.stub("slow:c").cancel() == {"ok": False, "reason": "invalid-state"}


async def test_a_subflow_runs_a_child_run_whose_end_is_its_nodes_state(
    runs: Runs, clock: VirtualClock
) -> None:
    await runs.start("parent:p", {})
    await clock.advance(1_000)
    run, nodes = await runs.read("parent:p")
    assert (run["state"], nodes["sub"]["state"], nodes["sub"]["binding"]) == ("COMPLETED", "COMPLETED", "")
    assert nodes["sub"]["child_run_id"].startswith("leaf:p-sub-")  # the parent's own child (ADR-0115)
    child, child_nodes = await runs.read(nodes["sub"]["child_run_id"])
    assert (child["state"], child["parent_run_id"], child["parent_node_id"]) == (
        "COMPLETED",
        "parent:p",
        "sub",
    )
    job = await runs.env.TSUMUGI.get(child_nodes["x"]["job_id"])
    assert json.loads(job["result"]) == {"from": "parent"}


async def test_subflow_nesting_past_the_limit_fails_up_the_chain(runs: Runs, clock: VirtualClock) -> None:
    await runs.start("l0:n", {})
    await clock.advance(2_000)
    chain = ["l0:n"]
    for _ in range(3):
        chain.append((await runs.read(chain[-1]))[1]["down"]["child_run_id"])
    assert [c.partition(":")[0] for c in chain] == ["l0", "l1", "l2", "l3"]
    _, deepest = await runs.read(chain[-1])
    assert deepest["down"]["error"] == "failed to start child run: subflow nesting exceeded the limit: 3"
    run, nodes = await runs.read("l0:n")
    assert (run["state"], nodes["down"]["error"]) == ("FAILED", f"child run failed: {chain[1]}")


async def test_a_removed_flow_fails_the_run(runs: Runs, clock: VirtualClock, fixture_module: Any) -> None:
    await runs.start("fan:gone", {"items": [1]})
    del fixture_module.TSUMUGI.flows["fan"]  # a deploy without it, before the run's first tick
    await clock.advance(1_000)
    run, nodes = await runs.read("fan:gone")
    assert run["state"] == "FAILED"
    assert {n["error"] for n in nodes.values()} == {"flow is not registered: fan"}


async def test_a_removed_node_fails_at_that_node(
    runs: Runs, clock: VirtualClock, fixture_module: Any
) -> None:
    fixture_module.SEEN.add("k:A")  # b succeeds at once
    await runs.start("chain:n", {"key": "k"})
    spec = fixture_module.TSUMUGI.flows["chain"]  # a deploy without "c" after the run started
    fixture_module.TSUMUGI.flows["chain"] = dataclasses.replace(
        spec, nodes=tuple(n for n in spec.nodes if n.id != "c"), _by_id={}
    )
    await clock.advance(1_000)
    run, nodes = await runs.read("chain:n")
    assert (run["state"], nodes["b"]["state"], nodes["c"]["state"]) == ("FAILED", "COMPLETED", "FAILED")
    assert nodes["c"]["error"] == "node definition is missing: c"


async def test_duplicate_and_stale_job_events_are_ignored(runs: Runs, clock: VirtualClock) -> None:
    await runs.start("chain:e", {"key": "e", "wait": 0})
    await clock.advance(1_000)
    _, nodes = await runs.read("chain:e")
    old_b = nodes["b"]["job_id"]
    await runs.stub("chain:e").retry()
    await clock.advance(1_000)
    stub = runs.stub("chain:e")
    await stub.notify(
        [
            {
                "nodeId": "b",
                "jobId": old_b,
                "state": "FAILED",
                "result": None,
                "error": "stale",
            },  # before resume
            {"nodeId": "a", "jobId": nodes["a"]["job_id"], "state": "FAILED", "result": None, "error": "dup"},
            {"nodeId": "ghost", "jobId": "Echo#0:x", "state": "COMPLETED", "result": "1", "error": None},
        ]
    )
    await clock.advance(1_000)
    run, nodes = await runs.read("chain:e")
    assert run["state"] == "COMPLETED"
    assert {k: (v["state"], v["error"]) for k, v in nodes.items()} == dict.fromkeys(
        "abcd", ("COMPLETED", None)
    )


async def test_restarts_of_the_run_object_and_job_shards_mid_run_lose_no_node(
    runs: Runs, clock: VirtualClock, flows: LocalRuntime
) -> None:
    flows.faults.restart_during_next_alarm(WORKER, "FlowRun", name="fan:restart", n=2)
    await runs.start("fan:restart", {"items": [1, 2, 3, 4, 5]})
    await clock.advance(5)
    flows.faults.restart_durable_objects()  # run and shards, with jobs in flight
    await clock.advance(30)
    flows.faults.restart_durable_objects()
    await clock.advance(10_000)
    run, nodes = await runs.read("fan:restart")
    assert run["state"] == "COMPLETED"
    assert json.loads(nodes["each"]["result"]) == {"total": 5, "succeeded": 5, "failed": 0}
    assert (run["node_total"], run["node_done"]) == (7, 7)


async def test_a_settled_run_is_deleted_after_retention_and_a_failed_one_kept_for_resume(
    runs: Runs, clock: VirtualClock
) -> None:
    await runs.start("fan:keep", {"items": [1]})
    await runs.start("failfan:keep", {"items": []})
    await runs.start("chain:keep", {"key": "q"})
    await clock.advance(1_000)
    assert await runs.stub("fan:keep").state() == "COMPLETED"
    await clock.advance(300_000)
    assert await runs.stub("fan:keep").state() is None  # the object was wiped
    assert await runs.stub("fan:keep").retry() == {"ok": False, "reason": "gone"}
    assert (await runs.read("fan:keep"))[0]["state"] == "COMPLETED"  # the read model keeps it
    assert await runs.stub("chain:keep").state() == "FAILED"


async def test_spawned_children_run_inside_their_parent_and_gate_its_downstream(
    runs: Runs, clock: VirtualClock
) -> None:
    await runs.start("spawny:ok", {"children": {"c0": "Echo", "c1": "Echo"}})
    await clock.advance(1_000)
    run, nodes = await runs.read("spawny:ok")
    assert run["state"] == "COMPLETED"
    assert list(nodes) == ["parent", "after", "parent:c0", "parent:c1"]  # one child per spawn id
    assert {n["origin"] for k, n in nodes.items() if k.startswith("parent:")} == {"spawn"}
    assert nodes["after"]["updated_at"] >= max(
        nodes["parent:c0"]["updated_at"], nodes["parent:c1"]["updated_at"]
    )
    job = await runs.env.TSUMUGI.get(nodes["parent:c1"]["job_id"])
    assert json.loads(job["payload"]) == "payload of c1"


async def test_a_failed_spawned_child_fails_its_parent_for_downstream(
    runs: Runs, clock: VirtualClock
) -> None:
    await runs.start("spawny:bad", {"children": {"ok": "Echo", "bad": "Fail"}})
    await clock.advance(1_000)
    state, nodes = await runs.states("spawny:bad")
    assert (state, nodes) == (
        "FAILED",
        {"parent": "COMPLETED", "after": "SKIPPED", "parent:ok": "COMPLETED", "parent:bad": "FAILED"},
    )


async def test_spawns_of_a_failed_attempt_are_discarded(runs: Runs, clock: VirtualClock) -> None:
    await runs.start("spawny:retry", {"children": {"kept": "Echo"}, "fail_first": True})
    await clock.advance(2_000)
    state, nodes = await runs.states("spawny:retry")
    assert (state, sorted(nodes)) == ("COMPLETED", ["after", "parent", "parent:kept"])


async def test_run_notices_reach_the_flows_bindings_once_per_ending(
    runs: Runs, clock: VirtualClock, fixture_module: Any, flows: LocalRuntime
) -> None:
    flows.faults.restart_during_next_alarm(WORKER, "FlowRun", name="chain:nt", n=3)
    await runs.start("chain:nt", {"key": "nt"})
    await clock.advance(2_000)
    notices = fixture_module.NOTICES
    assert sorted((n["kind"], n["state"]) for n in notices) == [("failure", "FAILED"), ("settled", "FAILED")]
    failure = next(n for n in notices if n["kind"] == "failure")
    assert (failure["run_id"], failure["flow"], failure["node_failed"]) == ("chain:nt", "chain", 1)
    assert failure["failed_nodes"] == [{"id": "b", "error": "NonRetryableError: first time for nt:A"}]
    await runs.stub("chain:nt").retry()
    await clock.advance(2_000)
    assert [(n["kind"], n["state"]) for n in notices[2:]] == [
        ("settled", "COMPLETED")
    ]  # a resumed run ends anew
