"""Declaring flows: the typed builder's shape and every rule that fails at declaration, naming node and rule."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from tests.unit.flows.example_flows import Greet, Names, Split, demo
from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.flow_spec import FlowSpec, InvalidFlowError, NodeKind, NodeSpec, check_deadline_ms
from tsumugi_performer.flow import Flow, FlowBuilder, Ref, flow


def test_a_declared_flow_keeps_nodes_in_order_with_bindings_kinds_and_deduplicated_after() -> None:
    @flow("shape", Names)
    def shape(f: FlowBuilder[Names]) -> None:
        a = f.node("a", Split, input=lambda run, deps: run, max_attempts=5, priority=2)
        f.node("b", Greet, after=[a, a], input=lambda run, deps: deps[a][0], concurrency_key="k")
        f.subflow("c", demo, after=[a], input=lambda run, deps: Names(names=deps[a]))

    nodes = shape.spec.nodes
    assert [(n.id, n.kind, n.binding, n.after) for n in nodes] == [
        ("a", NodeKind.JOB, "Split", ()),
        ("b", NodeKind.JOB, "Greet", ("a",)),
        ("c", NodeKind.SUBFLOW, "", ("a",)),
    ]
    assert dict(nodes[0].options) == {"max_attempts": 5, "priority": 2}
    assert nodes[1].concurrency_key == "k"
    assert nodes[2].subflow == "demo"
    assert shape.subflows == (demo,)


def test_mapping_functions_see_typed_values_and_return_json_shaped_payloads() -> None:
    node = demo.spec.node("list")
    assert node is not None
    assert node.input is not None
    assert node.input({"names": ["x"]}, {}) == {"names": ["x"]}
    fan = demo.spec.node("greet")
    assert fan is not None
    assert fan.over is not None
    assert fan.item_input is not None
    assert fan.over({"names": []}, {"list": ["p", "q"]}) == ["p", "q"]
    assert fan.item_input("p", {"names": []}, 0) == "p"


def test_a_fan_out_maps_every_item_with_one_conversion_of_the_run_input() -> None:
    seen: list[Names] = []

    @flow("each", Names)
    def each(f: FlowBuilder[Names]) -> None:
        f.fan_out(
            "greet",
            Greet,
            over=lambda run, deps: run.names,
            input=lambda item, run, index: seen.append(run) or item,
        )

    fan = each.spec.node("greet")
    assert fan is not None
    assert fan.item_input is not None
    raw = {"names": [f"n{i}" for i in range(1_000)]}
    assert [fan.item_input(name, raw, i) for i, name in enumerate(raw["names"])] == raw["names"]
    assert all(run is seen[0] for run in seen)  # converted once, not once per item
    assert seen[0] == Names(names=raw["names"])
    fan.item_input("x", {"names": ["other"]}, 0)  # another run's input is converted anew
    assert seen[-1] == Names(names=["other"])


@pytest.mark.parametrize(
    ("declare", "message"),
    [
        (lambda f: f.node("bad id", Split, input=lambda r, d: r), "flow bad: invalid node id: 'bad id'"),
        (
            lambda f: f.node("n" * 129, Split, input=lambda r, d: r),
            "flow bad: invalid node id: 'nnnnnnnnnnnnnnnnnnnn'... is longer than 128 characters",
        ),
        (
            lambda f: (f.node("a", Split, input=lambda r, d: r), f.node("a", Split, input=lambda r, d: r)),
            "flow bad: duplicate node id: a",
        ),
        (
            lambda f: f.node("a", Split, after=[Ref("ghost", None)], input=lambda r, d: r),
            "flow bad: depends on an undeclared node: a -> Ref('ghost')",
        ),
        (lambda f: None, "flow bad: no nodes are declared"),
        (
            lambda f: f.node("a", Split, input=lambda r, d: r, unique_key="k"),
            "flow bad: node a: unique_key is not allowed on a flow node",
        ),
        (
            lambda f: f.node("a", Split, input=lambda r, d: r, max_attempts=0),
            "flow bad: node a: max_attempts must be at least 1",
        ),
        (
            lambda f: f.fan_out("a", Greet, over=lambda r, d: [], input=lambda i, r, n: i, unique_key="k"),
            "flow bad: node a: unique_key is not allowed",
        ),
    ],
)
def test_invalid_flows_fail_when_declared_naming_the_node_and_the_rule(declare: Any, message: str) -> None:
    with pytest.raises(InvalidFlowError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        flow("bad", Names)(declare)


def test_a_dependency_from_another_flow_is_undeclared_here() -> None:
    other = FlowBuilder[Names]("other", Names)
    foreign = other.node("x", Split, input=lambda r, d: r)
    with pytest.raises(InvalidFlowError, match="depends on an undeclared node: y -> Ref"):
        flow("mine", Names)(lambda f: f.node("y", Split, after=[foreign], input=lambda r, d: r))


def test_flow_name_and_deadline_are_checked() -> None:
    with pytest.raises(InvalidFlowError, match="invalid flow name"):
        flow("bad name", Names)(lambda f: f.node("a", Split, input=lambda r, d: r))
    with pytest.raises(InvalidFlowError, match="deadlineMs must be a positive integer: 0"):
        flow("f", Names, deadline_ms=0)(lambda f: f.node("a", Split, input=lambda r, d: r))


def test_a_flow_deadline_may_be_a_timedelta() -> None:
    declared = flow("f", Names, deadline_ms=dt.timedelta(minutes=5))(
        lambda f: f.node("a", Split, input=lambda r, d: r)
    )
    assert declared.spec.deadline_ms == 300_000
    with pytest.raises(InvalidFieldError, match="whole number of milliseconds") as raised:
        flow("f", Names, deadline_ms=dt.timedelta(microseconds=1500))(
            lambda f: f.node("a", Split, input=lambda r, d: r)
        )
    assert raised.value.field == "deadline_ms"


def test_a_spec_refuses_a_cycle_because_dependencies_must_come_first() -> None:
    with pytest.raises(InvalidFlowError, match="depends on an undeclared node: a -> b"):
        FlowSpec(
            name="f",
            nodes=(
                NodeSpec(id="a", kind=NodeKind.JOB, binding="X", after=("b",)),
                NodeSpec(id="b", kind=NodeKind.JOB, binding="X", after=("a",)),
            ),
        )


def test_deps_refuse_a_ref_that_is_not_a_dependency() -> None:
    seen: list[Any] = []

    @flow("deps", Names)
    def deps(f: FlowBuilder[Names]) -> None:
        a = f.node("a", Split, input=lambda run, d: run)
        b = f.node("b", Split, input=lambda run, d: run)
        f.node("c", Greet, after=[a], input=lambda run, d: seen.append(d[b]) or "")

    node = deps.spec.node("c")
    assert node is not None
    assert node.input is not None
    with pytest.raises(KeyError, match="b is not a dependency"):
        node.input({"names": []}, {"a": []})
    assert isinstance(deps, Flow)


def test_an_output_node_is_declared_once_and_must_be_a_node_of_the_flow() -> None:
    @flow("out", Names)
    def out(f: FlowBuilder[Names]) -> None:
        f.output(f.node("a", Split, input=lambda r, d: r))

    assert out.spec.output == "a"
    with pytest.raises(InvalidFlowError, match="the output is an undeclared node: Ref"):
        flow("out2", Names)(lambda f: (f.node("a", Split, input=lambda r, d: r), f.output(Ref("zz", None))))
    with pytest.raises(InvalidFlowError, match="the output is an undeclared node: b"):
        FlowSpec(name="f", nodes=(NodeSpec(id="a", kind=NodeKind.JOB, binding="X"),), output="b")


# A declared shape's rules as `FlowSpec` itself applies them. The typed builder checks some of these before
# `FlowSpec` sees them; a spec built by other code (the Run Durable Object's tests, a future builder) relies
# on `FlowSpec` alone.


def _spec(node: NodeSpec, deadline_ms: Any = None) -> FlowSpec:
    return FlowSpec(name="f", nodes=(node,), deadline_ms=deadline_ms)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"unique_key": "k"}, "flow f: node a: unique_key is not allowed on a flow node (ADR-0033)"),
        ({"colour": "red"}, "flow f: node a: colour is not a node option"),
        ({"max_attempts": 3, "concurrency_key": "c"}, "flow f: node a: concurrency_key is not a node option"),
        ({"priority": "high"}, "flow f: node a: priority must be an integer"),
    ],
)
def test_a_node_option_the_spec_refuses_is_named_with_its_rule(options: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidFlowError) as caught:
        _spec(NodeSpec(id="a", kind=NodeKind.JOB, binding="X", options=options))
    assert str(caught.value).startswith(message)


def test_node_options_an_enqueue_accepts_are_kept() -> None:
    options = {"max_attempts": 3, "delay_ms": 0, "priority": 2}
    spec = _spec(NodeSpec(id="a", kind=NodeKind.JOB, binding="X", options=options))
    node = spec.node("a")
    assert node is not None
    assert dict(node.options) == options


def test_a_subflow_node_without_its_child_flow_and_a_fan_out_without_over_are_refused() -> None:
    with pytest.raises(InvalidFlowError) as caught:
        _spec(NodeSpec(id="s", kind=NodeKind.SUBFLOW, binding=""))
    assert str(caught.value) == "flow f: node s: a subflow node needs its child flow"
    with pytest.raises(InvalidFlowError) as caught:
        _spec(NodeSpec(id="s", kind=NodeKind.SUBFLOW, binding="", subflow=""))
    assert str(caught.value) == "flow f: node s: a subflow node needs its child flow"
    with pytest.raises(InvalidFlowError) as caught:
        _spec(NodeSpec(id="m", kind=NodeKind.FAN_OUT, binding="X"))
    assert str(caught.value) == "flow f: node m: a fan-out needs over"
    spec = _spec(NodeSpec(id="m", kind=NodeKind.FAN_OUT, binding="X", over=lambda run, deps: []))
    assert spec.node("m") is not None
    assert spec.node("gone") is None


@pytest.mark.parametrize("value", [1, 2, 86_400_000])
def test_a_positive_integer_deadline_is_kept(value: int) -> None:
    assert check_deadline_ms(value) == value
    assert _spec(NodeSpec(id="a", kind=NodeKind.JOB, binding="X"), deadline_ms=value).deadline_ms == value


def test_no_deadline_is_none() -> None:
    assert check_deadline_ms(None) is None


@pytest.mark.parametrize("value", [0, -1, 1.5, "5", True, False])
def test_a_deadline_that_is_not_a_positive_integer_is_refused_naming_it(value: object) -> None:
    with pytest.raises(InvalidFlowError) as caught:
        check_deadline_ms(value)
    assert str(caught.value) == f"deadlineMs must be a positive integer: {value}"
    with pytest.raises(InvalidFlowError):
        _spec(NodeSpec(id="a", kind=NodeKind.JOB, binding="X"), deadline_ms=value)
