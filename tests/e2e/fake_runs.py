"""Flows and runs for the fake REST API, used when ``FakeApi(flows=True)``.

Source: docs/reference/original.md §4.5 shapes.

The runs cover what the dashboard draws: a completed fan-out (3 children) that is also a subflow's child, a
failed run whose downstream node was skipped while an independent branch completed, a running run (a fan-out
half done, a node waiting on it), a run with a subflow node, and filler runs so the list has a second page.
Timestamps follow the Run DO's rules (3.11): static nodes are created with the run, fan-out children when their
container expands; a node's ``updated_at`` is its last change. Two keys go past the original, as the scheduler
serves them (docs/rest-api.md): a node's ``waiting_on`` (a PENDING node's unsettled dependencies, else ``[]``)
and the run's ``output`` (JSON text of the declared output node's result, once COMPLETED; else null).
"""

from __future__ import annotations

import json
import re
import urllib.parse
from typing import Any

from tests.e2e.fake_api import FAILED_ID, NOW, SCHEDULED_ID

FLOWS = ["etl", "greetings", "nightly"]
TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "STALLED", "SKIPPED"}

FANOUT_RUN = "greetings:fan1"
FAILED_RUN = "etl:failed1"
RUNNING_RUN = "greetings:running1"
SUBFLOW_RUN = "nightly:sub1"


def _node(
    node_id: str,
    state: str,
    created: int,
    updated: int,
    position: int,
    *,
    binding: str = "Hello",
    after: list[str] | None = None,
    container: bool = False,
    parent: str | None = None,
    origin: str = "static",
    job_id: str | None = None,
    child_run_id: str | None = None,
    result: Any = None,
    error: str | None = None,
    waiting_on: list[str] | None = None,
) -> dict[str, Any]:
    return {
        "id": node_id,
        "binding": binding,
        "state": state,
        "container": container,
        "parent": parent,
        "origin": origin,
        "after": after or [],
        "job_id": job_id,
        "child_run_id": child_run_id,
        "result": None if result is None else json.dumps(result),
        "error": error,
        "position": position,
        "created_at": created,
        "updated_at": updated,
        "waiting_on": waiting_on or [],
    }


def _run(
    run_id: str,
    state: str,
    nodes: list[dict[str, Any]],
    created: int,
    updated: int,
    run_input: Any,
    parent: tuple[str, str] | None = None,
    output: Any = None,
) -> dict[str, Any]:
    done = sum(1 for n in nodes if n["state"] in TERMINAL)
    failed = sum(1 for n in nodes if n["state"] in ("FAILED", "STALLED"))
    run = {
        "id": run_id,
        "flow": run_id.split(":")[0],
        "state": state,
        "node_total": len(nodes),
        "node_done": done,
        "node_failed": failed,
        "created_at": created,
        "updated_at": updated,
        "input": json.dumps(run_input),
        "parent_run_id": parent[0] if parent else None,
        "parent_node_id": parent[1] if parent else None,
        "retryable": state == "FAILED",
        "output": None if output is None else json.dumps(output),
    }
    return {"run": run, "nodes": nodes}


T0 = NOW - 60_000  # the fan-out run starts here

FANOUT = _run(
    FANOUT_RUN,
    "COMPLETED",
    [
        _node("names", "COMPLETED", T0, T0 + 3_000, 0, binding="Names", job_id="Names#0:names1"),
        _node(
            "hello",
            "COMPLETED",
            T0,
            T0 + 30_000,
            1,
            after=["names"],
            container=True,
            result={"total": 3, "succeeded": 3, "failed": 0},
        ),
        _node(
            "report",
            "COMPLETED",
            T0,
            T0 + 32_000,
            2,
            binding="Report",
            after=["hello"],
            job_id="Report#0:report1",
        ),
        _node(
            "hello:0",
            "COMPLETED",
            T0 + 3_000,
            T0 + 10_000,
            3,
            parent="hello",
            origin="fanOut",
            job_id="Hello#0:hello0",
        ),
        _node(
            "hello:1",
            "COMPLETED",
            T0 + 3_000,
            T0 + 15_000,
            4,
            parent="hello",
            origin="fanOut",
            job_id="Hello#0:hello1",
        ),
        _node(
            "hello:2",
            "COMPLETED",
            T0 + 3_000,
            T0 + 30_000,
            5,
            parent="hello",
            origin="fanOut",
            job_id="Hello#0:hello2",
        ),
    ],
    T0,
    T0 + 32_000,
    {"names": ["a", "b", "c"]},
    parent=(SUBFLOW_RUN, "greet"),
    output={"greeted": 3},
)

