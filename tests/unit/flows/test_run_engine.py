"""The Run engine without a Durable Object (ADR-0117): its commands over stdlib sqlite3 with a fixed clock.

The host (run/host.py) only carries commands in and does the I/O a tick hands out; these tests play the
host's part by hand: they send nothing, they report what the host would have done.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from tsumugi_core.testing import FixedClock
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_performer import JobContext, Performer
from tsumugi_performer.flow import FlowBuilder, flow
from tsumugi_scheduler.run import host as run_host
from tsumugi_scheduler.run.engine import RunEngine, RunError, TickOutcome
from tsumugi_scheduler.run.rows import JobEvent, ParentLink, StartRun
from tsumugi_scheduler.run.settings import RunSettings


class Echo(Performer[Any, Any]):
    async def perform(self, payload: Any, ctx: JobContext) -> Any:
        return payload


class Leaf(Performer[Any, Any]):
    async def perform(self, payload: Any, ctx: JobContext) -> Any:
        return payload


@flow("leafy", dict)
def leafy(f: FlowBuilder[dict[str, Any]]) -> None:
    f.node("x", Leaf, input=lambda run, deps: run)


@flow("shape", dict)
def shape(f: FlowBuilder[dict[str, Any]]) -> None:
    first = f.node("first", Echo, input=lambda run, deps: run["n"])
    each = f.fan_out(
        "each", Echo, after=[first], over=lambda run, deps: run["items"], input=lambda item, run, index: item
    )
    f.node("last", Echo, after=[each], input=lambda run, deps: deps[each])
    f.subflow("sub", leafy, input=lambda run, deps: {"from": "shape"})


@flow("badfan", dict)
def badfan(f: FlowBuilder[dict[str, Any]]) -> None:
    f.fan_out(
        "each",
        Echo,
        over=lambda run, deps: run["items"],
        input=lambda item, run, index: item,
        concurrency_key=lambda item, index: complex(item, index),  # type: ignore[arg-type, return-value]
    )
    f.node("other", Echo, input=lambda run, deps: {"no": complex(1, 2)})  # no JSON form


@flow("badsub", dict)
def badsub(f: FlowBuilder[dict[str, Any]]) -> None:
    f.subflow("sub", leafy, input=lambda run, deps: {"n": float("inf")})  # POST /api/runs refuses it


class Ids:
    def __init__(self) -> None:
        self.made = 0

    def new_local_id(self) -> str:
        self.made += 1
        return f"nonce{self.made}"


@pytest.fixture
def sql() -> Iterator[SqlStorage]:
    with SqlStorage() as storage:
        yield storage


def engine_on(sql: SqlStorage, clock: FixedClock, ids: Ids | None = None) -> RunEngine:
    return RunEngine(
        sql,
        flows={"shape": shape.spec, "leafy": leafy.spec, "badfan": badfan.spec, "badsub": badsub.spec},
        settings=RunSettings(),
        shards_of=lambda binding: 1,
        clock=clock,
        ids=ids or Ids(),
    )


def tables(sql: SqlStorage) -> list[str]:
    """The object's tables, read beside the SQL API (workerd would refuse sqlite_master to the object)."""
    rows = sql._conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    )  # pyright: ignore[reportPrivateUsage]
    return [str(r[0]) for r in rows.fetchall()]


def delete_all(sql: SqlStorage) -> None:
    """What ``ctx.storage.deleteAll()`` leaves: no table."""
    for name in tables(sql):
        sql._conn.execute(f'DROP TABLE "{name}"')  # pyright: ignore[reportPrivateUsage]


def finish(
    engine: RunEngine, job_ids: dict[str, str], state: str = "COMPLETED", result: str = '"ok"'
) -> None:
    events = [
        JobEvent(node_id=node, job_id=job, state=state, result=result if state == "COMPLETED" else None)
        for node, job in job_ids.items()
    ]
    engine.notify(events)


def tick(engine: RunEngine) -> dict[str, str]:
    """One tick as the host runs it, every start sent: the node ids and job ids it enqueued."""
    plan = engine.plan_tick()
    if plan is None:
        return {}
    sent = [j.node_id for j in plan.jobs] + [c.node_id for c in plan.children]
    engine.finish_tick(plan, TickOutcome(sent=sent))
    return {j.node_id: str(j.item["id"]) for j in plan.jobs}


