"""Applying `advance`'s decisions to a run's rows (synchronous, inside one transaction of the engine's tick).

A start reserves the node's job id (derived from the run, its incarnation's nonce, the node and the node's
resume count, ADR-0115, so resending it is absorbed by the shard as a re-enqueue of the same id) and marks the
node SCHEDULED but not ``sent``; the engine hands every unsent node to the host, which sends it and reports
back. Mapping functions come from the flow's current code.
One round's decisions are applied together: their rows are read in one query per 100 ids and their changes
written as one patch (`RunStore.patch_nodes`), so a 1,000-child fan-out costs a few dozen statements, not
thousands. Decisions of one round touch only their own node (they were all decided on the same views), so
deferring the writes to the round's end changes nothing any of them reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import msgspec

from tsumugi_core.exceptions import TsumugiError
from tsumugi_core.flow_advance import Decision, container_summary
from tsumugi_core.flow_ids import child_run_id, node_job_id
from tsumugi_core.flow_spec import MAX_NODE_ID_CHARS, FlowSpec, NodeSpec, node_key_problem
from tsumugi_core.ids import InvalidRunIdError
from tsumugi_core.json_path import InvalidValueError
from tsumugi_core.options import MAX_PAYLOAD_BYTES
from tsumugi_core.portable import check_portable
from tsumugi_scheduler.run.rows import NodeRow, RunRow
from tsumugi_scheduler.run.sql_store import SqlRunStore
from tsumugi_scheduler.run_input import RunInputError, check_input_size

__all__ = ["ChildError", "Steps", "child_id", "payload_problem", "spawn_rows"]

_encode = msgspec.json.encode
_DECISION_COLUMNS = (
    "binding",
    "state",
    "container",
    "origin",
    "after",
    "job_id",
    "subflow",
    "child_run_id",
    "gen",
)
"""What a decision reads of its node (not the payload, options or result it may carry)."""


class ChildError(TsumugiError, ValueError):
    """A child a fan-out or a spawn would make cannot be made (its key or id); the message says why."""


def child_id(parent_id: str, key: str, what: str) -> str:
    """``<parent id>:<key>``.

    Raises:
        ChildError: ``key`` is not a node key, or the id would be longer than `MAX_NODE_ID_CHARS`.
    """
    problem = node_key_problem(key)
    if problem is not None:
        raise ChildError(f"{what} {problem}")
    made = f"{parent_id}:{key}"
    if len(made) > MAX_NODE_ID_CHARS:
        raise ChildError(f"{what} makes a node id of {len(made)} characters, over {MAX_NODE_ID_CHARS}")
    return made


def payload_problem(payload_json: str) -> str | None:
    """The refusal of a payload too large for a job (the enqueue rule, checked before it is stored)."""
    size = len(payload_json.encode())
    if size > MAX_PAYLOAD_BYTES:
        return f"invalid job: payload must be at most {MAX_PAYLOAD_BYTES} bytes as JSON, got {size}"
    return None


def spawn_rows(
    parent_id: str, spawns: list[Any], seq: int, now: int
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The child rows of a node's spawns (``{"id", "binding", "payload", "options"}``), one per id, and the
    children that must fail at once (a payload too large for a job: stored as NULL, so a resume keeps them
    failed, ADR-0116) with their errors.

    Raises:
        ChildError: a spawn id is not a node key (the spawning node fails).
    """
    rows: dict[str, dict[str, Any]] = {}
    failed: dict[str, str] = {}
    for spawn in spawns:
        made = child_id(parent_id, spawn.get("id"), "spawn id")
        if made in rows:
            continue  # the same spawn id twice makes one child
        payload: str | None = _json(spawn.get("payload"))
        problem = payload_problem(payload)
        if problem is not None:
            failed[made], payload = problem, None
        rows[made] = {
            "id": made,
            "binding": str(spawn.get("binding")),
            "state": "PENDING",
            "container": 0,
            "parent": parent_id,
            "origin": "spawn",
            "after": "[]",
            "payload": payload,
            "options": _json(spawn.get("options") or {}),
            "seq": seq + len(rows),
            "gen": 0,
            "sent": 0,
            "created_at": now,
            "updated_at": now,
        }
    return list(rows.values()), failed


def _json(value: Any) -> str:
    return _encode(value).decode()


def _loads(text: object) -> Any:
    return None if text is None else msgspec.json.decode(str(text))


