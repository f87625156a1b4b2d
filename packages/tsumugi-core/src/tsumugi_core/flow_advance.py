"""What a run does next: the pure ``advance`` over its nodes, and the run state they imply.

Source: docs/reference/original.md §3.11.

The Run Durable Object and `simulate_flow` both call `advance` with the nodes as stored (in position order)
and apply the decisions it returns; nothing here reads storage, the clock or the flow's code.

Example:
    >>> nodes = [NodeView(id="a", state="COMPLETED"), NodeView(id="b", state="PENDING", after=("a",))]
    >>> [(d.kind, d.node_id) for d in advance(nodes)]
    [('start', 'b')]
    >>> run_state(nodes)
    'RUNNING'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final, Literal

import msgspec

__all__ = [
    "FAILED_NODE_STATES",
    "NODE_TERMINAL_STATES",
    "RUN_STATES",
    "Decision",
    "DecisionKind",
    "NodeOrigin",
    "NodeView",
    "Progress",
    "advance",
    "container_summary",
    "fan_out_summary",
    "progress",
    "run_state",
    "waiting_on",
]

NODE_TERMINAL_STATES: Final = frozenset({"COMPLETED", "FAILED", "CANCELLED", "STALLED", "SKIPPED"})
"""Node states that end the node itself (its children may still run)."""
FAILED_NODE_STATES: Final = frozenset({"FAILED", "STALLED"})
"""Node states counted as failed in a run's progress."""
RUN_STATES: Final = ("RUNNING", "COMPLETED", "FAILED", "CANCELLED")
"""A run's states."""

NodeOrigin = Literal["static", "fanOut", "spawn"]
DecisionKind = Literal["start", "startRun", "expand", "aggregate", "skip", "cancel"]


class NodeView(msgspec.Struct, frozen=True, kw_only=True):
    """What `advance` needs of a node."""

    id: str
    state: str
    container: bool = False
    subflow: bool = False
    parent: str | None = None
    origin: NodeOrigin = "static"
    after: tuple[str, ...] = ()


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """One step for the shell: ``kind`` applied to ``node_id``."""

    kind: DecisionKind
    node_id: str


class Progress(msgspec.Struct, frozen=True, kw_only=True):
    """A run's counters for the read model: all nodes, finished ones, failed ones."""

    node_total: int
    node_done: int
    node_failed: int


class _Tree:
    """Children by parent and memoised settled / succeeded answers."""

    def __init__(self, nodes: Sequence[NodeView]) -> None:
        self.by_id = {n.id: n for n in nodes}
        self.children: dict[str, list[NodeView]] = {}
        for n in nodes:
            if n.parent is not None:
                self.children.setdefault(n.parent, []).append(n)
        self._settled: dict[str, bool] = {}
        self._succeeded: dict[str, bool] = {}

    def settled(self, node: NodeView) -> bool:
        found = self._settled.get(node.id)
        if found is None:
            found = node.state in NODE_TERMINAL_STATES and all(
                self.settled(c) for c in self.children.get(node.id, ())
            )
            self._settled[node.id] = found
        return found

    def succeeded(self, node: NodeView) -> bool:
        found = self._succeeded.get(node.id)
        if found is None:
            found = (
                self.settled(node)
                and node.state == "COMPLETED"
                and all(c.origin == "fanOut" or self.succeeded(c) for c in self.children.get(node.id, ()))
            )
            self._succeeded[node.id] = found
        return found


def _pending(node: NodeView, tree: _Tree) -> DecisionKind | None:
    deps = [tree.by_id.get(d) for d in node.after]
    if any(d is None for d in deps):
        return "skip"  # a dependency removed since the run started
    present = [d for d in deps if d is not None]
    if not all(tree.settled(d) for d in present):
        return None
    if not all(tree.succeeded(d) for d in present):
        return "skip"
    if node.container:
        return "expand"
    return "startRun" if node.subflow else "start"


def advance(nodes: Sequence[NodeView], cancelling: bool = False, expired: bool = False) -> list[Decision]:
    """The decisions due now, in node order.

    A RUNNING container whose children all settled aggregates (also while halting). Halting (cancelling or
    expired): PENDING and SCHEDULED nodes and RUNNING subflow nodes are cancelled. Otherwise a PENDING node
    whose dependencies all settled starts (job), starts its child run (subflow) or expands (fan-out) when
    every dependency succeeded, and is skipped when one did not or no longer exists.
    """
    tree = _Tree(nodes)
    halting = cancelling or expired
    decisions: list[Decision] = []
    for node in nodes:
        kind: DecisionKind | None = None
        if node.container and node.state == "RUNNING":
            if all(tree.settled(c) for c in tree.children.get(node.id, ())):
                kind = "aggregate"
        elif halting:
            if node.state in ("PENDING", "SCHEDULED") or (node.subflow and node.state == "RUNNING"):
                kind = "cancel"
        elif node.state == "PENDING":
            kind = _pending(node, tree)
        if kind is not None:
            decisions.append(Decision(kind=kind, node_id=node.id))
    return decisions


def run_state(nodes: Sequence[NodeView], cancelling: bool = False, expired: bool = False) -> str:
    """The run's state: RUNNING until every root node settled.

    Then CANCELLED when cancelling, FAILED when expired or a root did not succeed, else COMPLETED.
    """
    tree = _Tree(nodes)
    roots = [n for n in nodes if n.parent is None]
    if not all(tree.settled(n) for n in roots):
        return "RUNNING"
    if cancelling:
        return "CANCELLED"
    if expired:
        return "FAILED"
    return "COMPLETED" if all(tree.succeeded(n) for n in roots) else "FAILED"


def fan_out_summary(children_states: Iterable[str]) -> dict[str, int]:
    """A container's result: ``{"total", "succeeded", "failed"}``; failed = total - COMPLETED children."""
    states = list(children_states)
    succeeded = sum(1 for s in states if s == "COMPLETED")
    return {"total": len(states), "succeeded": succeeded, "failed": len(states) - succeeded}


def container_summary(nodes: Sequence[NodeView], container_id: str) -> dict[str, int]:
    """The result of the container ``container_id`` (`fan_out_summary`) over the run's ``nodes``.

    A child counts as succeeded only when it COMPLETED and every child it spawned succeeded too: a failed
    spawn fails its fan-out child as it fails a static node (a count of the children's own states said
    ``failed: 0``).
    """
    tree = _Tree(nodes)
    children = tree.children.get(container_id, ())
    return fan_out_summary("COMPLETED" if tree.succeeded(child) else "FAILED" for child in children)


def progress(states: Iterable[str]) -> Progress:
    """The read model's counters over every node's state."""
    total = done = failed = 0
    for state in states:
        total += 1
        done += state in NODE_TERMINAL_STATES
        failed += state in FAILED_NODE_STATES
    return Progress(node_total=total, node_done=done, node_failed=failed)


def waiting_on(nodes: Sequence[NodeView]) -> dict[str, list[str]]:
    """Why each PENDING node is not running: its dependencies that have not settled yet.

    A dependency that settled without succeeding is not listed: the node is about to be skipped.
    """
    tree = _Tree(nodes)
    answer: dict[str, list[str]] = {}
    for node in nodes:
        if node.state == "PENDING":
            answer[node.id] = [d for d in node.after if d in tree.by_id and not tree.settled(tree.by_id[d])]
    return answer
