"""Read routes of flows and runs: answered from the definition and the read model.

Source: docs/reference/original.md §4.4, §4.5.

Runs are projected into the ``run`` / ``run_node`` tables by each Run Durable Object
(`tsumugi_scheduler.run.projection`). Without flows ``GET /api/flows`` answers ``{"flows": []}``, the list
is empty and any run id 404s, the original's answers. Starting and steering runs: `api.run_control`.
"""

from __future__ import annotations

from typing import Any, Final, cast

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from tsumugi_core.flow_advance import NodeOrigin, NodeView, waiting_on
from tsumugi_scheduler.api.answers import ApiError, json_response
from tsumugi_scheduler.api.context import api_of, env_of, first_values
from tsumugi_scheduler.readmodel import parse_job_query
from tsumugi_scheduler.readmodel.d1_port import d1_values, result_rows

__all__ = [
    "FlowList",
    "RunDetail",
    "RunDetailBody",
    "RunList",
    "RunNode",
    "RunSummary",
    "get_run",
    "list_flows",
    "list_runs",
    "read_run",
    "run_failure",
]

_SUMMARY: Final = "id, flow, state, node_total, node_done, node_failed, created_at, updated_at"
_NODE: Final = (
    "node_id, binding, state, container, parent, origin, after, job_id, child_run_id, result, error, "
    "position, created_at, updated_at, scheduled_at, finished_at"
)


class FlowList(msgspec.Struct, frozen=True, kw_only=True):
    """200 of ``GET /api/flows``: registered flow names, sorted."""

    flows: list[str]


class RunSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One run in a list."""

    id: str
    flow: str
    state: str
    node_total: int
    node_done: int
    node_failed: int
    created_at: int
    updated_at: int


class RunList(msgspec.Struct, frozen=True, kw_only=True):
    """200 of ``GET /api/runs``: a page, newest change first, and the number of matching runs."""

    runs: list[RunSummary]
    total: int


class RunDetail(RunSummary, frozen=True, kw_only=True):
    """A run with its input (JSON text) and parent link; ``retryable`` when FAILED."""

    input: str
    parent_run_id: str | None
    parent_node_id: str | None
    retryable: bool
    output: str | None = None
    """Beyond the original: the declared output node's result (JSON text) once COMPLETED."""
    failure: str | None = None
    """Beyond the original: why a FAILED run failed, in one line: its first failed node and that node's error."""


class RunNode(msgspec.Struct, frozen=True, kw_only=True):
    """One node of a run, in ``position`` order."""

    id: str
    binding: str
    state: str
    container: bool
    parent: str | None
    origin: str
    after: list[str]
    job_id: str | None
    child_run_id: str | None
    result: str | None
    error: str | None
    position: int
    created_at: int
    updated_at: int
    waiting_on: list[str] = []
    """Beyond the original: a PENDING node's dependencies that have not settled yet."""
    scheduled_at: int | msgspec.UnsetType | None = msgspec.UNSET
    """Beyond the original: when the node was last scheduled (its job enqueued, its fan-out expanded, its
    child run started); null before. Both times are left out while neither is known (a node not yet scheduled,
    or projected before migration 0013): the waterfall then infers them (ADR-0070)."""
    finished_at: int | msgspec.UnsetType | None = msgspec.UNSET
    """Beyond the original: when the node reached its terminal state; null until then."""


class RunDetailBody(msgspec.Struct, frozen=True, kw_only=True):
    """200 of ``GET /api/runs/{id}``."""

    run: RunDetail
    nodes: list[RunNode]


def _summary_fields(row: Any) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "flow": str(row["flow"]),
        "state": str(row["state"]),
        "node_total": int(row["node_total"]),
        "node_done": int(row["node_done"]),
        "node_failed": int(row["node_failed"]),
        "created_at": int(row["created_at"]),
        "updated_at": int(row["updated_at"]),
    }


def _after(text: object) -> list[str]:
    try:
        value = msgspec.json.decode(str(text), type=list[str])
    except (msgspec.DecodeError, msgspec.ValidationError):
        return []  # malformed stored JSON reads as no dependencies, as the original does
    return value


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _time(row: Any, column: str) -> int | msgspec.UnsetType | None:
    if row["scheduled_at"] is None and row["finished_at"] is None:
        return msgspec.UNSET  # neither known: both left out
    return None if row[column] is None else int(row[column])


