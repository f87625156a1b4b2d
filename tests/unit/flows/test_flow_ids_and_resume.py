"""The pure parts of issue 24's fixes: node job ids and child run ids (ADR-0115) and the resume plan (ADR-0116)."""

from __future__ import annotations

import doctest

import pytest

from tsumugi_core import flow_ids, flow_resume, id_digest
from tsumugi_core.flow_advance import NodeView
from tsumugi_core.flow_ids import child_run_id, node_job_id
from tsumugi_core.flow_resume import ResumeStep, resume_steps
from tsumugi_core.ids import InvalidRunIdError, parse_job_id, parse_run_id


@pytest.mark.parametrize("module", [flow_ids, flow_resume, id_digest])
def test_the_examples_in_the_docstrings_hold(module: object) -> None:
    failed, attempted = doctest.testmod(module)  # type: ignore[arg-type]
    assert (failed, attempted > 0) == (0, True)


def test_a_node_job_id_is_the_incarnations_own_and_stable_for_a_resend() -> None:
    base = node_job_id("Hello", 1, "greetings:a", "nonce1", "names", 0)
    assert node_job_id("Hello", 1, "greetings:a", "nonce1", "names", 0) == base  # a resend is absorbed
    others = {
        node_job_id(
            "Hello", 1, "greetings:a", "nonce2", "names", 0
        ),  # the run id started again after a sweep
        node_job_id("Hello", 1, "greetings:a", "nonce1", "names", 1),  # the node resumed
        node_job_id("Hello", 1, "greetings:a", "nonce1", "other", 0),
        node_job_id("Hello", 1, "greetings:b", "nonce1", "names", 0),
    }
    assert base not in others
    assert len(others) == 4


def test_a_node_job_follows_the_run_id_to_its_shard() -> None:
    shards = {
        parse_job_id(node_job_id("Hello", 4, "greetings:a", "n", f"node{i}", 0)).shard for i in range(20)
    }
    assert len(shards) == 1  # every node of one run lands on the run's shard
    assert parse_job_id(node_job_id("Hello", 1, "greetings:a", "n", "x", 0)).shard == 0


def test_child_run_ids_differ_by_parent_flow_incarnation_node_and_resume() -> None:
    base = child_run_id("leaf", "fulfil:order-42", "n1", "sub", 0)
    assert base.startswith("leaf:order-42-sub-")
    assert parse_run_id(base).flow == "leaf"
    assert child_run_id("leaf", "fulfil:order-42", "n1", "sub", 0) == base
    assert (
        len(
            {
                base,
                child_run_id("leaf", "refund:order-42", "n1", "sub", 0),  # another parent flow, same local id
                child_run_id("leaf", "fulfil:order-42", "n2", "sub", 0),  # the parent started again
                child_run_id("leaf", "fulfil:order-42", "n1", "sub", 1),  # the node resumed
            }
        )
        == 4
    )


def test_a_child_run_id_needs_a_valid_parent_run_id() -> None:
    with pytest.raises(InvalidRunIdError):
        child_run_id("leaf", "no-colon", "n", "sub", 0)


def _steps(nodes: list[NodeView], refused: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    return [(s.node_id, s.kind) for s in resume_steps(nodes, refused)]


def test_resume_reruns_what_did_not_succeed_and_keeps_what_did() -> None:
    nodes = [
        NodeView(id="a", state="COMPLETED"),
        NodeView(id="b", state="FAILED", after=("a",)),
        NodeView(id="c", state="SKIPPED", after=("b",)),
        NodeView(id="d", state="STALLED"),
        NodeView(id="e", state="CANCELLED"),
        NodeView(id="s", state="FAILED", subflow=True),
    ]
    assert _steps(nodes) == [("b", "rerun"), ("c", "rerun"), ("d", "rerun"), ("e", "rerun"), ("s", "rerun")]


def test_a_completed_fan_out_is_reopened_when_a_child_runs_again_and_kept_when_none_does() -> None:
    drained = [
        NodeView(id="each", state="COMPLETED", container=True),
        NodeView(id="each:0", state="COMPLETED", parent="each", origin="fanOut"),
        NodeView(id="each:1", state="FAILED", parent="each", origin="fanOut"),
    ]
    assert _steps(drained) == [("each", "reopen"), ("each:1", "rerun")]
    settled = [
        NodeView(id="each", state="COMPLETED", container=True),
        NodeView(id="each:0", state="COMPLETED", parent="each", origin="fanOut"),
    ]
    assert _steps(settled) == []


def test_a_failed_fan_out_reopens_once_expanded_and_expands_again_when_it_never_did() -> None:
    expanded = [
        NodeView(id="each", state="FAILED", container=True),
        NodeView(id="each:0", state="COMPLETED", parent="each", origin="fanOut"),
    ]
    assert _steps(expanded) == [("each", "reopen")]
    never = [NodeView(id="each", state="FAILED", container=True)]
    assert _steps(never) == [("each", "rerun")]


def test_a_child_refused_when_made_stays_failed_and_does_not_reopen_its_fan_out() -> None:
    nodes = [
        NodeView(id="each", state="COMPLETED", container=True),
        NodeView(id="each:0", state="FAILED", parent="each", origin="fanOut"),
        NodeView(id="p", state="COMPLETED"),
        NodeView(id="p:s", state="FAILED", parent="p", origin="spawn"),
    ]
    assert _steps(nodes, refused=("each:0", "p:s")) == []
    assert resume_steps(nodes, ("each:0",)) == [ResumeStep(node_id="p:s", kind="rerun")]