F0 = NOW - 120_000
FAILED = _run(
    FAILED_RUN,
    "FAILED",
    [
        _node("extract", "COMPLETED", F0, F0 + 2_000, 0, binding="Extract", job_id="Extract#0:extract1"),
        _node(
            "transform",
            "FAILED",
            F0,
            F0 + 9_000,
            1,
            binding="SendMail",
            after=["extract"],
            job_id=FAILED_ID,
            error="SmtpError: mailbox full (third)",
        ),
        _node(
            "audit",
            "COMPLETED",
            F0,
            F0 + 6_000,
            2,
            binding="Audit",
            after=["extract"],
            job_id="Audit#0:audit1",
        ),
        _node("load", "SKIPPED", F0, F0 + 9_000, 3, binding="Load", after=["transform", "audit"]),
    ],
    F0,
    F0 + 9_000,
    {"day": "2026-01-01"},
)

R0 = NOW - 20_000
RUNNING = _run(
    RUNNING_RUN,
    "RUNNING",
    [
        _node("names", "COMPLETED", R0, R0 + 2_000, 0, binding="Names", job_id="Names#0:names2"),
        _node("hello", "RUNNING", R0, R0 + 10_000, 1, after=["names"], container=True),
        _node("report", "PENDING", R0, R0, 2, binding="Report", after=["hello"], waiting_on=["hello"]),
        _node(
            "hello:0",
            "COMPLETED",
            R0 + 2_000,
            R0 + 10_000,
            3,
            parent="hello",
            origin="fanOut",
            job_id="Hello#0:hello3",
        ),
        _node(
            "hello:1",
            "SCHEDULED",
            R0 + 2_000,
            R0 + 2_000,
            4,
            parent="hello",
            origin="fanOut",
            job_id=SCHEDULED_ID,
        ),
        _node(
            "hello:2",
            "SCHEDULED",
            R0 + 2_000,
            R0 + 2_000,
            5,
            parent="hello",
            origin="fanOut",
            job_id="Hello#0:hello5",
        ),
    ],
    R0,
    R0 + 10_000,
    {"names": ["x", "y", "z"]},
)

S0 = NOW - 70_000
SUBFLOW = _run(
    SUBFLOW_RUN,
    "COMPLETED",
    [
        _node("prepare", "COMPLETED", S0, T0, 0, binding="Prepare", job_id="Prepare#0:prepare1"),
        _node(
            "greet", "COMPLETED", S0, T0 + 32_000, 1, binding="", after=["prepare"], child_run_id=FANOUT_RUN
        ),
        _node(
            "notify",
            "COMPLETED",
            S0,
            T0 + 33_000,
            2,
            binding="Notify",
            after=["greet"],
            job_id="Notify#0:notify1",
        ),
    ],
    S0,
    T0 + 33_000,
    {},
)

FAILED["run"]["failure"] = (
    "node transform failed: SmtpError: mailbox full (third)"  # as GET /api/runs/{id} says it
)

DETAILS = {r["run"]["id"]: r for r in (FANOUT, FAILED, RUNNING, SUBFLOW)}

WIDE_RUN = "etl:wide1"
W0 = NOW - 90_000


