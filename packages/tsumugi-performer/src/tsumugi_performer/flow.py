"""Typed flows: declare a DAG of performers once, in a module the scheduler and producers both import.

Each node takes a performer class, so pyright checks that ``input`` returns the performer's payload type and
that a dependency's value (``deps[ref]``) has its performer's result type. The declaration runs when the
module is imported and fails there (`InvalidFlowError`) naming the node and the rule.

Example:
    >>> import msgspec
    >>> from tsumugi_performer import JobContext, Performer
    >>> class Names(msgspec.Struct):
    ...     names: list[str]
    >>> class Split(Performer[Names, list[str]]):
    ...     async def perform(self, payload: Names, ctx: JobContext) -> list[str]:
    ...         return payload.names
    >>> class Greet(Performer[str, str]):
    ...     async def perform(self, payload: str, ctx: JobContext) -> str:
    ...         return "hi " + payload
    >>> @flow("demo", Names)
    ... def demo(f: FlowBuilder[Names]) -> None:
    ...     names = f.node("names", Split, input=lambda run, deps: run)
    ...     f.fan_out("greet", Greet, after=[names], over=lambda run, deps: deps[names],
    ...               input=lambda item, run, index: item)
    >>> [n.id for n in demo.spec.nodes]
    ['names', 'greet']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, Never, TypedDict, TypeVar, cast

import msgspec

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.flow_spec import FlowSpec, InvalidFlowError, NodeKind, NodeSpec, check_option_names
from tsumugi_core.options import Backoff, Guarantee
from tsumugi_core.time_values import Duration, Instant, duration_ms, with_milliseconds
from tsumugi_performer._performer import Performer, result_type_of

__all__ = ["Deps", "FanOutSummary", "Flow", "FlowBuilder", "InvalidFlowError", "Ref", "flow"]

_I = TypeVar("_I")
"""The run input type (the original's ``flow<Input>``)."""
_CI = TypeVar("_CI")
_P = TypeVar("_P")
_R = TypeVar("_R")
_T = TypeVar("_T")


class FanOutSummary(TypedDict):
    """A fan-out node's value: how many children ran, succeeded and failed."""

    total: int
    succeeded: int
    failed: int


class Ref(Generic[_R]):
    """A declared node; pass it in ``after`` and read its result with ``deps[ref]``."""

    __slots__ = ("id", "result_type")

    def __init__(self, node_id: str, result_type: Any) -> None:
        self.id = node_id
        self.result_type = result_type

    def __repr__(self) -> str:
        return f"Ref({self.id!r})"


class Deps:
    """The results of a node's dependencies, typed by their refs."""

    __slots__ = ("_raw", "_types")

    def __init__(self, raw: Mapping[str, Any], types: Mapping[str, Any]) -> None:
        self._raw = raw
        self._types = types

    def __getitem__(self, ref: Ref[_T]) -> _T:
        """The result of ``ref`` converted to its performer's result type (None when it stored none)."""
        if ref.id not in self._types:
            raise KeyError(f"{ref.id} is not a dependency of this node")
        value = self._raw.get(ref.id)
        return cast(_T, value if value is None else msgspec.convert(value, type=ref.result_type))

    def raw(self, node_id: str) -> Any:
        """The stored JSON value of a dependency, by node id."""
        return self._raw.get(node_id)


def _plain(value: Any) -> Any:
    return msgspec.to_builtins(value)


class Flow(Generic[_I]):
    """A declared flow: its name, its run input type and its frozen-at-start shape (`spec`)."""

    def __init__(self, spec: FlowSpec, input_type: Any, subflows: Sequence[Flow[Any]]) -> None:
        self.spec = spec
        self.name = spec.name
        self.input_type = input_type
        self.subflows = tuple(subflows)
        """Child flows its subflow nodes start (they must be registered with the scheduler too)."""

    def __repr__(self) -> str:
        return f"Flow({self.name!r})"


class FlowBuilder(Generic[_I]):
    """Collects the nodes of one flow; every method validates at once."""

    def __init__(self, name: str, input_type: Any) -> None:
        self._name = name
        self._input_type = input_type
        self._nodes: list[NodeSpec] = []
        self._ids: set[str] = set()
        self._subflows: list[Flow[Any]] = []
        self._output: str | None = None
        self._last: tuple[Any, Any] | None = None

    def _run_input(self, raw: Any) -> _I:
        """``raw`` (the run input as stored) as the flow's input type, converted once per input object.

        A fan-out maps each of its items with the same converted input (mapping functions must not change it).
        """
        if self._input_type is Any:
            return raw
        last = self._last
        if last is not None and last[0] is raw:
            return last[1]
        typed = msgspec.convert(raw, type=self._input_type)
        self._last = (raw, typed)
        return typed

    def _after(self, node_id: str, after: Sequence[Ref[Any]]) -> tuple[tuple[str, ...], dict[str, Any]]:
        ids: list[str] = []
        types: dict[str, Any] = {}
        for ref in after:
            if not isinstance(ref, Ref) or ref.id not in self._ids:  # pyright: ignore[reportUnnecessaryIsInstance]
                raise InvalidFlowError(
                    f"flow {self._name}: depends on an undeclared node: {node_id} -> {ref!r}"
                )
            if ref.id not in types:  # duplicate refs collapse in the stored shape
                ids.append(ref.id)
                types[ref.id] = ref.result_type
        return tuple(ids), types

    def _add(self, node: NodeSpec) -> None:
        FlowSpec(name=self._name, nodes=(*self._nodes, node))  # validates the node against those before it
        self._nodes.append(node)
        self._ids.add(node.id)

    @staticmethod
    def _forbidden(node_id: str, forbidden: Mapping[str, Any], flow: str) -> None:
        check_option_names(flow, node_id, forbidden)  # what is left in **forbidden is never a node option

    def node(
        self,
        node_id: str,
        performer: type[Performer[_P, _R]],
        *,
        input: Callable[[_I, Deps], _P],
        after: Sequence[Ref[Any]] = (),
        concurrency_key: str | Callable[[_I, Deps], str] | None = None,
        max_attempts: int | None = None,
        backoff: Backoff | None = None,
        delay_ms: Duration | None = None,
        run_at: Instant | None = None,
        timeout_ms: Duration | None = None,
        priority: int | None = None,
        guarantee: Guarantee | None = None,
        **forbidden: Never,
    ) -> Ref[_R]:
        """A node running one ``performer`` job with ``input(run_input, deps)`` as its payload."""
        self._forbidden(node_id, forbidden, self._name)
        ids, types = self._after(node_id, after)
        options = _options(
            self._name,
            node_id,
            max_attempts=max_attempts,
            backoff=backoff,
            delay_ms=delay_ms,
            run_at=run_at,
            timeout_ms=timeout_ms,
            priority=priority,
            guarantee=guarantee,
        )

        def payload(raw_input: Any, raw_deps: Mapping[str, Any]) -> Any:
            return _plain(input(self._run_input(raw_input), Deps(raw_deps, types)))

        key: str | Callable[..., str] | None = concurrency_key
        if callable(concurrency_key):
            user_key = concurrency_key

            def key_of(raw_input: Any, raw_deps: Mapping[str, Any]) -> str:
                return user_key(self._run_input(raw_input), Deps(raw_deps, types))

            key = key_of
        self._add(
            NodeSpec(
                id=node_id,
                kind=NodeKind.JOB,
                binding=performer.__name__,
                after=ids,
                input=payload,
                concurrency_key=key,
                options=options,
            )
        )
        return Ref(node_id, result_type_of(performer))

    def fan_out(
        self,
        node_id: str,
        performer: type[Performer[_P, Any]],
        *,
        over: Callable[[_I, Deps], Sequence[_T]],
        input: Callable[[_T, _I, int], _P],
        after: Sequence[Ref[Any]] = (),
        key: Callable[[_T, int], str] | None = None,
        concurrency_key: str | Callable[[_T, int], str] | None = None,
        max_attempts: int | None = None,
        backoff: Backoff | None = None,
        delay_ms: Duration | None = None,
        run_at: Instant | None = None,
        timeout_ms: Duration | None = None,
        priority: int | None = None,
        guarantee: Guarantee | None = None,
        **forbidden: Never,
    ) -> Ref[FanOutSummary]:
        """A container with one ``performer`` child per item of ``over(run_input, deps)``.

        Its value is the `FanOutSummary` (children's own results are not passed on).
        """
        self._forbidden(node_id, forbidden, self._name)
        ids, types = self._after(node_id, after)
        options = _options(
            self._name,
            node_id,
            max_attempts=max_attempts,
            backoff=backoff,
            delay_ms=delay_ms,
            run_at=run_at,
            timeout_ms=timeout_ms,
            priority=priority,
            guarantee=guarantee,
        )

        def items(raw_input: Any, raw_deps: Mapping[str, Any]) -> Any:
            return list(over(self._run_input(raw_input), Deps(raw_deps, types)))

        def item_payload(item: Any, raw_input: Any, index: int) -> Any:
            return _plain(input(item, self._run_input(raw_input), index))

        self._add(
            NodeSpec(
                id=node_id,
                kind=NodeKind.FAN_OUT,
                binding=performer.__name__,
                after=ids,
                over=items,
                item_input=item_payload,
                key=key,
                concurrency_key=concurrency_key,
                options=options,
            )
        )
        return Ref(node_id, FanOutSummary)

    def subflow(
        self,
        node_id: str,
        child: Flow[_CI],
        *,
        input: Callable[[_I, Deps], _CI],
        after: Sequence[Ref[Any]] = (),
    ) -> Ref[None]:
        """A node starting a run of ``child`` with ``input(run_input, deps)``; it ends as that run ends."""
        ids, types = self._after(node_id, after)

        def child_input(raw_input: Any, raw_deps: Mapping[str, Any]) -> Any:
            return _plain(input(self._run_input(raw_input), Deps(raw_deps, types)))

        self._add(
            NodeSpec(
                id=node_id,
                kind=NodeKind.SUBFLOW,
                binding="",
                after=ids,
                input=child_input,
                subflow=child.name,
            )
        )
        self._subflows.append(child)
        return Ref(node_id, type(None))

    def output(self, ref: Ref[Any]) -> None:
        """Make ``ref``'s result the run's output (``run.output`` in the run detail and the client)."""
        if not isinstance(ref, Ref) or ref.id not in self._ids:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise InvalidFlowError(f"flow {self._name}: the output is an undeclared node: {ref!r}")
        self._output = ref.id

    def build(
        self, deadline_ms: Duration | None, on_failure: str | None = None, on_settled: str | None = None
    ) -> Flow[_I]:
        """The declared flow (raises when no node was declared); ``deadline_ms`` may be a `timedelta`."""
        spec = FlowSpec(
            name=self._name,
            nodes=tuple(self._nodes),
            deadline_ms=cast("int | None", duration_ms("deadline_ms", deadline_ms)),  # FlowSpec checks it
            output=self._output,
            on_failure=on_failure,
            on_settled=on_settled,
            input_schema=_input_schema(self._input_type),
        )
        return Flow(spec, self._input_type, self._subflows)


def _input_schema(input_type: Any) -> dict[str, Any] | None:
    """The JSON Schema a run input must meet (None for ``Any``, or a type msgspec cannot describe)."""
    if input_type is Any:
        return None
    try:
        return msgspec.json.schema(input_type)
    except (TypeError, ValueError):
        return None


def _options(flow_name: str, node_id: str, **values: Any) -> dict[str, Any]:
    """The options given, their `timedelta` / `datetime` values in milliseconds (ADR-0161)."""
    given = {k: v for k, v in values.items() if v is not None}
    try:
        return with_milliseconds(given, ("delay_ms", "timeout_ms"), ("run_at",))
    except InvalidFieldError as exc:
        raise InvalidFlowError(f"flow {flow_name}: node {node_id}: {exc}") from None


def _notice_binding(flow_name: str, option: str, value: str | type | None) -> str | None:
    if value is None:
        return None
    name = value if isinstance(value, str) else getattr(value, "__name__", "")
    if not name.isidentifier():
        raise InvalidFlowError(f"flow {flow_name}: {option} must be a binding name or a Performer class")
    return name


def flow(
    name: str,
    input_type: type[_I],
    *,
    deadline_ms: Duration | None = None,
    on_failure: str | type | None = None,
    on_settled: str | type | None = None,
) -> Callable[[Callable[[FlowBuilder[_I]], object]], Flow[_I]]:
    """Declare a flow: decorate a function that adds its nodes; the decorated name becomes the `Flow`.

    ``input_type`` is what the run input is converted to (msgspec) before the mapping functions see it.
    ``deadline_ms`` (positive milliseconds or a `timedelta`) bounds a run's duration unless its start overrides
    it. ``on_failure`` / ``on_settled`` name a binding (or Performer class) that gets a `RunNotice` job when a run
    ends FAILED / ends at all (beyond the original; docs/flows.md).

    Raises:
        InvalidFlowError: at declaration, naming the node and the rule.
    """

    def declare(body: Callable[[FlowBuilder[_I]], object]) -> Flow[_I]:
        builder = FlowBuilder[_I](name, input_type)
        body(builder)
        return builder.build(
            deadline_ms,
            _notice_binding(name, "on_failure", on_failure),
            _notice_binding(name, "on_settled", on_settled),
        )

    return declare
