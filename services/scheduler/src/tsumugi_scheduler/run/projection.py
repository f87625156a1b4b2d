"""Run snapshots into the D1 read model (``run`` / ``run_node``), guarded by the outbox sequence.

An upsert only replaces a row when its ``seq`` is newer, so a replayed or stale snapshot never overwrites a
newer one; ``id``, ``created_at`` and ``flow`` (run) and ``run_id``, ``node_id``, ``created_at``, ``binding``
(node) never change once written. Node snapshots, the many, go as JSON arrays read with ``json_each`` (one
statement per `BATCH_BYTES`, not one per node: a 1,000-child fan-out is a statement or two of D1's 1,000
queries per invocation); the run's own snapshot is one statement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from tsumugi_core.options import MAX_ERROR_CHARS

__all__ = ["NODES_PER_TEXT", "node_rows", "project_runs"]

_RUN: Final = (
    "INSERT INTO run (id, seq, flow, state, input, node_total, node_done, node_failed, created_at, updated_at,"
    " parent_run_id, parent_node_id, output) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE"
    " SET"
    " seq = excluded.seq, state = excluded.state, input = excluded.input, node_total = excluded.node_total,"
    " node_done = excluded.node_done, node_failed = excluded.node_failed, updated_at = excluded.updated_at,"
    " parent_run_id = excluded.parent_run_id, parent_node_id = excluded.parent_node_id, output = excluded.output"
    " WHERE excluded.seq > run.seq"
)
_NODE_COLUMNS: Final = (
    "run_id", "node_id", "seq", "binding", "state", "container", "parent", "origin", "after", "job_id", "result",
    "error", "position", "created_at", "updated_at", "child_run_id", "scheduled_at", "finished_at",
)  # fmt: skip
_NODES: Final = (
    f"INSERT INTO run_node ({', '.join(_NODE_COLUMNS)}) SELECT "
    + ", ".join(f"json_extract(value, '$[{i}]')" for i in range(len(_NODE_COLUMNS)))
    + " FROM json_each(?) WHERE true ON CONFLICT (run_id, node_id) DO UPDATE SET "
    + ", ".join(
        f"{c} = excluded.{c}"
        for c in _NODE_COLUMNS
        if c not in ("run_id", "node_id", "binding", "created_at")
    )
    + " WHERE excluded.seq > run_node.seq"
)
"""Upserts the nodes of one JSON array of value arrays (in `_NODE_COLUMNS` order)."""
NODES_PER_TEXT: Final = 100
"""Nodes per JSON text: each is at most ~13 KB (an error is cut to `MAX_ERROR_CHARS`, a container's result
is its fan-out summary), so a text stays under ~1.3 MB."""
_NODE_ROWS: Final = (
    "SELECT json_group_array(json_array(?, n.id, o.seq, n.binding, n.state, n.container, n.parent, n.origin,"
    " n.after, n.job_id, CASE WHEN n.container = 1 THEN n.result END,"
    f" substr(n.error, 1, {MAX_ERROR_CHARS}), n.seq, n.created_at, n.updated_at, n.child_run_id, n.scheduled_at,"
    " n.finished_at)) AS rows"
    " FROM (SELECT target, MAX(seq) AS seq FROM run_outbox WHERE kind = 'node' AND seq <= ? GROUP BY target"
    " ORDER BY target LIMIT ? OFFSET ?) AS o JOIN node AS n ON n.id = o.target"
)
"""The Run object's side: `_NODE_COLUMNS` of one page of the nodes its outbox names up to a seq."""


def node_rows(sql: Any, run_id: str, up_to_seq: int, nodes: int) -> list[str]:
    """The read-model rows of the nodes named in the Run object's outbox up to ``up_to_seq`` (``nodes`` of
    them), each with the seq of its newest outbox row and its values as they are now: JSON texts of value
    arrays in `_NODE_COLUMNS` order, built by SQLite (no Python per node), `NODES_PER_TEXT` nodes a text so one
    stays well under D1's 2 MB per value."""
    texts: list[str] = []
    for offset in range(0, nodes, NODES_PER_TEXT):
        text = str(sql.exec(_NODE_ROWS, run_id, up_to_seq, NODES_PER_TEXT, offset).one()["rows"])
        if text != "[]":
            texts.append(text)
    return texts


async def project_runs(d1: Any, node_texts: Sequence[str], run: tuple[int, Mapping[str, Any]] | None) -> None:
    """Upsert the nodes of ``node_texts`` (`node_rows`) and ``run`` (outbox seq, run row with its progress
    counters and ``output``) in one D1 batch."""
    statements = [d1.prepare(_NODES).bind(text) for text in node_texts]
    if run is not None:
        seq, r = run
        statements.append(d1.prepare(_RUN).bind(
            r["id"], seq, r["flow"], r["state"], r["input"], r["node_total"], r["node_done"], r["node_failed"],
            r["created_at"], r["updated_at"], r["parent_run_id"], r["parent_node_id"], r["output"],
        ))  # fmt: skip
    if statements:
        await d1.batch(statements)
