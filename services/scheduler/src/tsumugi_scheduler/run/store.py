"""The Run Durable Object's SQL: its one run row, its nodes and its outbox to the read model.

Bulk inserts are chunked so no statement binds more than `MAX_BINDS` variables (workerd refuses a 101st).
Every change to a node or the run is followed, in the same transaction, by an outbox row holding its
snapshot; `outbox` / `ack` feed the D1 projection.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, TypeVar

import msgspec

from tsumugi_core.flow_advance import NodeView, progress
from tsumugi_scheduler.run.schema import DDL, NODE_COLUMNS
from tsumugi_scheduler.shard import SqlLike

__all__ = ["MAX_BINDS", "RunStore", "node_view"]

MAX_BINDS: Final = 100
"""Bind variables per statement on Cloudflare's Durable Object SQL."""

_encode = msgspec.json.encode
T = TypeVar("T")


def node_view(row: Mapping[str, Any]) -> NodeView:
    """What `advance` sees of a stored node."""
    return NodeView(id=str(row["id"]), state=str(row["state"]), container=bool(row["container"]),
                    subflow=row.get("subflow") is not None, parent=row["parent"], origin=row["origin"],
                    after=tuple(msgspec.json.decode(str(row["after"]), type=list[str])))  # fmt: skip


class RunStore:
    """One run's rows over the object's SQL."""

    def __init__(self, sql: SqlLike) -> None:
        """Open (and create, idempotently) the tables."""
        self.sql = sql
        for statement in DDL:
            sql.exec(statement)
        self._views: dict[str, NodeView] | None = None

    def atomically(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` in one transaction; a failure also drops the cached views (they may be ahead)."""
        try:
            return self.sql.transaction_sync(fn)
        except BaseException:
            self._views = None
            raise

    def views(self) -> list[NodeView]:
        """Every node as `advance` sees it, in position order.

        Read once per object instance, then kept current by this store's own writes (the object is the
        only writer of its rows), so a tick over a 10,000-node run does not read them all again.
        """
        if self._views is None:
            rows = self.sql.exec("SELECT id, state, container, subflow, parent, origin, after FROM node"
                                 " ORDER BY seq, id")  # fmt: skip
            self._views = {str(r["id"]): node_view(r) for r in rows}
        return list(self._views.values())

    # -- reads ----------------------------------------------------------------------------------------------

    def run(self) -> dict[str, Any] | None:
        """The run row, or None before start / after deletion."""
        rows = self.sql.exec("SELECT * FROM run LIMIT 1").toArray()
        return dict(rows[0]) if rows else None

    def nodes(self) -> list[dict[str, Any]]:
        """Every node in position order."""
        return [dict(r) for r in self.sql.exec("SELECT * FROM node ORDER BY seq, id").toArray()]

    def node(self, node_id: str) -> dict[str, Any] | None:
        """One node, or None."""
        rows = self.sql.exec("SELECT * FROM node WHERE id = ?", node_id).toArray()
        return dict(rows[0]) if rows else None

    def children_states(self, parent: str) -> list[str]:
        """The states of ``parent``'s children."""
        return [str(r["state"]) for r in self.sql.exec("SELECT state FROM node WHERE parent = ?", parent)]

    def count(self) -> int:
        """How many nodes the run holds."""
        return int(self.sql.exec("SELECT COUNT(*) AS n FROM node").one()["n"])

    def next_seq(self) -> int:
        """The position the next runtime node takes."""
        return int(self.sql.exec("SELECT COALESCE(MAX(seq), -1) + 1 AS n FROM node").one()["n"])

    def unsent(self) -> list[dict[str, Any]]:
        """Nodes whose job or child run was decided but not yet confirmed sent."""
        return [dict(r) for r in self.sql.exec(
            "SELECT * FROM node WHERE sent = 0 AND ((state = 'SCHEDULED' AND job_id IS NOT NULL)"
            " OR (state = 'RUNNING' AND child_run_id IS NOT NULL)) ORDER BY seq, id").toArray()]  # fmt: skip

    # -- writes ---------------------------------------------------------------------------------------------

    def insert_run(self, row: Mapping[str, Any]) -> None:
        """Store the run row."""
        columns = list(row)
        self.sql.exec(f"INSERT INTO run ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                      *row.values())  # fmt: skip

    def update_run(self, **values: Any) -> None:
        """Change run columns."""
        assignments = ", ".join(f"{k} = ?" for k in values)
        self.sql.exec(f"UPDATE run SET {assignments}", *values.values())

    def insert_nodes(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert nodes (an existing id is kept), in chunks within `MAX_BINDS`."""
        per = MAX_BINDS // len(NODE_COLUMNS)
        one = f"({', '.join('?' * len(NODE_COLUMNS))})"
        for start in range(0, len(rows), per):
            chunk = rows[start : start + per]
            values = [row.get(c) for row in chunk for c in NODE_COLUMNS]
            self.sql.exec(f"INSERT OR IGNORE INTO node ({', '.join(NODE_COLUMNS)}) VALUES "
                          f"{', '.join([one] * len(chunk))}", *values)  # fmt: skip
        if self._views is not None:
            for row in rows:
                self._views.setdefault(str(row["id"]), node_view(row))

    def update_node(self, node_id: str, **values: Any) -> None:
        """Change node columns."""
        assignments = ", ".join(f"{k} = ?" for k in values)
        self.sql.exec(f"UPDATE node SET {assignments} WHERE id = ?", *values.values(), node_id)
        if self._views is not None and "state" in values and node_id in self._views:
            self._views[node_id] = msgspec.structs.replace(self._views[node_id], state=str(values["state"]))

    # -- outbox ---------------------------------------------------------------------------------------------

    def outbox_run(self, run: Mapping[str, Any], output: str | None = None,
                   states: Iterable[str] | None = None) -> None:  # fmt: skip
        """Append the run's snapshot (with its progress counters and its ``output`` JSON text).

        ``states`` are every node's current state when the caller has them (else they are read).
        """
        if states is None:
            states = (str(r["state"]) for r in self.sql.exec("SELECT state FROM node"))
        counts = progress(states)
        snapshot = {
            "id": run["id"], "flow": run["flow"], "state": run["state"], "input": run["input"],
            "created_at": run["created_at"], "updated_at": run["updated_at"], "node_total": counts.node_total,
            "node_done": counts.node_done, "node_failed": counts.node_failed,
            "parent_run_id": run["parent_run_id"], "parent_node_id": run["parent_node_id"], "output": output,
        }  # fmt: skip
        self.sql.exec("INSERT INTO run_outbox (kind, target, snapshot) VALUES ('run', ?, ?)", run["id"],
                      _encode(snapshot).decode())  # fmt: skip

    def outbox_nodes(self, run_id: str, node_ids: Iterable[str]) -> None:
        """Append the snapshots of ``node_ids`` as they are now."""
        ids = sorted(set(node_ids))
        for start in range(0, len(ids), MAX_BINDS):
            chunk = ids[start : start + MAX_BINDS]
            rows = self.sql.exec(f"SELECT * FROM node WHERE id IN ({', '.join('?' * len(chunk))})", *chunk)
            snapshots = [(row["id"], _encode(_node_snapshot(run_id, row)).decode()) for row in rows]
            for s in range(0, len(snapshots), MAX_BINDS // 2):
                part = snapshots[s : s + MAX_BINDS // 2]
                self.sql.exec("INSERT INTO run_outbox (kind, target, snapshot) VALUES "
                              + ", ".join(["('node', ?, ?)"] * len(part)), *[v for p in part for v in p])  # fmt: skip

    def outbox(self, limit: int) -> list[dict[str, Any]]:
        """The oldest ``limit`` outbox rows."""
        return [
            dict(r) for r in self.sql.exec("SELECT * FROM run_outbox ORDER BY seq LIMIT ?", limit).toArray()
        ]

    def ack(self, up_to_seq: int) -> None:
        """Forget outbox rows up to ``up_to_seq`` (projected)."""
        self.sql.exec("DELETE FROM run_outbox WHERE seq <= ?", up_to_seq)

    def outbox_empty(self) -> bool:
        """True when everything is projected."""
        return not self.sql.exec("SELECT 1 AS x FROM run_outbox LIMIT 1").toArray()


def _node_snapshot(run_id: str, row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "run_id": run_id, "node_id": row["id"], "binding": row["binding"], "state": row["state"],
        "container": bool(row["container"]), "parent": row["parent"], "origin": row["origin"],
        "after": row["after"], "job_id": row["job_id"], "child_run_id": row["child_run_id"],
        "result": row["result"] if row["container"] else None, "error": row["error"], "position": row["seq"],
        "created_at": row["created_at"], "updated_at": row["updated_at"],
    }  # fmt: skip