def test_a_run_goes_from_start_to_its_sweep_with_the_host_doing_the_io(sql: SqlStorage) -> None:
    clock = FixedClock(1_000)
    engine = engine_on(sql, clock)
    assert engine.state() is None
    assert engine.start(StartRun(run_id="shape:r", flow="shape", input_json='{"n": 1, "items": [1, 2]}'))
    assert not engine.start(StartRun(run_id="shape:r", flow="shape", input_json="{}"))  # idempotent
    plan = engine.plan_tick()
    assert plan is not None
    assert [j.node_id for j in plan.jobs] == ["first"]
    assert [(c.node_id, c.run.flow, c.run.parent, c.run.depth) for c in plan.children] == [
        ("sub", "leafy", ParentLink(run_id="shape:r", node_id="sub"), 1)
    ]
    item = plan.jobs[0].item
    assert (item["runId"], item["nodeId"], item["payload"], item["partitionKey"]) == (
        "shape:r",
        "first",
        1,
        "shape:r",
    )
    engine.finish_tick(plan, TickOutcome(sent=["first", "sub"]))
    assert tick(engine) == {}  # nothing new until an event
    finish(engine, {"first": str(item["id"])})
    children = tick(engine)
    assert sorted(children) == ["each:0", "each:1"]
    finish(engine, children)
    last = tick(engine)
    assert list(last) == ["last"]
    finish(engine, last)
    assert engine.notify_child("sub", plan.children[0].run.run_id, "COMPLETED")
    tick(engine)
    assert engine.state() == "COMPLETED"
    projection = engine.projection(500)
    assert projection is not None
    assert projection.run is not None
    assert projection.run[1]["node_total"] == 6
    engine.projected(projection.up_to_seq)
    assert engine.projection(500) is None
    ending = engine.ending()  # no parent, no notice bindings: it owes an empty round of notices
    assert ending is not None
    assert (ending.parent, ending.notices) == (None, [])
    assert not engine.sweep_due()
    engine.noticed(ending.resumes)
    assert engine.ending() is None
    clock.advance(300_000)
    assert engine.sweep_due()


def test_asking_an_object_without_a_run_creates_nothing(sql: SqlStorage) -> None:
    engine = engine_on(sql, FixedClock(0))
    assert engine.state() is None
    assert msgspec.to_builtins(engine.cancel()) == {"ok": False, "reason": "gone"}
    assert msgspec.to_builtins(engine.retry()) == {"ok": False, "reason": "gone"}
    assert engine.notify([JobEvent(node_id="a", job_id="Echo#0:x", state="COMPLETED")]) is None
    assert not engine.notify_child("sub", "leafy:x", "COMPLETED")
    assert engine.plan_tick() is None
    assert engine.projection(10) is None
    assert engine.next_alarm(True) is None
    assert tables(sql) == []


def test_starts_a_run_refuses_say_why(sql: SqlStorage) -> None:
    engine = engine_on(sql, FixedClock(0))
    with pytest.raises(RunError, match="flow is not registered: nope"):
        engine.start(StartRun(run_id="nope:r", flow="nope", input_json="{}"))
    with pytest.raises(RunError, match="subflow nesting exceeded the limit: 3"):
        engine.start(StartRun(run_id="leafy:r", flow="leafy", input_json="{}", depth=4))
    assert tables(sql) == []


def test_a_run_id_started_again_gets_new_job_ids(sql: SqlStorage) -> None:
    clock = FixedClock(0)
    engine = engine_on(sql, clock)
    engine.start(StartRun(run_id="leafy:r", flow="leafy", input_json="{}"))
    first = tick(engine)
    delete_all(sql)
    engine.swept()
    engine.start(StartRun(run_id="leafy:r", flow="leafy", input_json="{}"))
    assert tick(engine)["x"] != first["x"]


def test_a_resumed_stalled_at_most_once_node_starts_no_earlier_than_its_hold(sql: SqlStorage) -> None:
    clock = FixedClock(0)
    engine = engine_on(sql, clock)
    engine.start(StartRun(run_id="leafy:r", flow="leafy", input_json="{}"))
    job = tick(engine)["x"]
    engine.notify([JobEvent(node_id="x", job_id=job, state="STALLED", error="unknown", hold_until=900_000)])
    tick(engine)
    assert engine.state() == "FAILED"
    clock.advance(10_000)
    assert engine.retry().ok
    plan = engine.plan_tick()
    assert plan is not None
    assert [(j.node_id, j.item["runAt"], j.item["id"] != job) for j in plan.jobs] == [("x", 900_000, True)]
    assert plan.jobs[0].steps_from == job  # the new job takes the stalled job's steps first (ADR-0176)


def test_each_resume_passes_the_steps_on_from_the_job_before(sql: SqlStorage) -> None:
    engine = engine_on(sql, FixedClock(0))
    engine.start(StartRun(run_id="leafy:r", flow="leafy", input_json="{}"))
    first = tick(engine)["x"]
    finish(engine, {"x": first}, state="FAILED")
    tick(engine)
    assert engine.retry().ok
    second = engine.plan_tick()
    assert second is not None
    assert [(j.item["id"] != first, j.steps_from) for j in second.jobs] == [(True, first)]
    engine.finish_tick(second, TickOutcome(sent=["x"]))
    finish(engine, {"x": str(second.jobs[0].item["id"])}, state="FAILED")
    tick(engine)
    assert engine.retry().ok
    third = engine.plan_tick()
    assert third is not None
    assert [j.steps_from for j in third.jobs] == [second.jobs[0].item["id"]]


