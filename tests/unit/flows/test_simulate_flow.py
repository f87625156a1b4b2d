"""simulate_flow: the production advance in memory, fan-out from over, results and failures injected."""

from __future__ import annotations

import doctest
from typing import Any

import pytest

import tsumugi_core.flow_advance
import tsumugi_core.flow_simulate
import tsumugi_core.flow_spec
import tsumugi_performer.flow
from tests.unit.flows.example_flows import Names, demo
from tsumugi_core.flow_simulate import SimulationNodeInfo, simulate_flow
from tsumugi_core.flow_spec import FlowSpec, NodeKind, NodeSpec


def test_fan_out_runs_a_child_per_item_in_order_and_passes_the_summary_on() -> None:
    outcome = simulate_flow(
        demo, Names(names=["a", "b"]), results=lambda n: n.payload["names"] if n.id == "list" else "ok"
    )
    assert [n.id for n in outcome.nodes] == ["list", "greet:0", "greet:1", "greet", "report"]
    assert [n.payload for n in outcome.nodes[1:3]] == ["a", "b"]
    assert outcome.nodes[3].result == {"total": 2, "succeeded": 2, "failed": 0}
    assert outcome.nodes[4].payload == {"total": 2, "succeeded": 2, "failed": 0}
    assert outcome.state == "COMPLETED"


def test_an_empty_fan_out_completes_with_a_zero_summary() -> None:
    outcome = simulate_flow(demo, {"names": []}, results={"list": []})
    assert outcome.nodes[1].result == {"total": 0, "succeeded": 0, "failed": 0}
    assert outcome.state == "COMPLETED"


def test_a_failing_child_is_counted_and_a_failing_root_skips_downstream() -> None:
    counted = simulate_flow(demo, {"names": ["a", "b"]}, results={"list": ["a", "b"]}, fails=["greet:1"])
    assert counted.nodes[3].result == {"total": 2, "succeeded": 1, "failed": 1}
    assert counted.state == "COMPLETED"
    failed = simulate_flow(demo, {"names": ["a"]}, fails=["list"])
    assert [(n.id, n.state) for n in failed.nodes] == [
        ("list", "FAILED"),
        ("greet", "SKIPPED"),
        ("report", "SKIPPED"),
    ]
    assert failed.state == "FAILED"


def test_the_flow_modules_docstring_examples_run() -> None:
    for module in (
        tsumugi_core.flow_spec,
        tsumugi_core.flow_advance,
        tsumugi_core.flow_simulate,
        tsumugi_performer.flow,
    ):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0, module.__name__
        assert result.failed == 0, module.__name__


# Fan-out keys, item payloads, bindings and parents, results, subflows and the round bound. Shapes are built
# as `FlowSpec` values directly, so the mapping functions see the JSON-shaped values the simulation passes
# them.


def _outline(outcome: Any) -> list[tuple[str, str, str, Any, Any, str | None]]:
    return [(n.id, n.binding, n.state, n.payload, n.result, n.parent) for n in outcome.nodes]


def test_fan_out_children_take_their_key_payload_binding_and_parent() -> None:
    spec = FlowSpec(
        name="keys",
        nodes=(
            NodeSpec(
                id="m",
                kind=NodeKind.FAN_OUT,
                binding="Mail",
                over=lambda run, deps: run["to"],
                key=lambda item, index: f"{item}-{index}",
                item_input=lambda item, run, index: {"to": item, "n": index, "from": run["from"]},
            ),
        ),
    )
    outcome = simulate_flow(spec, {"to": ["ann", "bo"], "from": "me"}, results=lambda n: n.payload["n"] * 10)
    assert _outline(outcome) == [
        ("m:ann-0", "Mail", "COMPLETED", {"to": "ann", "n": 0, "from": "me"}, 0, "m"),
        ("m:bo-1", "Mail", "COMPLETED", {"to": "bo", "n": 1, "from": "me"}, 10, "m"),
        ("m", "Mail", "COMPLETED", None, {"total": 2, "succeeded": 2, "failed": 0}, None),
    ]
    assert outcome.state == "COMPLETED"


