"""A flow's declared shape: its nodes, their dependencies and mapping functions, validated when declared.

The typed builder (``tsumugi_performer.flow``) produces these values; the Run Durable Object and
`tsumugi_core.flow_simulate` read them. Mapping functions here take and return JSON-shaped values (the run
input and the dependencies' results as stored); the builder wraps the user's typed functions.

Rules (docs/reference/original.md §2.10): node ids match ``[A-Za-z0-9_-]+`` and are unique; a dependency must
be declared before the node that names it (so cycles cannot be written); a flow has at least one node; nodes
take no ``unique_key``. Every violation raises `InvalidFlowError` naming the node and the rule.

Example:
    >>> spec = FlowSpec(name="f", nodes=(NodeSpec(id="a", kind=NodeKind.JOB, binding="Hello"),))
    >>> spec.node("a").binding
    'Hello'
    >>> FlowSpec(name="f", nodes=())
    Traceback (most recent call last):
    ...
    tsumugi_core.flow_spec.InvalidFlowError: flow f: no nodes are declared
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from tsumugi_core.exceptions import TsumugiError
from tsumugi_core.ids import InvalidRunIdError, validate_flow_name
from tsumugi_core.options import EnqueueItem, EnqueueValidationError, validate_enqueue

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_NODES",
    "JOB_OPTION_NAMES",
    "MAX_DEADLINE_MS",
    "MAX_NODE_ID_CHARS",
    "MAX_NODE_KEY_CHARS",
    "FlowSpec",
    "InputFn",
    "InvalidFlowError",
    "NodeKind",
    "NodeSpec",
    "check_deadline_ms",
    "check_node_options",
    "check_option_names",
    "node_key_problem",
]

DEFAULT_MAX_NODES: Final = 10_000
"""Nodes one run may hold (``runs.maxNodes``); an expansion past it fails its node."""
DEFAULT_MAX_DEPTH: Final = 3
"""Subflow nesting limit (``runs.maxDepth``)."""
MAX_DEADLINE_MS: Final = 10 * 365 * 86_400_000
"""The longest run deadline (ten years): its instant stays an integer JavaScript and the SQL API hold exactly."""
JOB_OPTION_NAMES: Final = (
    "max_attempts",
    "backoff",
    "delay_ms",
    "run_at",
    "timeout_ms",
    "priority",
    "guarantee",
)
"""The job options a node may set (the original's list; ``concurrency_key`` has its own slot)."""

_NODE_KEY: Final = re.compile(r"[A-Za-z0-9_-]+")
MAX_NODE_KEY_CHARS: Final = 128
"""Longest static node id, fan-out key and spawn id (a child's id is ``<parent id>:<key>``)."""
MAX_NODE_ID_CHARS: Final = 512
"""Longest id of any node, children of children included: a run's read-model rows stay small."""


def node_key_problem(key: object) -> str | None:
    """Why ``key`` cannot name a node (a static id, a fan-out key or a spawn id), or None when it can."""
    if not isinstance(key, str) or not _NODE_KEY.fullmatch(key):
        return f"must be 1 to {MAX_NODE_KEY_CHARS} of A-Z a-z 0-9 _ -, got {key!r}"
    if len(key) > MAX_NODE_KEY_CHARS:
        return f"must be at most {MAX_NODE_KEY_CHARS} characters, got {len(key)}"
    return None


class InvalidFlowError(TsumugiError, ValueError):
    """A flow declaration broke a rule; the message names the flow, the node and the rule."""


class NodeKind(StrEnum):
    """What a node starts: one job, one job per item (a container), or a child run."""

    JOB = "job"
    FAN_OUT = "fan_out"
    SUBFLOW = "subflow"


InputFn = Callable[[Any, Mapping[str, Any]], Any]
"""``(run_input, deps) -> payload`` over JSON-shaped values (deps keyed by node id)."""


@dataclass(frozen=True, kw_only=True)
class NodeSpec:
    """One declared node. ``binding`` is '' for a subflow node; ``subflow`` names its child flow."""

    id: str
    kind: NodeKind
    binding: str
    after: tuple[str, ...] = ()
    input: InputFn | None = None
    """Job / subflow: ``(run_input, deps) -> payload``; None passes None."""
    over: InputFn | None = None
    """Fan-out: ``(run_input, deps) -> items``."""
    item_input: Callable[[Any, Any, int], Any] | None = None
    """Fan-out: ``(item, run_input, index) -> payload``."""
    key: Callable[[Any, int], str] | None = None
    """Fan-out: ``(item, index) -> child key``; the index when absent."""
    concurrency_key: str | Callable[..., str] | None = None
    """A string, or ``(run_input, deps)`` (job) / ``(item, index)`` (fan-out) giving one."""
    options: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Job options by snake_case name (`JOB_OPTION_NAMES`)."""
    subflow: str | None = None


def check_option_names(flow: str, node_id: str, names: Iterable[str]) -> None:
    """Refuse option names a node may not take (``unique_key`` with its reason).

    Raises:
        InvalidFlowError: ``flow F: node N: <option> <rule>``.
    """
    for name in names:
        if name not in JOB_OPTION_NAMES:
            rule = (
                "is not allowed on a flow node (ADR-0033)" if name == "unique_key" else "is not a node option"
            )
            raise InvalidFlowError(f"flow {flow}: node {node_id}: {name} {rule}")


def check_node_options(flow: str, node_id: str, options: Mapping[str, Any]) -> None:
    """Refuse options a node may not take and values an enqueue would refuse.

    Raises:
        InvalidFlowError: ``flow F: node N: <option> <rule>``.
    """
    check_option_names(flow, node_id, options)
    try:
        validate_enqueue(EnqueueItem(binding="Node", payload=None, **options))
    except EnqueueValidationError as exc:
        raise InvalidFlowError(f"flow {flow}: node {node_id}: {exc}") from None


def check_deadline_ms(value: object) -> int | None:
    """A run deadline: None, or a positive integer.

    Raises:
        InvalidFlowError: ``deadlineMs must be a positive integer: <v>`` (or at most `MAX_DEADLINE_MS`).
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InvalidFlowError(f"deadlineMs must be a positive integer: {value}")
    if value > MAX_DEADLINE_MS:
        raise InvalidFlowError(f"deadlineMs must be at most {MAX_DEADLINE_MS}: {value}")
    return value


@dataclass(frozen=True, kw_only=True)
class FlowSpec:
    """A declared flow: its name, its nodes in declaration order and its default deadline."""

    name: str
    nodes: tuple[NodeSpec, ...]
    deadline_ms: int | None = None
    output: str | None = None
    """The node whose result is the run's output (beyond the original), or None."""
    on_failure: str | None = None
    """The binding that gets a run notice when a run of this flow ends FAILED (beyond the original)."""
    on_settled: str | None = None
    """The binding that gets a run notice when a run of this flow ends, whatever its state."""
    input_schema: Mapping[str, Any] | None = None
    """The JSON Schema of the run input (from the declared input type), checked when a run starts as a job's
    payload is at enqueue; None accepts any input."""
    _by_id: dict[str, NodeSpec] = field(default_factory=dict[str, NodeSpec], repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            validate_flow_name(self.name)
        except InvalidRunIdError as exc:
            raise InvalidFlowError(str(exc)) from None
        if not self.nodes:
            raise InvalidFlowError(f"flow {self.name}: no nodes are declared")
        check_deadline_ms(self.deadline_ms)
        for node in self.nodes:
            self._check(node)
            self._by_id[node.id] = node
        if self.output is not None and self.output not in self._by_id:
            raise InvalidFlowError(f"flow {self.name}: the output is an undeclared node: {self.output}")

    def _check(self, node: NodeSpec) -> None:
        prefix = f"flow {self.name}:"
        if not _NODE_KEY.fullmatch(node.id):
            raise InvalidFlowError(
                f"{prefix} invalid node id: {node.id!r} (alphanumeric, hyphen and underscore)"
            )
        if len(node.id) > MAX_NODE_KEY_CHARS:
            raise InvalidFlowError(
                f"{prefix} invalid node id: {node.id[:20]!r}... is longer than {MAX_NODE_KEY_CHARS} characters",
            )
        if node.id in self._by_id:
            raise InvalidFlowError(f"{prefix} duplicate node id: {node.id}")
        for dep in node.after:
            if dep not in self._by_id:
                raise InvalidFlowError(f"{prefix} depends on an undeclared node: {node.id} -> {dep}")
        if node.kind is NodeKind.SUBFLOW and not node.subflow:
            raise InvalidFlowError(f"{prefix} node {node.id}: a subflow node needs its child flow")
        if node.kind is NodeKind.FAN_OUT and node.over is None:
            raise InvalidFlowError(f"{prefix} node {node.id}: a fan-out needs over")
        check_node_options(self.name, node.id, node.options)

    def node(self, node_id: str) -> NodeSpec | None:
        """The node declared as ``node_id``, or None (e.g. removed by a later deploy)."""
        return self._by_id.get(node_id)