def _wide() -> dict[str, Any]:
    """A graph far larger than its panel (the DAG's zoom and pan): source -> 36 parts and a 300-child fan-out
    -> 6 merges (each after 6 parts) -> report; 4 columns, 37 rows."""
    states = ("COMPLETED", "COMPLETED", "RUNNING", "QUEUED")
    nodes = [_node("source", "COMPLETED", W0, W0 + 1_000, 0, binding="Extract", job_id="Extract#0:wsrc")]
    nodes += [
        _node(f"part-{i:02d}", states[i % 4], W0, W0 + 5_000, 1 + i, binding="Transform", after=["source"])
        for i in range(36)
    ]
    nodes.append(_node("shards", "RUNNING", W0, W0 + 2_000, 37, after=["source"], container=True))
    nodes += [
        _node(
            f"merge-{m}",
            "PENDING",
            W0,
            W0,
            38 + m,
            binding="Merge",
            after=[f"part-{m * 6 + i:02d}" for i in range(6)],
        )
        for m in range(6)
    ]
    nodes.append(
        _node(
            "report",
            "PENDING",
            W0,
            W0,
            44,
            binding="Report",
            after=[f"merge-{m}" for m in range(6)] + ["shards"],
        )
    )
    nodes += [
        _node(
            f"shards:{i}",
            "COMPLETED" if i < 120 else "SCHEDULED",
            W0 + 2_000,
            W0 + 2_000 + 100 * i,
            45 + i,
            parent="shards",
            origin="fanOut",
            job_id=f"Hello#0:wshard{i}",
        )
        for i in range(300)
    ]
    return _run(WIDE_RUN, "RUNNING", nodes, W0, W0 + 32_000, {"day": "2026-01-01"})


# Answered by id, but not listed: the list's figures (26 runs, two pages) stay as the tests know them.
UNLISTED = {WIDE_RUN: _wide()}

FILLER = [
    {
        "id": f"greetings:bulk{i:02d}",
        "flow": "greetings",
        "state": "COMPLETED",
        "node_total": 6,
        "node_done": 6,
        "node_failed": 0,
        "created_at": NOW - 600_000 - i * 1_000,
        "updated_at": NOW - 500_000 - i * 1_000,
    }
    for i in range(22)
]

_SUMMARY_KEYS = ("id", "flow", "state", "node_total", "node_done", "node_failed", "created_at", "updated_at")
RUNS = [{k: d["run"][k] for k in _SUMMARY_KEYS} for d in DETAILS.values()] + FILLER


def list_runs(query: str) -> dict[str, Any]:
    """GET /api/runs: exact ``state`` / ``flow``, ``limit`` (20, max 100), ``offset``; newest update first."""
    params = dict(urllib.parse.parse_qsl(query))
    rows = [
        r
        for r in RUNS
        if (not params.get("state") or r["state"] == params["state"])
        and (not params.get("flow") or r["flow"] == params["flow"])
    ]
    rows.sort(key=lambda r: (r["updated_at"], r["id"]), reverse=True)
    limit = min(100, int(params.get("limit") or 20))
    offset = int(params.get("offset") or 0)
    return {"runs": rows[offset : offset + limit], "total": len(rows)}


def start_run(body: Any) -> tuple[int, Any]:
    """POST /api/runs with the scheduler's messages; the run id is ``<flow>:<id>`` (``new1`` without one)."""
    if not isinstance(body, dict):
        return 400, {"error": "body must be an object"}
    fields: dict[str, Any] = body  # pyright: ignore[reportUnknownVariableType]
    flow = fields.get("flow")
    if not flow:
        return 400, {"error": "flow is required"}
    if flow not in FLOWS:
        return 400, {"error": f"unknown flow: {flow}"}
    if "input" not in fields:
        return 400, {"error": "input is required"}
    local = fields.get("id", "new1")
    if not isinstance(local, str):
        return 400, {"error": "id must be a string"}
    if not re.fullmatch(r"[A-Za-z0-9_-]+", local):
        return 400, {"error": f"id is invalid: invalid localId: {local}"}
    return 201, {"id": f"{flow}:{local}"}


def answer(method: str, path: str, query: str, body: Any) -> tuple[int, Any] | None:
    """The answer of the flows' routes, or None for a path that is not theirs (run retry / cancel: the
    fake's generic ``{"ok": true}``)."""
    if method == "POST":
        return start_run(body) if path == "/api/runs" else None
    if path == "/api/flows":
        return 200, {"flows": FLOWS}
    if path == "/api/runs":
        return 200, list_runs(query)
    for run_id, detail in (DETAILS | UNLISTED).items():
        if path == f"/api/runs/{urllib.parse.quote(run_id, safe='')}":
            return 200, detail
    return None
