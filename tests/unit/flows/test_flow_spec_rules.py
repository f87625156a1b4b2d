"""A declared shape's rules as `FlowSpec` itself applies them (found by mutation testing, ADR-0088).

The typed builder checks some of these before `FlowSpec` sees them; a spec built by other code (the Run
Durable Object's tests, a future builder) relies on `FlowSpec` alone.
"""

from __future__ import annotations

from typing import Any

import pytest

from tsumugi_core.flow_spec import FlowSpec, InvalidFlowError, NodeKind, NodeSpec, check_deadline_ms


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