def _node(row: Any) -> RunNode:
    return RunNode(
        id=str(row["node_id"]),
        binding=str(row["binding"]),
        state=str(row["state"]),
        container=bool(row["container"]),
        origin=str(row["origin"]),
        after=_after(row["after"]),
        position=int(row["position"]),
        created_at=int(row["created_at"]),
        updated_at=int(row["updated_at"]),
        parent=_text(row["parent"]),
        job_id=_text(row["job_id"]),
        child_run_id=_text(row["child_run_id"]),
        result=_text(row["result"]),
        error=_text(row["error"]),
        scheduled_at=_time(row, "scheduled_at"),
        finished_at=_time(row, "finished_at"),
    )


async def list_flows(request: Request) -> Response:
    """``GET /api/flows``: the registered flows, sorted."""
    return json_response(200, FlowList(flows=sorted(api_of(request).definition.flows)))


async def list_runs(request: Request) -> Response:
    """``GET /api/runs?state=&flow=&limit=&offset=``: exact filters, the jobs list's lenient paging."""
    params = first_values(request)
    page = parse_job_query({k: v for k, v in params.items() if k in ("limit", "offset")})
    filters = [(column, params.get(column)) for column in ("state", "flow")]  # exact; an empty value is "any"
    where = " AND ".join(f"{column} = ?" for column, value in filters if value)
    where = f" WHERE {where}" if where else ""
    values = [value for _, value in filters if value]
    d1 = env_of(request).TSUMUGI_DB
    rows, count = await d1.batch(
        [
            d1.prepare(
                f"SELECT {_SUMMARY} FROM run{where} ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?"
            ).bind(*d1_values([*values, page.limit, page.offset])),
            d1.prepare(f"SELECT count(*) AS total FROM run{where}").bind(*values),
        ]
    )
    runs = [RunSummary(**_summary_fields(row)) for row in result_rows(rows)]
    return json_response(200, RunList(runs=runs, total=int(result_rows(count)[0]["total"])))


async def get_run(request: Request) -> Response:
    """``GET /api/runs/{id}``: the run and its nodes; 404 ``not found`` for any id without a run."""
    found = await read_run(env_of(request).TSUMUGI_DB, str(request.path_params["id"]))
    if found is None:
        raise ApiError(404, {"error": "not found"})
    return json_response(200, found)


async def read_run(d1: Any, run_id: str) -> RunDetailBody | None:
    """The run ``run_id`` and its nodes from the read model, or None."""
    run, nodes = await d1.batch(
        [
            d1.prepare(
                f"SELECT {_SUMMARY}, input, parent_run_id, parent_node_id, output FROM run WHERE id = ?"
            ).bind(run_id),
            d1.prepare(f"SELECT {_NODE} FROM run_node WHERE run_id = ? ORDER BY position").bind(run_id),
        ]
    )
    found = result_rows(run)
    if not found:
        return None
    row = found[0]
    detail = RunDetail(
        **_summary_fields(row),
        input=str(row["input"]),
        parent_run_id=None if row["parent_run_id"] is None else str(row["parent_run_id"]),
        parent_node_id=None if row["parent_node_id"] is None else str(row["parent_node_id"]),
        retryable=row["state"] == "FAILED",
        output=None if row["output"] is None else str(row["output"]),
    )
    listed = [_node(r) for r in result_rows(nodes)]
    waits = waiting_on(
        [
            NodeView(
                id=n.id,
                state=n.state,
                container=n.container,
                subflow=n.child_run_id is not None,
                parent=n.parent,
                origin=cast(NodeOrigin, n.origin),
                after=tuple(n.after),
            )
            for n in listed
        ]
    )
    listed = [msgspec.structs.replace(n, waiting_on=waits[n.id]) if n.id in waits else n for n in listed]
    if detail.state == "FAILED":
        detail = msgspec.structs.replace(detail, failure=run_failure(listed))
    return RunDetailBody(run=detail, nodes=listed)


def run_failure(nodes: list[RunNode]) -> str:
    """One line saying why a FAILED run failed: its first failed node (in position order) and the first line of
    that node's error; a run whose nodes all succeeded failed by its deadline."""
    for node in nodes:
        if node.state in ("FAILED", "STALLED"):
            error = (node.error or node.state.lower()).split("\n", 1)[0]
            return f"node {node.id} {node.state.lower()}: {error}"
    return "the run's deadline passed before every node ended"