def test_fan_out_children_without_item_input_get_no_payload_and_are_keyed_by_index() -> None:
    spec = FlowSpec(
        name="bare",
        nodes=(NodeSpec(id="m", kind=NodeKind.FAN_OUT, binding="Tick", over=lambda run, deps: ["x", "y"]),),
    )
    outcome = simulate_flow(spec, None)
    assert _outline(outcome)[:2] == [
        ("m:0", "Tick", "COMPLETED", None, None, "m"),
        ("m:1", "Tick", "COMPLETED", None, None, "m"),
    ]


def test_without_results_every_job_completes_with_none_and_a_results_function_sees_the_binding() -> None:
    spec = FlowSpec(
        name="plain",
        nodes=(
            NodeSpec(id="a", kind=NodeKind.JOB, binding="Alpha", input=lambda run, deps: run),
            NodeSpec(id="b", kind=NodeKind.JOB, binding="Beta", after=("a",), input=lambda run, deps: deps),
        ),
    )
    outcome = simulate_flow(spec, 7)
    assert _outline(outcome) == [
        ("a", "Alpha", "COMPLETED", 7, None, None),
        ("b", "Beta", "COMPLETED", {"a": None}, None, None),
    ]
    seen: list[SimulationNodeInfo] = []
    told = simulate_flow(spec, 7, results=lambda n: seen.append(n) or n.binding.lower())
    assert [(n.id, n.binding, n.payload) for n in seen] == [("a", "Alpha", 7), ("b", "Beta", {"a": "alpha"})]
    assert [n.result for n in told.nodes] == ["alpha", "beta"]


def test_a_subflow_node_completes_without_running_its_child_flow() -> None:
    spec = FlowSpec(
        name="parent",
        nodes=(
            NodeSpec(id="s", kind=NodeKind.SUBFLOW, binding="", subflow="child", input=lambda run, deps: run),
            NodeSpec(
                id="after", kind=NodeKind.JOB, binding="Next", after=("s",), input=lambda run, deps: deps
            ),
        ),
    )
    asked: list[str] = []
    outcome = simulate_flow(spec, {"x": 1}, results=lambda n: asked.append(n.id) or "r")
    assert _outline(outcome) == [
        ("s", "", "COMPLETED", None, None, None),
        ("after", "Next", "COMPLETED", {"s": None}, "r", None),
    ]
    assert asked == ["after"]  # the child run is not simulated: nobody is asked for its result
    assert outcome.state == "COMPLETED"
    mapped = simulate_flow(spec, {"x": 1}, results={"s": "ignored"})
    assert [(n.id, n.result) for n in mapped.nodes] == [("s", None), ("after", None)]


def _chain(fan_outs: int, jobs: int) -> FlowSpec:
    """``fan_outs`` empty fan-outs one after the other (two rounds each: expand, aggregate), then ``jobs`` jobs."""
    nodes: list[NodeSpec] = []
    for i in range(fan_outs + jobs):
        after = (nodes[-1].id,) if nodes else ()
        if i < fan_outs:
            nodes.append(
                NodeSpec(
                    id=f"n{i}", kind=NodeKind.FAN_OUT, binding="Step", after=after, over=lambda run, deps: []
                )
            )
        else:
            nodes.append(NodeSpec(id=f"n{i}", kind=NodeKind.JOB, binding="Step", after=after))
    return FlowSpec(name="chain", nodes=tuple(nodes))


def test_a_simulation_gets_1000_rounds_and_says_so_when_it_needs_more() -> None:
    # 499 fan-outs take 998 rounds, the job one more, and the 1000th finds nothing left to do.
    settled = simulate_flow(_chain(499, 1), None)
    assert (len(settled.nodes), settled.nodes[-1].id, settled.state) == (500, "n499", "COMPLETED")
    with pytest.raises(RuntimeError) as caught:
        simulate_flow(_chain(500, 0), None)  # 1000 rounds of work: the empty round would be the 1001st
    assert str(caught.value) == "flow chain did not settle within 1000 rounds"
