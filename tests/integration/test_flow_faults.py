"""Issue 24's flow defects, each shown over the local runtime: a run that hangs, does a node's work twice or
reports a wrong result. Every test here failed before its fix (the closing note of issue 24 lists them).

Items: 1 resume after a failed subflow; 2 a lost answer while starting a child run; 3 a run id started again
after its object was swept; 4 two parents of different flows sharing a local id; 5 resume and the hold of a
STALLED at-most-once node; 6 a node's job retried through the job API; 7 a callable concurrency key the
encoder refuses; 8 a fan-out's summary after a deadline drain and a resume; 9 a refused child after a resume;
11 a caller pinning a node's job. Items 10 and 12 are in tests/api.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from typing import Any

import pytest

from tsumugi_core.ids import format_job_id, shard_name_of
from tsumugi_core.options import EnqueueValidationError
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime
from tsumugi_scheduler import producer_rpc

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


async def test_item1_resuming_a_run_that_failed_in_a_subflow_runs_the_subflow_again(
    runs: Runs, clock: VirtualClock
) -> None:
    await runs.start("subfail:r1", {"key": "s1"})
    await clock.advance(2_000)
    run, nodes = await runs.read("subfail:r1")
    assert (run["state"], nodes["sub"]["state"], nodes["after"]["state"]) == ("FAILED", "FAILED", "SKIPPED")
    first_child = nodes["sub"]["child_run_id"]
    assert await runs.stub("subfail:r1").retry() == {"ok": True}
    await clock.advance(3_000)
    run, nodes = await runs.read("subfail:r1")
    assert (run["state"], nodes["sub"]["state"], nodes["after"]["state"]) == (
        "COMPLETED",
        "COMPLETED",
        "COMPLETED",
    )
    assert nodes["sub"]["child_run_id"] != first_child  # a new child run for the node's new attempt
    child, child_nodes = await runs.read(nodes["sub"]["child_run_id"])
    assert (child["state"], child_nodes["x"]["state"], child["parent_run_id"]) == (
        "COMPLETED",
        "COMPLETED",
        "subfail:r1",
    )


async def test_item2_a_lost_answer_while_starting_a_child_run_does_not_fail_the_subflow(
    runs: Runs, clock: VirtualClock, flows: LocalRuntime
) -> None:
    await runs.start("parent:lost", {})
    flows.faults.fail_next_rpc(
        WORKER, "FlowRun", method="start", after_call=True
    )  # the child starts; its answer is lost
    await clock.advance(15_000)
    run, nodes = await runs.read("parent:lost")
    assert (run["state"], nodes["sub"]["state"], nodes["sub"]["error"]) == ("COMPLETED", "COMPLETED", None)


async def test_item3_a_run_id_started_again_after_its_object_was_swept_runs_its_nodes_again(
    runs: Runs, clock: VirtualClock
) -> None:
    await runs.start("fan:same", {"items": [1, 2]})
    await clock.advance(1_000)
    first_run, first = await runs.read("fan:same")
    assert first_run["state"] == "COMPLETED"
    await clock.advance(300_000)  # wiped after its retention; its finished jobs stay in their shards
    assert await runs.stub("fan:same").state() is None
    await runs.start("fan:same", {"items": [1, 2]})
    await clock.advance(2_000)
    run, nodes = await runs.read("fan:same")
    assert (run["state"], run["created_at"] > first_run["created_at"]) == ("COMPLETED", True)
    assert {k: (v["state"], v["error"]) for k, v in nodes.items()} == dict.fromkeys(
        ["each", "after", "each:k1", "each:k2"], ("COMPLETED", None)
    )
    assert nodes["after"]["job_id"] != first["after"]["job_id"]  # its own jobs, not the old run's


async def test_item4_parents_of_different_flows_with_one_local_id_get_their_own_child_runs(
    runs: Runs, clock: VirtualClock
) -> None:
    await runs.start("pa:order-42", {})
    await runs.start("pb:order-42", {})
    await clock.advance(2_000)
    a_run, a = await runs.read("pa:order-42")
    b_run, b = await runs.read("pb:order-42")
    assert (a_run["state"], b_run["state"]) == ("COMPLETED", "COMPLETED")
    assert a["sub"]["child_run_id"] != b["sub"]["child_run_id"]
    for parent, nodes in (("pa", a), ("pb", b)):
        child, child_nodes = await runs.read(nodes["sub"]["child_run_id"])
        assert child["parent_run_id"] == f"{parent}:order-42"
        job = await runs.env.TSUMUGI.get(child_nodes["x"]["job_id"])
        assert json.loads(job["result"]) == {"from": parent}


@pytest.mark.parametrize(
    ("deadline_ms", "ended", "final"),
    [
        (None, "STALLED", ("COMPLETED", "COMPLETED", 2)),
        (
            1_000,
            "CANCELLED",
            ("FAILED", "FAILED", 1),
        ),  # the resumed run's deadline (1 s) passes while its job waits
    ],
)
async def test_item5_resume_holds_an_at_most_once_node_whose_attempt_may_still_run(
    runs: Runs,
    clock: VirtualClock,
    fixture_module: Any,
    deadline_ms: int | None,
    ended: str,
    final: tuple[str, str, int],
) -> None:
    # STALLED: the consumer gave up at the 2 s timeout, the outcome unknown. CANCELLED: the deadline drained the
    # run, asking the running attempt to stop, and the consumer then gave up on it. Either way it still runs.
    await runs.start("stall:s", {}, deadline_ms=deadline_ms)
    for _ in range(60):
        await clock.advance(500)
        if (await runs.read("stall:s"))[0]["state"] == "FAILED":
            break
    run, nodes = await runs.read("stall:s")
    assert (run["state"], nodes["once"]["state"]) == ("FAILED", ended)
    assert len(fixture_module.RUNS) == 1
    assert fixture_module.RUNS[0][2] is None  # the execution still runs
    assert await runs.stub("stall:s").retry() == {"ok": True}
    await clock.advance(60_000)
    executions = fixture_module.RUNS
    for earlier, later in itertools.pairwise(executions):
        assert earlier[2] is not None, executions
        assert later[1] >= earlier[2], executions  # never two at once
    await clock.advance(16 * 60_000)  # past the attempt's hard end (ADR-0051)
    await clock.advance(60_000)
    state, nodes = await runs.states("stall:s")
    assert (state, nodes["once"], len(fixture_module.RUNS)) == final


async def test_a_resumed_at_most_once_nodes_step_that_began_is_never_run_again(
    runs: Runs, clock: VirtualClock, fixture_module: Any
) -> None:
    # The node's job STALLED inside its step "work" (the outcome unknown). The resume gives the node a new job,
    # which takes the old job's steps (ADR-0176): it ran the step a second time.
    await runs.start("stallstep:s", {})
    for _ in range(60):
        await clock.advance(500)
        if (await runs.read("stallstep:s"))[0]["state"] == "FAILED":
            break
    _, nodes = await runs.read("stallstep:s")
    stalled_job = nodes["once"]["job_id"]
    assert nodes["once"]["state"] == "STALLED"
    assert await runs.stub("stallstep:s").retry() == {"ok": True}
    await clock.advance(18 * 60_000)  # past the stalled attempt's hard end, when the new job may start
    run, nodes = await runs.read("stallstep:s")
    assert len(fixture_module.RUNS) == 1, fixture_module.RUNS
    assert nodes["once"]["job_id"] != stalled_job
    assert (run["state"], nodes["once"]["state"]) == ("FAILED", "FAILED")
    assert "StepOutcomeUnknownError: step work of at-most-once job" in nodes["once"]["error"]


def _step_rows(runtime: LocalRuntime, job_id: str) -> list[str]:
    """The names of the step rows ``job_id``'s shard holds for it, job or no job (read beside the object)."""
    for host in runtime.namespace(WORKER, "FlowJobShard").objects():
        if host.id.name == shard_name_of(job_id):
            sql = host.storage().sql
            rows = sql.runtime_exec("SELECT name FROM step WHERE job_id = ? ORDER BY name", job_id).toArray()
            return [str(r["name"]) for r in rows]
    return []


