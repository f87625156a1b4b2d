"""Run snapshots into the D1 read model (``run`` / ``run_node``), guarded by the outbox sequence.

An upsert only replaces a row when its ``seq`` is newer, so a replayed or stale snapshot never overwrites a
newer one; ``id``, ``created_at`` and ``flow`` (run) and ``run_id``, ``node_id``, ``created_at``, ``binding``
(node) never change once written. Node snapshots, the many, go as JSON arrays read with ``json_each`` (one
statement per `PAGE_BYTES`, not one per node: a 1,000-child fan-out is a statement or two of D1's 1,000
queries per invocation); the run's own snapshot is one statement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from tsumugi_core.options import MAX_ERROR_CHARS

__all__ = ["PAGE_BYTES", "node_rows", "project_runs"]

_RUN: Final = (
    "INSERT INTO run (id, seq, flow, state, input, node_total, node_done, node_failed, created_at, updated_at,"
    " parent_run_id, parent_node_id, output) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE"
    " SET"
    " seq = excluded.seq, state = excluded.state, input = excluded.input, node_total = excluded.node_total,"
    " node_done = excluded.node_done, node_failed = excluded.node_failed, updated_at = excluded.updated_at,"
    " parent_run_id = excluded.parent_run_id, parent_node_id = excluded.parent_node_id, output = excluded.output,"
    " flow = excluded.flow, created_at = excluded.created_at"
    " WHERE excluded.created_at > run.created_at OR (excluded.created_at = run.created_at AND excluded.seq > run.seq)"
)
"""A newer snapshot of the same run wins by seq; a run started again under the same id after its object was
swept (its seq counts from 1 again) wins by its later ``created_at``."""
_STALE_NODES: Final = "DELETE FROM run_node WHERE run_id = ? AND created_at < ?"
"""The nodes of an earlier run under the same id: every node of a run is made at or after its start."""
_NODE_COLUMNS: Final = (
    "run_id",
    "node_id",
    "seq",
    "binding",
    "state",
    "container",
    "parent",
    "origin",
    "after",
    "job_id",
    "result",
    "error",
    "position",
    "created_at",
    "updated_at",
    "child_run_id",
    "scheduled_at",
    "finished_at",
)
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
PAGE_BYTES: Final = 1_000_000
"""Bytes of node rows per JSON text (a page may pass it by one node; a node's row is small: ids are at most
512 characters, its error is cut to `MAX_ERROR_CHARS`, a container's result is its fan-out summary), well
under D1's 2 MB per value."""
_NODE_ROWS: Final = (
    "WITH o AS (SELECT target, MAX(seq) AS seq FROM run_outbox WHERE kind = 'node' AND seq <= ? GROUP BY target),"
    " r AS (SELECT o.target AS t, json_array(?, n.id, o.seq, n.binding, n.state, n.container, n.parent, n.origin,"
    " n.after, n.job_id, CASE WHEN n.container = 1 THEN n.result END,"
    f" substr(n.error, 1, {MAX_ERROR_CHARS}), n.seq, n.created_at, n.updated_at, n.child_run_id, n.scheduled_at,"
    " n.finished_at) AS v FROM o JOIN node AS n ON n.id = o.target),"
    " s AS (SELECT v, SUM(length(CAST(v AS BLOB))) OVER (ORDER BY t ROWS UNBOUNDED PRECEDING) AS upto FROM r)"
    " SELECT '[' || group_concat(v, ',') || ']' AS rows FROM s GROUP BY CAST(upto / ? AS INTEGER) ORDER BY MIN(upto)"
)
"""The Run object's side: `_NODE_COLUMNS` of the nodes its outbox names up to a seq, as JSON texts of about
`PAGE_BYTES` each (pages by the running sum of the rows' sizes)."""


def node_rows(sql: Any, run_id: str, up_to_seq: int, page_bytes: int = PAGE_BYTES) -> list[str]:
    """The read-model rows of the nodes named in the Run object's outbox up to ``up_to_seq``, each with the
    seq of its newest outbox row and its values as they are now: JSON texts of value arrays in `_NODE_COLUMNS`
    order of about ``page_bytes`` each, built by SQLite in one statement (no Python per node)."""
    rows = sql.exec(_NODE_ROWS, up_to_seq, run_id, page_bytes)
    return [str(row["rows"]) for row in rows]


async def project_runs(
    d1: Any, node_texts: Sequence[str], run: tuple[int, Mapping[str, Any]] | None, first: bool = False
) -> None:
    """Upsert ``run`` (outbox seq, run row with its progress counters and ``output``) and the nodes of
    ``node_texts`` (`node_rows`) in one D1 batch. ``first``: the batch starts the Run object's outbox, so the
    rows of an earlier run under the same id (swept since) are replaced, its nodes deleted."""
    statements: list[Any] = []
    if run is not None:
        seq, r = run
        statements.append(
            d1.prepare(_RUN).bind(
                r["id"],
                seq,
                r["flow"],
                r["state"],
                r["input"],
                r["node_total"],
                r["node_done"],
                r["node_failed"],
                r["created_at"],
                r["updated_at"],
                r["parent_run_id"],
                r["parent_node_id"],
                r["output"],
            )
        )
        if first:
            statements.append(d1.prepare(_STALE_NODES).bind(r["id"], r["created_at"]))
    statements += [d1.prepare(_NODES).bind(text) for text in node_texts]
    if statements:
        await d1.batch(statements)
