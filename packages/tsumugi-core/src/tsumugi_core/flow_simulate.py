"""``simulate_flow``: run a flow's shape in memory with the production `advance`, for users' unit tests.

Each started job node finishes at once with the result ``results`` gives it (None by default), or FAILED when
listed in ``fails``; fan-outs expand from their real ``over`` and ``input``. Subflow nodes complete without
running their child flow, and performers' spawns are not simulated (as in the original,
docs/reference/original.md §2.11).

Example:
    >>> spec = FlowSpec(name="f", nodes=(
    ...     NodeSpec(id="a", kind=NodeKind.JOB, binding="A"),
    ...     NodeSpec(id="b", kind=NodeKind.JOB, binding="B", after=("a",)),
    ... ))
    >>> outcome = simulate_flow(spec, None, fails=["a"])
    >>> outcome.state, [(n.id, n.state) for n in outcome.nodes]
    ('FAILED', [('a', 'FAILED'), ('b', 'SKIPPED')])
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, Final

import msgspec

from tsumugi_core.exceptions import TsumugiError
from tsumugi_core.flow_advance import NodeView, advance, container_summary, run_state
from tsumugi_core.flow_spec import FlowSpec, NodeKind, NodeSpec

__all__ = [
    "MAX_SIMULATION_ROUNDS",
    "SimulatedNode",
    "Simulation",
    "SimulationLimitError",
    "SimulationNodeInfo",
    "simulate_flow",
]

MAX_SIMULATION_ROUNDS: Final = 1000
"""Advance rounds before a simulation gives up (the original's bound)."""


class SimulationLimitError(TsumugiError, RuntimeError):
    """A flow still had work after ``MAX_SIMULATION_ROUNDS`` rounds."""


class SimulationNodeInfo(msgspec.Struct, frozen=True, kw_only=True):
    """What a ``results`` function is told about the node whose result it gives."""

    id: str
    binding: str
    payload: Any


class SimulatedNode(msgspec.Struct, frozen=True, kw_only=True):
    """A node as the simulation finished it."""

    id: str
    binding: str
    payload: Any
    state: str
    result: Any
    parent: str | None


class Simulation(msgspec.Struct, frozen=True, kw_only=True):
    """The nodes in the order they finished, and the run's final state."""

    nodes: list[SimulatedNode]
    state: str


_Results = Mapping[str, Any] | Callable[[SimulationNodeInfo], Any] | None


class _Node(msgspec.Struct, kw_only=True):
    view: NodeView
    binding: str
    payload: Any = None
    result: Any = None


class _Simulator:
    def __init__(self, spec: FlowSpec, raw_input: Any, results: _Results, fails: Collection[str]) -> None:
        self.spec = spec
        self.raw_input = raw_input
        self.results = results
        self.fails = fails
        self.nodes: dict[str, _Node] = {
            n.id: _Node(
                view=NodeView(
                    id=n.id,
                    state="PENDING",
                    container=n.kind is NodeKind.FAN_OUT,
                    subflow=n.kind is NodeKind.SUBFLOW,
                    after=n.after,
                ),
                binding=n.binding,
            )
            for n in spec.nodes
        }
        self.finished: list[SimulatedNode] = []

    def settle(self, node: _Node, state: str, result: Any) -> None:
        node.view = msgspec.structs.replace(node.view, state=state)
        node.result = result
        v = node.view
        self.finished.append(
            SimulatedNode(
                id=v.id,
                binding=node.binding,
                payload=node.payload,
                state=state,
                result=result,
                parent=v.parent,
            )
        )

    def result_of(self, node: _Node) -> Any:
        if callable(self.results):
            return self.results(
                SimulationNodeInfo(id=node.view.id, binding=node.binding, payload=node.payload)
            )
        return None if self.results is None else self.results.get(node.view.id)

    def deps_of(self, node_id: str) -> dict[str, Any]:
        return {d: self.nodes[d].result for d in self.nodes[node_id].view.after}

    def expand(self, node: _Node, definition: NodeSpec) -> None:
        assert definition.over is not None  # checked when the flow was declared
        items = list(definition.over(self.raw_input, self.deps_of(node.view.id)))
        for index, item in enumerate(items):
            key = str(index) if definition.key is None else definition.key(item, index)
            child_id = f"{node.view.id}:{key}"
            payload = (
                None if definition.item_input is None else definition.item_input(item, self.raw_input, index)
            )
            view = NodeView(id=child_id, state="PENDING", parent=node.view.id, origin="fanOut")
            self.nodes.setdefault(child_id, _Node(view=view, binding=node.binding, payload=payload))
        node.view = msgspec.structs.replace(node.view, state="RUNNING")

    def apply(self, kind: str, node: _Node) -> None:
        definition = self.spec.node(node.view.parent or node.view.id)
        if kind == "skip":
            self.settle(node, "SKIPPED", None)
        elif kind == "aggregate":
            views = [n.view for n in self.nodes.values()]
            self.settle(node, "COMPLETED", container_summary(views, node.view.id))
        elif kind == "expand" and definition is not None:
            self.expand(node, definition)
        elif kind == "startRun":
            self.settle(node, "COMPLETED", None)
        elif kind == "start":
            if node.view.origin == "static" and definition is not None and definition.input is not None:
                node.payload = definition.input(self.raw_input, self.deps_of(node.view.id))
            if node.view.id in self.fails:
                self.settle(node, "FAILED", None)
            else:
                self.settle(node, "COMPLETED", msgspec.to_builtins(self.result_of(node)))


def simulate_flow(
    flow: Any,
    run_input: Any,
    *,
    results: _Results = None,
    fails: Collection[str] = (),
) -> Simulation:
    """Run ``flow`` (a `FlowSpec`, or any object with a ``spec``) on ``run_input`` to its end.

    Raises:
        RuntimeError: the run did not settle within `MAX_SIMULATION_ROUNDS` rounds.
    """
    spec: FlowSpec = flow if isinstance(flow, FlowSpec) else flow.spec
    sim = _Simulator(spec, msgspec.to_builtins(run_input), results, fails)
    for _ in range(MAX_SIMULATION_ROUNDS):
        views = [n.view for n in sim.nodes.values()]
        decisions = advance(views)
        if not decisions:
            return Simulation(nodes=sim.finished, state=run_state(views))
        for decision in decisions:
            sim.apply(decision.kind, sim.nodes[decision.node_id])
    raise SimulationLimitError(f"flow {spec.name} did not settle within {MAX_SIMULATION_ROUNDS} rounds")