def _refuse_jobs_of(monkeypatch: pytest.MonkeyPatch, binding: str) -> dict[str, bool]:
    """While ``gate["on"]``, the scheduler's service refuses every job of ``binding`` (as when a deploy changed
    its performer's payload type and the node's payload no longer fits)."""
    real = producer_rpc.SchedulerService._prepare_item  # pyright: ignore[reportPrivateUsage]
    gate = {"on": True}

    async def refusing(self: Any, item: Any, given: Any, where: str, *, internal: bool = False) -> Any:
        if gate["on"] and item.binding == binding:
            raise EnqueueValidationError(f"{where}.payload", "does not fit the performer's payload type")
        return await real(self, item, given, where, internal=internal)

    monkeypatch.setattr(producer_rpc.SchedulerService, "_prepare_item", refusing)
    return gate


async def _stalled_in_its_step(runs: Runs, clock: VirtualClock, run_id: str) -> str:
    await runs.start(run_id, {})
    for _ in range(60):
        await clock.advance(500)
        if (await runs.read(run_id))[0]["state"] == "FAILED":
            break
    _, nodes = await runs.read(run_id)
    assert nodes["once"]["state"] == "STALLED"
    return str(nodes["once"]["job_id"])


async def test_a_resumed_nodes_refused_job_leaves_no_steps_behind(
    runs: Runs, clock: VirtualClock, flows: LocalRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ADR-0176 copied the old job's steps to the new job's id before the enqueue; a refused enqueue left them
    # under an id no job holds, which no sweep ever reaches.
    stalled = await _stalled_in_its_step(runs, clock, "stallstep:o")
    assert _step_rows(flows, stalled) == ["work"]
    _refuse_jobs_of(monkeypatch, "Hang")
    assert await runs.stub("stallstep:o").retry() == {"ok": True}
    await clock.advance(2_000)
    _, nodes = await runs.read("stallstep:o")
    refused = str(nodes["once"]["job_id"])
    assert (nodes["once"]["state"], refused != stalled) == ("FAILED", True)
    assert nodes["once"]["error"].startswith("invalid job: payload does not fit")
    assert await runs.env.TSUMUGI.get(refused) is None  # no job was stored
    assert _step_rows(flows, refused) == []  # and no step of it either
    assert _step_rows(flows, stalled) == ["work"]  # the old job keeps its own


async def test_a_node_resumed_after_a_refused_resume_still_never_runs_its_unknown_step_again(
    runs: Runs, clock: VirtualClock, fixture_module: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The refused job was never stored: the next resume's job takes the steps of the job before it.
    await _stalled_in_its_step(runs, clock, "stallstep:r")
    refusing = _refuse_jobs_of(monkeypatch, "Hang")
    assert await runs.stub("stallstep:r").retry() == {"ok": True}
    await clock.advance(2_000)
    assert (await runs.states("stallstep:r"))[1]["once"] == "FAILED"
    refusing["on"] = False  # the code is fixed
    assert await runs.stub("stallstep:r").retry() == {"ok": True}
    await clock.advance(18 * 60_000)  # past the stalled attempt's hard end, when the new job may start
    run, nodes = await runs.read("stallstep:r")
    assert len(fixture_module.RUNS) == 1, fixture_module.RUNS
    assert (run["state"], nodes["once"]["state"]) == ("FAILED", "FAILED")
    assert "StepOutcomeUnknownError: step work of at-most-once job" in nodes["once"]["error"]


async def test_item6_a_nodes_job_is_not_retried_behind_its_runs_back(
    runs: Runs, clock: VirtualClock, fixture_module: Any
) -> None:
    await runs.start("chain:j", {"key": "j"})
    await clock.advance(2_000)
    run, nodes = await runs.read("chain:j")
    assert (run["state"], nodes["b"]["state"]) == ("FAILED", "FAILED")
    answer = await runs.env.TSUMUGI.retry(nodes["b"]["job_id"])
    assert answer["ok"] is False
    assert "chain:j" in answer.get("error", "")  # the refusal names the run to resume
    await clock.advance(2_000)
    job = await runs.env.TSUMUGI.get(nodes["b"]["job_id"])
    assert job["state"] == "FAILED"  # the job did not run behind the run's back
    assert await runs.stub("chain:j").retry() == {"ok": True}
    await clock.advance(2_000)
    state, states = await runs.states("chain:j")
    assert (state, states) == ("COMPLETED", dict.fromkeys("abcd", "COMPLETED"))


async def test_item7_a_concurrency_key_the_encoder_refuses_fails_its_node_not_every_tick(
    runs: Runs, clock: VirtualClock
) -> None:
    await runs.start("badkey:k", {"key": 2})  # a complex number: no JSON for it
    await clock.advance(2_000)
    run, nodes = await runs.read("badkey:k")
    assert (run["state"], nodes["keyed"]["state"], nodes["other"]["state"]) == (
        "FAILED",
        "FAILED",
        "COMPLETED",
    )
    assert nodes["keyed"]["error"].startswith("input failed: concurrency_key ")


async def test_item8_a_fan_out_drained_by_a_deadline_sums_its_children_again_after_a_resume(
    runs: Runs, clock: VirtualClock, fixture_module: Any
) -> None:
    fixture_module.GATE["closed"] = True
    await runs.start("gatefan:d", {"items": ["p", "q"]}, deadline_ms=2_000)
    await clock.advance(8_000)
    run, nodes = await runs.read("gatefan:d")
    assert (run["state"], json.loads(nodes["each"]["result"])) == (
        "FAILED",
        {"total": 2, "succeeded": 0, "failed": 2},
    )
    fixture_module.GATE["closed"] = False
    assert await runs.stub("gatefan:d").retry() == {"ok": True}
    await clock.advance(3_000)
    run, nodes = await runs.read("gatefan:d")
    summary = {"total": 2, "succeeded": 2, "failed": 0}
    assert (run["state"], json.loads(nodes["each"]["result"])) == ("COMPLETED", summary)
    job = await runs.env.TSUMUGI.get(nodes["after"]["job_id"])
    assert json.loads(job["result"]) == summary  # downstream got the new summary


async def test_item9_a_child_refused_for_its_payload_stays_failed_after_a_resume(
    runs: Runs, clock: VirtualClock
) -> None:
    await runs.start("bigfan:b", {"items": [1, "<150 KB text>"], "key": "b9"})
    await clock.advance(2_000)
    run, nodes = await runs.read("bigfan:b")
    assert (run["state"], nodes["each:1"]["state"], nodes["flaky"]["state"]) == ("FAILED", "FAILED", "FAILED")
    assert await runs.stub("bigfan:b").retry() == {"ok": True}
    await clock.advance(2_000)
    run, nodes = await runs.read("bigfan:b")
    assert (run["state"], nodes["flaky"]["state"]) == ("COMPLETED", "COMPLETED")
    assert (nodes["each:1"]["state"], nodes["each:1"]["job_id"]) == ("FAILED", None)  # never run with null
    assert nodes["each:1"]["error"].startswith("invalid job: payload must be at most 102400 bytes")
    assert json.loads(nodes["each"]["result"]) == {"total": 2, "succeeded": 1, "failed": 1}


def _tables_of(runtime: LocalRuntime, run_id: str) -> list[str]:
    """The tables the Run object of ``run_id`` holds (read beside the object, as the simulator does)."""
    for host in runtime.namespace(WORKER, "FlowRun").objects():
        if host.id.name == run_id:
            rows = (
                host.storage()
                .sql.runtime_exec(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != '_cf_alarm'"
                )
                .toArray()
            )
            return sorted(str(r["name"]) for r in rows)
    return []


async def test_item10_asking_a_swept_run_about_itself_does_not_bring_its_storage_back(
    runs: Runs, clock: VirtualClock, flows: LocalRuntime
) -> None:
    await runs.start("fan:swept", {"items": [1]})
    await clock.advance(1_000)
    assert _tables_of(flows, "fan:swept") != []
    await clock.advance(300_000)
    assert _tables_of(flows, "fan:swept") == []
    stub = runs.stub("fan:swept")
    assert await stub.state() is None  # what a flow schedule with overlap "skip" asks at each occurrence
    assert await stub.cancel() == {"ok": False, "reason": "gone"}
    assert await stub.retry() == {"ok": False, "reason": "gone"}
    await stub.notify(
        [{"nodeId": "each", "jobId": "Echo#0:x", "state": "COMPLETED", "result": "1", "error": None}]
    )
    await stub.notify_child("sub", "leaf:x", "COMPLETED")
    await clock.advance(10_000)
    assert _tables_of(flows, "fan:swept") == []


def _old_node_job_id(binding: str, run_id: str, node_id: str, gen: int) -> str:
    """How a node's job id was derived before issue 24: from public facts only (a caller could compute it)."""
    digest = hashlib.blake2b(f"{run_id}\x00{node_id}\x00{gen}".encode(), digest_size=12).hexdigest()
    return format_job_id(binding, 0, f"n{digest}")


async def test_item11_a_caller_cannot_pin_a_nodes_job_with_its_run(runs: Runs, clock: VirtualClock) -> None:
    forged = {
        "binding": "Echo",
        "payload": "999 of 999",
        "id": _old_node_job_id("Echo", "chain:h", "a", 0),
        "runId": "chain:h",
        "nodeId": "a",
    }
    with pytest.raises(Exception, match=r"items\[0\]\.run_id is set only by the run a job belongs to"):
        await runs.env.TSUMUGI.enqueue_many([forged])


async def test_item11_a_job_pinned_at_a_nodes_old_id_is_not_adopted_by_the_run(
    runs: Runs, clock: VirtualClock, fixture_module: Any
) -> None:
    fixture_module.SEEN.add("h:A")  # b succeeds at once
    squatter = {"binding": "Echo", "payload": "999", "id": _old_node_job_id("Echo", "chain:h", "a", 0)}
    await runs.env.TSUMUGI.enqueue_many([squatter])
    await clock.advance(1_000)
    await runs.start("chain:h", {"key": "h"})
    await clock.advance(2_000)
    run, nodes = await runs.read("chain:h")
    assert (run["state"], nodes["a"]["job_id"] != squatter["id"]) == ("COMPLETED", True)
    job = await runs.env.TSUMUGI.get(nodes["c"]["job_id"])
    assert json.loads(job["result"]) == "ok h:A"
