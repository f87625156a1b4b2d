"""The Run engine's SQL store: the object's one run row, its nodes and its outbox to the read model.

The tables are made by `create` (a run's start) and by nothing else: an object asked about a run it does not
hold (a swept one, or one never started) answers from `exists` without bringing storage back (ADR-0117).
Rows come out typed (`RunRow`, `NodeRow`).

No statement binds more than 100 variables (workerd refuses a 101st), and work over many nodes is a
few statements, not one per node: rows, ids and per-node changes are bound as one JSON text read with
``json_each`` (`insert_nodes`, `nodes_by_id`, `patch_nodes`, `outbox_nodes`; at most `PATCH_BYTES` each),
the same values for many nodes go by id lists (`update_nodes`).
Every change to a node or the run is followed, in the same transaction, by an outbox row naming it;
`outbox` / `ack` feed the D1 projection (run/projection.py), which reads what it names as it is then (never
older than the change that named it, so the outbox ``seq`` orders the read model's rows).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Literal, TypeVar

import msgspec

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.flow_advance import FAILED_NODE_STATES, NODE_TERMINAL_STATES, NodeOrigin, NodeView
from tsumugi_scheduler.json_batches import BATCH_BYTES, json_arrays, json_objects
from tsumugi_scheduler.run.projection import node_rows
from tsumugi_scheduler.run.rows import NodeRow, RunRow
from tsumugi_scheduler.run.schema import DDL, NODE_COLUMNS, upgrade
from tsumugi_scheduler.shard import SqlLike

__all__ = ["PATCH_BYTES", "OutboxBatch", "SqlRunStore", "node_view", "stamped"]

PATCH_BYTES: Final = BATCH_BYTES
"""Most bytes of one `patch_nodes` JSON text (workerd caps a string or row at 4 MiB)."""
_COLUMNS: Final = frozenset(NODE_COLUMNS)
_PATCHABLE: Final = _COLUMNS - {"id"}
_SETTLED_PARENTS: Final = (
    "SELECT p.value AS parent FROM json_each(?) AS p WHERE NOT EXISTS (SELECT 1 FROM node WHERE node.parent = p.value"
    f" AND node.state NOT IN ({', '.join(repr(s) for s in sorted(NODE_TERMINAL_STATES))})) LIMIT 1"
)
_FINISH: Final = (
    "UPDATE node SET state = json_extract(p.value, '$[2]'), result = json_extract(p.value, '$[3]'),"
    " error = json_extract(p.value, '$[4]'), hold_until = json_extract(p.value, '$[5]'), updated_at = ?1,"
    " finished_at = ?1, sent = 1 FROM json_each(?2) AS p"
    " WHERE node.id = json_extract(p.value, '$[0]') AND node.job_id IS json_extract(p.value, '$[1]')"
    f" AND node.state NOT IN ({', '.join(repr(s) for s in sorted(NODE_TERMINAL_STATES))})"
    " RETURNING node.id AS id, node.state AS state"
)

_encode = msgspec.json.encode
T = TypeVar("T")


class OutboxBatch(msgspec.Struct, frozen=True, kw_only=True):
    """The oldest rows of the outbox, as the projection takes them."""

    rows: int
    first_seq: int
    """The oldest seq among them (1: the object's first rows, its start)."""
    up_to_seq: int
    """The newest seq among them (acknowledged once projected)."""
    run_seq: int | None
    """The newest seq naming the run, or None."""


def stamped(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with the times a state change implies, unless given: entering SCHEDULED (a job node's
    start) sets ``scheduled_at``, entering a terminal state ``finished_at``, both to ``updated_at``."""
    out = dict(values)
    state, at = out.get("state"), out.get("updated_at")
    if at is not None and state == "SCHEDULED":
        out.setdefault("scheduled_at", at)
    elif at is not None and state in NODE_TERMINAL_STATES:
        out.setdefault("finished_at", at)
    return out


def node_view(row: Mapping[str, Any]) -> NodeView:
    """What `advance` sees of a stored node."""
    origin: NodeOrigin = row["origin"]
    return NodeView(
        id=str(row["id"]),
        state=str(row["state"]),
        container=bool(row["container"]),
        subflow=row.get("subflow") is not None,
        parent=row["parent"],
        origin=origin,
        after=tuple(msgspec.json.decode(str(row["after"]), type=list[str])),
    )


def _node(row: Mapping[str, Any]) -> NodeRow:
    return msgspec.convert(dict(row), NodeRow)


class SqlRunStore:
    """One run's rows over the object's SQL (``ctx.storage.sql``; tests: ``tsumugi_dev.do_sql``)."""

    def __init__(self, sql: SqlLike) -> None:
        """Serve the object's SQL; nothing is read or created yet."""
        self.sql = sql
        self._views: dict[str, NodeView] | None = None
        self._ready = False

    def exists(self) -> bool:
        """True when the object holds a run's tables (never creates them); upgrades them on first sight."""
        if self._ready:
            return True
        try:
            self.sql.exec("SELECT 1 AS x FROM run LIMIT 0")
        except Exception:  # no such table (each runtime raises its own error type)
            return False
        upgrade(self.sql)
        self._ready = True
        return True

    def create(self) -> None:
        """Make the tables (a run's start; idempotent)."""
        for statement in DDL:
            self.sql.exec(statement)
        upgrade(self.sql)
        self._ready = True

    def forget(self) -> None:
        """The object's storage was deleted: nothing is cached any more."""
        self._views = None
        self._ready = False

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
            rows = self.sql.exec(
                "SELECT id, state, container, subflow, parent, origin, after FROM node ORDER BY seq, id"
            )
            self._views = {str(r["id"]): node_view(r) for r in rows}
        return list(self._views.values())

    # -- reads ----------------------------------------------------------------------------------------------

    def run(self) -> RunRow | None:
        """The run row, or None before start / after deletion."""
        if not self.exists():
            return None
        rows = self.sql.exec("SELECT * FROM run LIMIT 1").toArray()
        return msgspec.convert(dict(rows[0]), RunRow) if rows else None

    def nodes(self) -> list[NodeRow]:
        """Every node in position order."""
        return [_node(r) for r in self.sql.exec("SELECT * FROM node ORDER BY seq, id").toArray()]

    def node(self, node_id: str) -> NodeRow | None:
        """One node, or None."""
        rows = self.sql.exec("SELECT * FROM node WHERE id = ?", node_id).toArray()
        return _node(rows[0]) if rows else None

    def results(self, node_ids: Iterable[str]) -> dict[str, str | None]:
        """The stored results (JSON text) of the nodes among ``node_ids`` that exist."""
        return {k: v.result for k, v in self.nodes_by_id(node_ids, ("result",)).items()}

    def refused(self) -> set[str]:
        """Children refused when they were made (a payload too large for a job: stored NULL)."""
        rows = self.sql.exec("SELECT id FROM node WHERE origin != 'static' AND payload IS NULL")
        return {str(r["id"]) for r in rows}

    def nodes_by_id(self, node_ids: Iterable[str], columns: Sequence[str] = ()) -> dict[str, NodeRow]:
        """The nodes among ``node_ids`` that exist, by id: their ``columns`` (all when empty, ``id`` always).

        Raises:
            ValueError: a column is not a node column.
        """
        if not _COLUMNS.issuperset(columns):
            raise InvalidFieldError(
                "columns",
                f"are not node columns: {sorted(set(columns) - _COLUMNS)}",
                message=f"not node columns: {sorted(set(columns) - _COLUMNS)}",
            )
        wanted = ", ".join(dict.fromkeys(("id", *columns))) if columns else "*"
        found: dict[str, NodeRow] = {}
        for text in json_arrays(dict.fromkeys(node_ids), PATCH_BYTES):
            for row in self.sql.exec(
                f"SELECT {wanted} FROM node WHERE id IN (SELECT value FROM json_each(?))", text
            ):
                found[str(row["id"])] = _node(row)
        return found

    def failed(self, limit: int) -> list[NodeRow]:
        """The first ``limit`` FAILED / STALLED nodes in position order (``id``, ``error``)."""
        marks = ", ".join(repr(s) for s in sorted(FAILED_NODE_STATES))
        rows = self.sql.exec(
            f"SELECT id, error FROM node WHERE state IN ({marks}) ORDER BY seq, id LIMIT ?", limit
        )
        return [_node(r) for r in rows]

    def decisive(self, node_ids: Iterable[str]) -> bool:
        """True when the endings of ``node_ids`` may let a decision fall due: one is not a child, or it was
        among its parent's last unfinished children. False when each is a child whose parent still waits on
        a sibling (then `advance` can decide nothing new: a parent acts only once all its children ended)."""
        views = self._views if self._views is not None else {v.id: v for v in self.views()}
        parents: set[str] = set()
        for node_id in node_ids:
            view = views.get(node_id)
            if view is None or view.parent is None:
                return True
            parents.add(view.parent)
        for text in json_arrays(sorted(parents), PATCH_BYTES):
            if self.sql.exec(_SETTLED_PARENTS, text).toArray():
                return True
        return False

    def count(self) -> int:
        """How many nodes the run holds."""
        return int(self.sql.exec("SELECT COUNT(*) AS n FROM node").one()["n"])

    def next_seq(self) -> int:
        """The position the next runtime node takes."""
        return int(self.sql.exec("SELECT COALESCE(MAX(seq), -1) + 1 AS n FROM node").one()["n"])

    def unsent(self) -> list[NodeRow]:
        """Nodes whose job or child run was decided but not yet confirmed sent (``id``, ``binding``,
        ``payload``, ``options``, ``job_id``, ``child_run_id``, ``hold_until``, ``steps_from``)."""
        return [
            _node(r)
            for r in self.sql.exec(
                "SELECT id, binding, payload, options, job_id, child_run_id, hold_until, steps_from FROM node"
                " WHERE sent = 0 AND"
                " ((state = 'SCHEDULED' AND job_id IS NOT NULL) OR (state = 'RUNNING' AND child_run_id IS NOT NULL))"
                " ORDER BY seq, id"
            ).toArray()
        ]

    def projection_rows(self, run_id: str, up_to_seq: int) -> list[str]:
        """The read-model rows of the nodes the outbox names up to ``up_to_seq`` (run/projection.py)."""
        return node_rows(self.sql, run_id, up_to_seq)

    # -- writes ---------------------------------------------------------------------------------------------

    def insert_run(self, row: RunRow) -> None:
        """Store the run row."""
        values = msgspec.structs.asdict(row)
        self.sql.exec(
            f"INSERT INTO run ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})", *values.values()
        )

    def mark_run_done(self, flag: Literal["noticed", "parent_notified"], resumes: int) -> None:
        """Set ``flag`` unless the run was resumed since ``resumes`` (a resume resets it, and its ending owes
        its own notices and parent call)."""
        self.sql.exec(f"UPDATE run SET {flag} = 1 WHERE resumes = ?", resumes)

    def update_run(self, **values: Any) -> None:
        """Change run columns."""
        assignments = ", ".join(f"{k} = ?" for k in values)
        self.sql.exec(f"UPDATE run SET {assignments}", *values.values())

    def insert_nodes(
        self, rows: Sequence[Mapping[str, Any]], shared: Mapping[str, Any] | None = None
    ) -> None:
        """Insert nodes (an existing id is kept). ``shared`` holds the values every row has, bound once; the
        rest (the columns of the first row) go as JSON, one statement per `PATCH_BYTES` of rows.

        Raises:
            ValueError: a column is not a node column.
        """
        if not rows:
            return
        common = dict(shared or {})
        varying = [c for c in rows[0] if c not in common]
        if not _COLUMNS.issuperset([*varying, *common]):
            raise InvalidFieldError(
                "columns",
                f"are not node columns: {sorted(set(varying).union(common) - _COLUMNS)}",
                message=f"not node columns: {sorted(set(varying).union(common) - _COLUMNS)}",
            )
        picks = [f"json_extract(value, '$[{i}]')" for i in range(len(varying))] + ["?"] * len(common)
        query = (
            f"INSERT OR IGNORE INTO node ({', '.join([*varying, *common])}) SELECT {', '.join(picks)}"
            " FROM json_each(?)"
        )
        for text in json_arrays([[row.get(c) for c in varying] for row in rows], PATCH_BYTES):
            self.sql.exec(query, *common.values(), text)
        if self._views is not None:
            for row in rows:
                self._views.setdefault(str(row["id"]), node_view({**common, **row}))

    def finish_nodes(self, outcomes: Iterable[Sequence[Any]], now: int) -> list[str]:
        """Apply job outcomes ``(node id, job id, state, result, error, hold until)`` to the nodes still waiting
        on that job (it is the node's current job and the node is not terminal), in one statement per
        `PATCH_BYTES`; the ids changed. Give one outcome per (node, job): for two, which applies would be
        arbitrary."""
        changed: list[str] = []
        for text in json_arrays([list(o[:6]) for o in outcomes], PATCH_BYTES):
            for row in self.sql.exec(_FINISH, now, text):
                changed.append(str(row["id"]))
                self._track(str(row["id"]), row)
        return changed

    def update_node(self, node_id: str, **values: Any) -> None:
        """Change node columns (`stamped`)."""
        values = stamped(values)
        assignments = ", ".join(f"{k} = ?" for k in values)
        self.sql.exec(f"UPDATE node SET {assignments} WHERE id = ?", *values.values(), node_id)
        self._track(node_id, values)

    def update_nodes(self, node_ids: Iterable[str], **values: Any) -> None:
        """Set the same ``values`` (`stamped`) on every node of ``node_ids`` (ids bound as JSON, `PATCH_BYTES` a
        statement)."""
        values = stamped(values)
        ids = list(dict.fromkeys(node_ids))
        assignments = ", ".join(f"{k} = ?" for k in values)
        for text in json_arrays(ids, PATCH_BYTES):
            self.sql.exec(
                f"UPDATE node SET {assignments} WHERE id IN (SELECT value FROM json_each(?))",
                *values.values(),
                text,
            )
        for node_id in ids:
            self._track(node_id, values)

    def patch_nodes(self, patches: Mapping[str, Mapping[str, Any]]) -> None:
        """Change each node of ``patches`` (id -> column values, `stamped`). Nodes changing the same columns share
        statements: a value they all take is bound once, the rest go as one JSON object of at most
        `PATCH_BYTES` (node id -> values), so a 1,000-child start is a statement, not 1,000.

        Raises:
            ValueError: a column is not a node column (or is ``id``).
        """
        groups: dict[tuple[str, ...], dict[str, Mapping[str, Any]]] = {}
        for node_id, values in patches.items():
            values = stamped(values)
            groups.setdefault(tuple(sorted(values)), {})[node_id] = values
        for columns, group in groups.items():
            if not _PATCHABLE.issuperset(columns):
                raise InvalidFieldError(
                    "columns",
                    f"are not node columns: {sorted(set(columns) - _PATCHABLE)}",
                    message=f"not node columns: {sorted(set(columns) - _PATCHABLE)}",
                )
            rows = list(group.values())
            same = {c: rows[0][c] for c in columns if all(r[c] == rows[0][c] for r in rows)}
            varying = [c for c in columns if c not in same]
            if not varying:
                self.update_nodes(group, **same)
                continue
            assignments = [f"{c} = ?" for c in same] + [
                f"{c} = json_extract(p.value, '$[{i}]')" for i, c in enumerate(varying)
            ]
            query = f"UPDATE node SET {', '.join(assignments)} FROM json_each(?) AS p WHERE node.id = p.key"
            for text in json_objects({k: [v[c] for c in varying] for k, v in group.items()}, PATCH_BYTES):
                self.sql.exec(query, *same.values(), text)
            for node_id, values in group.items():
                self._track(node_id, values)

    def _track(self, node_id: str, values: Mapping[str, Any]) -> None:
        if self._views is not None and "state" in values and node_id in self._views:
            self._views[node_id] = msgspec.structs.replace(self._views[node_id], state=str(values["state"]))

    # -- outbox ---------------------------------------------------------------------------------------------

    def outbox_run(self, run_id: str) -> None:
        """Mark the run for projection (its state is read when projected)."""
        self.sql.exec("INSERT INTO run_outbox (kind, target) VALUES ('run', ?)", run_id)

    def outbox_nodes(self, node_ids: Iterable[str]) -> None:
        """Mark ``node_ids`` for projection (one statement per `PATCH_BYTES` of ids)."""
        for text in json_arrays(sorted(set(node_ids)), PATCH_BYTES):
            self.sql.exec(
                "INSERT INTO run_outbox (kind, target) SELECT 'node', value FROM json_each(?)", text
            )

    def outbox(self, limit: int) -> list[Mapping[str, Any]]:
        """The oldest ``limit`` outbox rows (``seq``, ``kind``, ``target``)."""
        rows = self.sql.exec("SELECT seq, kind, target FROM run_outbox ORDER BY seq LIMIT ?", limit).toArray()
        return [dict(r) for r in rows]

    def outbox_batch(self, limit: int) -> OutboxBatch | None:
        """The oldest ``limit`` outbox rows in one figure each (None when the outbox is empty)."""
        row = self.sql.exec(
            "SELECT COUNT(*) AS n, MIN(seq) AS first, MAX(seq) AS up_to, MAX(CASE WHEN kind = 'run' THEN seq END)"
            " AS run_seq FROM (SELECT seq, kind, target FROM run_outbox ORDER BY seq LIMIT ?)",
            limit,
        ).one()
        if not row["n"]:
            return None
        return OutboxBatch(
            rows=int(row["n"]),
            first_seq=int(row["first"]),
            up_to_seq=int(row["up_to"]),
            run_seq=None if row["run_seq"] is None else int(row["run_seq"]),
        )

    def ack(self, up_to_seq: int) -> None:
        """Forget outbox rows up to ``up_to_seq`` (projected)."""
        self.sql.exec("DELETE FROM run_outbox WHERE seq <= ?", up_to_seq)

    def outbox_empty(self) -> bool:
        """True when everything is projected."""
        return not self.sql.exec("SELECT 1 AS x FROM run_outbox LIMIT 1").toArray()