def test_a_job_refused_at_its_enqueue_passes_no_steps_on_the_job_before_it_does(sql: SqlStorage) -> None:
    # The refused job was never stored: the next resume's job takes the steps of the stalled one (ADR-0184).
    engine = engine_on(sql, FixedClock(0))
    engine.start(StartRun(run_id="leafy:r", flow="leafy", input_json="{}"))
    stalled = tick(engine)["x"]
    engine.notify([JobEvent(node_id="x", job_id=stalled, state="STALLED", error="unknown")])
    tick(engine)
    assert engine.retry().ok
    second = engine.plan_tick()
    assert second is not None
    assert [j.steps_from for j in second.jobs] == [stalled]
    engine.finish_tick(second, TickOutcome(refused={"x": "invalid job: payload does not fit"}))
    assert engine.state() == "FAILED"
    assert engine.retry().ok
    third = engine.plan_tick()
    assert third is not None
    assert [j.steps_from for j in third.jobs] == [stalled]


def test_a_job_known_only_from_its_report_passes_its_steps_on(sql: SqlStorage) -> None:
    # Its enqueue was not confirmed (the tick failed after sending it), but it reported: it was stored.
    engine = engine_on(sql, FixedClock(0))
    engine.start(StartRun(run_id="leafy:r", flow="leafy", input_json="{}"))
    plan = engine.plan_tick()
    assert plan is not None
    (job,) = [str(j.item["id"]) for j in plan.jobs]
    engine.notify([JobEvent(node_id="x", job_id=job, state="STALLED", error="unknown")])
    tick(engine)
    assert engine.state() == "FAILED"
    assert engine.retry().ok
    resumed = engine.plan_tick()
    assert resumed is not None
    assert [j.steps_from for j in resumed.jobs] == [job]


def test_a_subflows_run_is_resumed_only_through_its_parent(sql: SqlStorage) -> None:
    engine = engine_on(sql, FixedClock(0))
    parent = ParentLink(run_id="shape:r", node_id="sub")
    engine.start(StartRun(run_id="leafy:c", flow="leafy", input_json="{}", parent=parent, depth=1))
    job = tick(engine)["x"]
    finish(engine, {"x": job}, state="FAILED")
    tick(engine)
    assert engine.state() == "FAILED"
    # The parent's node already FAILED with it, and resuming the parent starts a new child: alone, this one
    # would do the work again and leave its parent FAILED on a child that COMPLETED.
    answer = engine.retry()
    assert (answer.ok, answer.reason) == (False, "invalid-state")
    assert (
        answer.error
        == "run leafy:c is the subflow of node sub of run shape:r: resume that run to run it again"
    )
    assert engine.state() == "FAILED"


def test_a_start_the_child_refuses_fails_its_node_and_the_run_settles(sql: SqlStorage) -> None:
    engine = engine_on(sql, FixedClock(0))
    engine.start(StartRun(run_id="shape:r", flow="shape", input_json='{"n": 1, "items": []}'))
    plan = engine.plan_tick()
    assert plan is not None
    engine.finish_tick(
        plan, TickOutcome(sent=["first"], refused={"sub": "failed to start child run: nesting"})
    )
    node = engine.store.node("sub")
    assert node is not None
    assert (node.state, node.error) == ("FAILED", "failed to start child run: nesting")


def test_mapping_answers_that_cannot_make_a_job_fail_their_node_with_the_reason(sql: SqlStorage) -> None:
    engine = engine_on(sql, FixedClock(0))
    engine.start(StartRun(run_id="badfan:r", flow="badfan", input_json='{"items": [1]}'))
    assert tick(engine) == {}
    failed = {n.id: (n.state, n.error) for n in engine.store.nodes()}
    assert failed["each"] == ("FAILED", "fan-out failed: concurrency_key must be a string, got complex")
    assert failed["other"][0] == "FAILED"
    assert failed["other"][1] == "input failed: TypeError: Encoding objects of type complex is unsupported"


def test_a_child_input_a_run_could_not_hold_fails_its_node_and_starts_no_child(sql: SqlStorage) -> None:
    engine = engine_on(sql, FixedClock(0))
    engine.start(StartRun(run_id="badsub:r", flow="badsub", input_json="{}"))
    assert tick(engine) == {}
    node = engine.store.node("sub")
    assert node is not None
    assert node.state == "FAILED"
    assert node.error is not None
    assert node.error.startswith("input failed: input.n must be a finite number")
    assert node.child_run_id is None  # it was started with the input sent as null


def test_the_host_holds_no_sql_of_its_own() -> None:
    tree = ast.parse(inspect.getsource(run_host))
    calls = {
        n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
    }
    assert calls.isdisjoint({"exec", "transaction_sync", "atomically"})
    texts = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    assert not [
        t for t in texts if t.lstrip().upper().startswith(("SELECT ", "INSERT ", "UPDATE ", "DELETE "))
    ]
