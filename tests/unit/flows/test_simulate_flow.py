"""simulate_flow: the production advance in memory, fan-out from over, results and failures injected."""

from __future__ import annotations

import doctest

from example_flows import Names, demo

import tsumugi_core.flow_advance
import tsumugi_core.flow_simulate
import tsumugi_core.flow_spec
import tsumugi_performer.flow
from tsumugi_core.flow_simulate import simulate_flow


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
