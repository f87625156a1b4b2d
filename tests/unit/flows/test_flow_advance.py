"""The pure advance: dependency gating, skips, fan-out aggregation, halting, run state.

Source: docs/reference/original.md §3.11.
"""

from __future__ import annotations

from tsumugi_core.flow_advance import (
    NodeView,
    advance,
    container_summary,
    fan_out_summary,
    progress,
    run_state,
    waiting_on,
)


def _d(nodes: list[NodeView], cancelling: bool = False, expired: bool = False) -> list[tuple[str, str]]:
    return [(d.kind, d.node_id) for d in advance(nodes, cancelling, expired)]


def test_roots_start_and_a_node_waits_until_its_dependencies_settle() -> None:
    nodes = [NodeView(id="a", state="PENDING"), NodeView(id="b", state="PENDING", after=("a",))]
    assert _d(nodes) == [("start", "a")]
    nodes[0] = NodeView(id="a", state="SCHEDULED")
    assert _d(nodes) == []
    nodes[0] = NodeView(id="a", state="COMPLETED")
    assert _d(nodes) == [("start", "b")]


def test_a_failure_skips_only_its_downstream_and_the_run_fails_after_independent_branches_finish() -> None:
    nodes = [
        NodeView(id="a", state="FAILED"),
        NodeView(id="b", state="PENDING", after=("a",)),
        NodeView(id="c", state="SCHEDULED"),
    ]
    assert _d(nodes) == [("skip", "b")]
    nodes[1] = NodeView(id="b", state="SKIPPED", after=("a",))
    assert run_state(nodes) == "RUNNING"  # c still runs
    nodes[2] = NodeView(id="c", state="COMPLETED")
    assert run_state(nodes) == "FAILED"


def test_a_removed_dependency_skips_at_once() -> None:
    assert _d([NodeView(id="b", state="PENDING", after=("gone",))]) == [("skip", "b")]


def test_containers_expand_then_aggregate_and_failed_fan_out_children_do_not_fail_downstream() -> None:
    nodes = [
        NodeView(id="f", state="PENDING", container=True),
        NodeView(id="r", state="PENDING", after=("f",)),
    ]
    assert _d(nodes) == [("expand", "f")]
    nodes = [
        NodeView(id="f", state="RUNNING", container=True),
        NodeView(id="f:0", state="FAILED", parent="f", origin="fanOut"),
        NodeView(id="f:1", state="SCHEDULED", parent="f", origin="fanOut"),
        NodeView(id="r", state="PENDING", after=("f",)),
    ]
    assert _d(nodes) == []
    nodes[2] = NodeView(id="f:1", state="COMPLETED", parent="f", origin="fanOut")
    assert _d(nodes) == [("aggregate", "f")]
    nodes[0] = NodeView(id="f", state="COMPLETED", container=True)
    assert _d(nodes) == [("start", "r")]
    assert fan_out_summary(["FAILED", "COMPLETED"]) == {"total": 2, "succeeded": 1, "failed": 1}


def test_a_failed_spawned_child_fails_its_parent_for_downstream_gating() -> None:
    nodes = [
        NodeView(id="p", state="COMPLETED"),
        NodeView(id="p:c", state="SCHEDULED", parent="p", origin="spawn"),
        NodeView(id="d", state="PENDING", after=("p",)),
    ]
    assert _d(nodes) == []  # the parent waits for its spawned child
    nodes[1] = NodeView(id="p:c", state="FAILED", parent="p", origin="spawn")
    assert _d(nodes) == [("skip", "d")]


def test_a_fan_out_child_whose_spawned_child_failed_counts_as_failed_in_the_summary() -> None:
    nodes = [
        NodeView(id="f", state="RUNNING", container=True),
        NodeView(id="f:0", state="COMPLETED", parent="f", origin="fanOut"),
        NodeView(id="f:0:bad", state="FAILED", parent="f:0", origin="spawn"),
        NodeView(id="f:1", state="COMPLETED", parent="f", origin="fanOut"),
        NodeView(id="f:1:ok", state="COMPLETED", parent="f:1", origin="spawn"),
        NodeView(id="f:2", state="STALLED", parent="f", origin="fanOut"),
    ]
    assert _d(nodes) == [("aggregate", "f")]
    assert container_summary(nodes, "f") == {"total": 3, "succeeded": 1, "failed": 2}


def test_halting_cancels_unstarted_and_scheduled_nodes_and_running_subflows() -> None:
    nodes = [
        NodeView(id="a", state="PENDING"),
        NodeView(id="b", state="SCHEDULED"),
        NodeView(id="s", state="RUNNING", subflow=True),
        NodeView(id="c", state="COMPLETED"),
    ]
    assert _d(nodes, cancelling=True) == [("cancel", "a"), ("cancel", "b"), ("cancel", "s")]
    assert _d(nodes, expired=True) == _d(nodes, cancelling=True)
    done = [NodeView(id="a", state="CANCELLED"), NodeView(id="c", state="COMPLETED")]
    assert run_state(done, cancelling=True) == "CANCELLED"
    assert run_state([NodeView(id="c", state="COMPLETED")], expired=True) == "FAILED"
    assert run_state([NodeView(id="c", state="COMPLETED")]) == "COMPLETED"


def test_progress_counts_done_and_failed_nodes() -> None:
    p = progress(["COMPLETED", "FAILED", "STALLED", "SKIPPED", "PENDING", "RUNNING"])
    assert (p.node_total, p.node_done, p.node_failed) == (6, 4, 2)


def test_waiting_on_lists_a_pending_nodes_unsettled_dependencies() -> None:
    nodes = [
        NodeView(id="a", state="COMPLETED"),
        NodeView(id="a:c", state="SCHEDULED", parent="a", origin="spawn"),
        NodeView(id="b", state="SCHEDULED"),
        NodeView(id="c", state="PENDING", after=("a", "b")),
        NodeView(id="d", state="PENDING", after=("c",)),
    ]
    assert waiting_on(nodes) == {"c": ["a", "b"], "d": ["c"]}  # a waits for its spawned child


# Subflow starts, halting and waiting_on.


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