class _InputError(TsumugiError, ValueError):
    """A mapping function's answer cannot make a job (the node fails with ``input failed: ...``)."""


def _concurrency_key(definition: NodeSpec, *args: Any) -> str | None:
    key = definition.concurrency_key
    found = cast("object", key(*args) if callable(key) else key)  # user code: typed str, may answer anything
    if found is not None and not isinstance(found, str):
        raise _InputError(f"concurrency_key must be a string, got {type(found).__name__}")
    return found


def _job_json(payload: Any, options: Mapping[str, Any]) -> dict[str, str]:
    """The payload and options a node's job carries, as JSON texts.

    Raises:
        _InputError: a value has no JSON form (a mapping function answered something JSON cannot hold).
    """
    try:
        return {
            "payload": _json(payload),
            "options": _json({k: v for k, v in options.items() if v is not None}),
        }
    except (TypeError, ValueError, OverflowError) as exc:  # msgspec.EncodeError is a ValueError
        raise _InputError(f"not JSON: {exc}") from None


class Steps:
    """Applies one tick's decisions; collects what the host must then do outside the transaction."""

    def __init__(
        self,
        store: SqlRunStore,
        run: RunRow,
        spec: FlowSpec,
        now: int,
        shards: Callable[[str], int],
        max_nodes: int,
        deadline_error: str | None,
    ) -> None:
        self.store = store
        self.run = run
        self.spec = spec
        self.now = now
        self.shards = shards
        self.max_nodes = max_nodes
        self.deadline_error = deadline_error
        self.touched: set[str] = set()
        self.cancel_jobs: list[tuple[str, str]] = []
        """(node id, job id) of scheduled jobs to cancel."""
        self.cancel_runs: list[tuple[str, str]] = []
        """(node id, child run id) of child runs to cancel."""
        self._input = _loads(run.input)
        self._nonce = run.nonce or ""
        self._patches: dict[str, dict[str, Any]] = {}

    def _set(self, node_id: str, **values: Any) -> None:
        self._patches.setdefault(node_id, {}).update(values, updated_at=self.now)
        self.touched.add(node_id)

    def _fail(self, node_id: str, error: str) -> None:
        self._set(node_id, state="FAILED", error=error)

    def _deps(self, row: NodeRow) -> dict[str, Any]:
        after = msgspec.json.decode(row.after, type=list[str])
        found = self.store.results(after)
        return {dep: _loads(found.get(dep)) for dep in after}

    def apply(self, decisions: Sequence[Decision]) -> None:
        """Apply one round's decisions (each to its own node) and write their changes."""
        rows = self.store.nodes_by_id((d.node_id for d in decisions), _DECISION_COLUMNS)
        for decision in decisions:
            row = rows.get(decision.node_id)
            if row is not None:
                getattr(self, f"_{decision.kind}")(row)
        patches, self._patches = self._patches, {}
        self.store.patch_nodes(patches)

    def _skip(self, row: NodeRow) -> None:
        self._set(row.id, state="SKIPPED")

    def _aggregate(self, row: NodeRow) -> None:
        self._set(
            row.id,
            state="COMPLETED",
            result=_json(container_summary(self.store.views(), row.id)),
        )

    def _cancel(self, row: NodeRow) -> None:
        final = "FAILED" if self.deadline_error is not None else "CANCELLED"
        if row.subflow is not None and row.child_run_id is not None and row.state == "RUNNING":
            self.cancel_runs.append((row.id, row.child_run_id))
        elif row.state == "PENDING" or row.job_id is None:
            self._set(row.id, state=final, error=self.deadline_error)
        else:
            self.cancel_jobs.append((row.id, row.job_id))

    def _start(self, row: NodeRow) -> None:
        node_id = row.id
        if row.origin == "static":
            definition = self.spec.node(node_id)
            if definition is None:
                self._fail(node_id, f"node definition is missing: {node_id}")
                return
            try:
                deps = self._deps(row)
                payload = None if definition.input is None else definition.input(self._input, deps)
                options = {
                    **definition.options,
                    "concurrency_key": _concurrency_key(definition, self._input, deps),
                }
                job: dict[str, Any] = _job_json(payload, options)
            except _InputError as exc:
                self._fail(node_id, f"input failed: {exc}")
                return
            except Exception as exc:
                self._fail(node_id, f"input failed: {type(exc).__name__}: {exc}")
                return
            problem = payload_problem(job["payload"])
            if problem is not None:
                self._fail(node_id, problem)  # not stored: refused as the enqueue would refuse it
                return
        else:  # a fan-out or spawned child carries its payload and options since it was made (one refused then
            job = {}  # stays FAILED: a resume never reruns it, ADR-0116)
        binding = row.binding
        job_id = node_job_id(binding, self.shards(binding), self.run.id, self._nonce, node_id, row.gen)
        self._set(node_id, state="SCHEDULED", job_id=job_id, sent=0, **job)

    def _startRun(self, row: NodeRow) -> None:
        node_id = row.id
        definition = self.spec.node(node_id)
        if definition is None or definition.subflow is None:
            self._fail(node_id, f"subflow definition is missing: {node_id}")
            return
        try:
            child = child_run_id(definition.subflow, self.run.id, self._nonce, node_id, row.gen)
        except InvalidRunIdError as exc:
            self._fail(node_id, f"invalid child run id: {exc}")
            return
        try:
            child_input = None if definition.input is None else definition.input(self._input, self._deps(row))
            check_portable(child_input)  # a run's input, checked as at POST /api/runs
            child_json = _job_json(child_input, {})["payload"]
            check_input_size(child_json)  # before the node row holds it (the child would refuse it too)
        except RunInputError as exc:
            self._fail(node_id, f"input failed: {exc}")
            return
        except InvalidValueError as exc:
            self._fail(node_id, f"input failed: {exc.path('input')} {exc.rule}")
            return
        except _InputError as exc:
            self._fail(node_id, f"input failed: {exc}")
            return
        except Exception as exc:
            self._fail(node_id, f"input failed: {type(exc).__name__}: {exc}")
            return
        self._set(
            node_id, state="RUNNING", child_run_id=child, payload=child_json, sent=0, scheduled_at=self.now
        )

    def _expand(self, row: NodeRow) -> None:
        node_id = row.id
        definition = self.spec.node(node_id)
        if definition is None or definition.over is None:
            self._fail(node_id, f"node definition is missing: {node_id}")
            return
        try:
            items = list(definition.over(self._input, self._deps(row)))
            children, failed = self._children(row, definition, items)
        except (ChildError, _InputError) as exc:
            self._fail(node_id, f"fan-out failed: {exc}")
            return
        except Exception as exc:
            self._fail(node_id, f"fan-out failed: {type(exc).__name__}: {exc}")
            return
        if self.store.count() + len(children) > self.max_nodes:
            self._fail(node_id, f"node count exceeded the limit: {self.max_nodes}")
            return
        self.store.insert_nodes(
            children,
            {
                "binding": row.binding,
                "state": "PENDING",
                "container": 0,
                "parent": node_id,
                "origin": "fanOut",
                "after": "[]",
                "gen": 0,
                "sent": 0,
                "created_at": self.now,
                "updated_at": self.now,
            },
        )
        self.touched.update(c["id"] for c in children)
        for child, error in failed.items():
            self._fail(child, error)
        self._set(node_id, state="RUNNING", scheduled_at=self.now)

    def _children(
        self, row: NodeRow, definition: NodeSpec, items: list[Any]
    ) -> tuple[list[dict[str, Any]], dict[str, str]]:
        """What differs between the children of a fan-out (id, payload, options, position), and the children
        that must fail at once (a payload too large for a job, stored as NULL) with their errors.

        Raises:
            ChildError: a key is not a node key or repeats another item's.
        """
        seq = self.store.next_seq()
        children: list[dict[str, Any]] = []
        failed: dict[str, str] = {}
        seen: dict[str, int] = {}
        for index, item in enumerate(items):
            key = str(index) if definition.key is None else str(definition.key(item, index))
            made = child_id(row.id, key, f"key of item {index}")
            if made in seen:
                raise ChildError(f"items {seen[made]} and {index} have the same key: {key!r}")
            seen[made] = index
            payload = (
                None if definition.item_input is None else definition.item_input(item, self._input, index)
            )
            options = {**definition.options, "concurrency_key": _concurrency_key(definition, item, index)}
            job: dict[str, str | None] = dict(_job_json(payload, options))
            problem = payload_problem(str(job["payload"]))
            if problem is not None:
                failed[made], job["payload"] = problem, None
            children.append({"id": made, **job, "seq": seq + index})
        return children, failed
