"""Run snapshots into the D1 read model (``run`` / ``run_node``), guarded by the outbox sequence.

An upsert only replaces a row when its ``seq`` is newer, so a replayed or stale snapshot never overwrites a
newer one; ``id``, ``created_at`` and ``flow`` (run) and ``run_id``, ``node_id``, ``created_at``, ``binding``
(node) never change once written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec

__all__ = ["latest", "project_runs"]

_RUN: Final = (
    "INSERT INTO run (id, seq, flow, state, input, node_total, node_done, node_failed, created_at, updated_at,"
    " parent_run_id, parent_node_id, output) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE"
    " SET"
    " seq = excluded.seq, state = excluded.state, input = excluded.input, node_total = excluded.node_total,"
    " node_done = excluded.node_done, node_failed = excluded.node_failed, updated_at = excluded.updated_at,"
    " parent_run_id = excluded.parent_run_id, parent_node_id = excluded.parent_node_id, output = excluded.output"
    " WHERE excluded.seq > run.seq"
)
_NODE: Final = (
    "INSERT INTO run_node (run_id, node_id, seq, binding, state, container, parent, origin, after, job_id,"
    " result, error, position, created_at, updated_at, child_run_id) VALUES"
    " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, node_id) DO UPDATE SET"
    " seq = excluded.seq, state = excluded.state, container = excluded.container, parent = excluded.parent,"
    " origin = excluded.origin, after = excluded.after, job_id = excluded.job_id, result = excluded.result,"
    " error = excluded.error, position = excluded.position, updated_at = excluded.updated_at,"
    " child_run_id = excluded.child_run_id WHERE excluded.seq > run_node.seq"
)


def _statement(d1: Any, row: Mapping[str, Any]) -> Any:
    s: dict[str, Any] = msgspec.json.decode(str(row["snapshot"]))
    seq = int(row["seq"])
    if row["kind"] == "run":
        return d1.prepare(_RUN).bind(
            s["id"], seq, s["flow"], s["state"], s["input"], s["node_total"], s["node_done"], s["node_failed"],
            s["created_at"], s["updated_at"], s["parent_run_id"], s["parent_node_id"], s.get("output"),
        )  # fmt: skip
    return d1.prepare(_NODE).bind(
        s["run_id"], s["node_id"], seq, s["binding"], s["state"], int(s["container"]), s["parent"], s["origin"],
        s["after"], s["job_id"], s["result"], s["error"], s["position"], s["created_at"], s["updated_at"],
        s["child_run_id"],
    )  # fmt: skip


def latest(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The newest snapshot of each run and node among ``rows`` (in feed order): an older one would be
    overwritten by the newer in the same batch anyway, so it is not sent."""
    newest: dict[tuple[str, str], Mapping[str, Any]] = {}
    for row in rows:
        newest[(str(row["kind"]), str(row["target"]))] = row
    return sorted(newest.values(), key=lambda r: int(r["seq"]))


async def project_runs(d1: Any, rows: Sequence[Mapping[str, Any]]) -> None:
    """Apply outbox ``rows`` (``seq``, ``kind``, ``target``, ``snapshot``) in one D1 batch, newest of each."""
    if rows:
        await d1.batch([_statement(d1, row) for row in latest(rows)])
