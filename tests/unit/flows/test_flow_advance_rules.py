"""The advance's rules the flow tests did not pin (found by mutation testing, ADR-0088)."""

from __future__ import annotations

from tsumugi_core.flow_advance import NodeView, advance, waiting_on


def _d(nodes: list[NodeView], cancelling: bool = False, expired: bool = False) -> list[tuple[str, str]]:
    return [(d.kind, d.node_id) for d in advance(nodes, cancelling, expired)]


def test_a_subflow_node_starts_its_child_run_once_its_dependencies_succeed() -> None:
    nodes = [
        NodeView(id="a", state="COMPLETED"),
        NodeView(id="s", state="PENDING", subflow=True, after=("a",)),
        NodeView(id="j", state="PENDING", after=("a",)),
    ]
    assert _d(nodes) == [("startRun", "s"), ("start", "j")]


def test_halting_leaves_running_jobs_and_finished_subflows_alone() -> None:
    nodes = [
        NodeView(id="job", state="RUNNING"),
        NodeView(id="sub_done", state="COMPLETED", subflow=True),
        NodeView(id="sub_failed", state="FAILED", subflow=True),
        NodeView(id="sub_running", state="RUNNING", subflow=True),
    ]
    assert _d(nodes, cancelling=True) == [("cancel", "sub_running")]
    assert _d(nodes, expired=True) == [("cancel", "sub_running")]


def test_waiting_on_leaves_out_settled_and_removed_dependencies() -> None:
    nodes = [
        NodeView(id="done", state="COMPLETED"),
        NodeView(id="failed", state="FAILED"),
        NodeView(id="busy", state="RUNNING"),
        NodeView(id="n", state="PENDING", after=("done", "gone", "failed", "busy")),
    ]
    assert waiting_on(nodes) == {"n": ["busy"]}
