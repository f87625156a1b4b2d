"""The Run Durable Object's application shell: start, job and child-run events, cancel, resume, the tick.

Calls only record and arm the alarm; the alarm's tick does the work (reference §1.13): a removed flow fails
the run, an expired deadline drains it, `advance` decides in rounds (at most `DECISIONS_PER_TICK`), then jobs
are enqueued (one ``enqueue_many`` per 500), child runs started, cancels sent, the run state recomputed,
snapshots projected to D1, the parent run told, and a settled run's object deleted after its retention.
Every step is idempotent, so a crash anywhere repeats nothing that matters: unsent starts are resent with
the same job ids, unprojected snapshots are projected by the next tick.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final

import msgspec

from tsumugi_core.flow_advance import NODE_TERMINAL_STATES, advance, progress, run_state
from tsumugi_core.flow_spec import FlowSpec, InvalidFlowError, check_deadline_ms
from tsumugi_core.ids import shard_name_of
from tsumugi_core.options import EnqueueValidationError
from tsumugi_scheduler import _runtime
from tsumugi_scheduler.definition import TsumugiDefinition
from tsumugi_scheduler.payload_schemas import PayloadSchemas
from tsumugi_scheduler.producer_rpc import MAX_BATCH_ITEMS, SchedulerService
from tsumugi_scheduler.remote_errors import error_text
from tsumugi_scheduler.run.notices import MAX_FAILED_NODES, notice_bindings, notice_items
from tsumugi_scheduler.run.projection import node_rows, project_runs
from tsumugi_scheduler.run.settings import RunSettings
from tsumugi_scheduler.run.steps import ChildError, Steps, spawn_rows
from tsumugi_scheduler.run.store import RunStore
from tsumugi_scheduler.shard import SqlLike
from tsumugi_scheduler.timing import time_source

__all__ = ["ADVANCE_ROUNDS", "DECISIONS_PER_TICK", "PROJECTION_BATCH", "PROJECTION_DELAY_MS", "RUN_LOGGER", "RunError", "RunHost"]

DECISIONS_PER_TICK: Final = 1_000
"""Decisions one tick applies; more wait for the next tick (armed at once). The original's 200 bounded a
tick inside one alarm of its runtime; here 1,000 starts are two ``enqueue_many`` calls and about 0.15 s of
Python, so a 1,000-child fan-out starts in one tick instead of five (ADR-0087, bench/flows.py)."""
ADVANCE_ROUNDS: Final = 32
"""Advance rounds per tick."""
PROJECTION_DELAY_MS: Final = 200
"""How long job endings that cannot start anything (a fan-out or spawned child ending while a sibling still
runs) wait for their tick, so the endings of many children are applied and projected in one tick, not one
tick per report batch; an ending that may start something ticks at once."""
PROJECTION_BATCH: Final = 500
"""Outbox rows per D1 batch (a few statements: node rows go as JSON arrays, run/projection.py)."""
_PROJECTION_ROUNDS: Final = 4
_RETRY_MS: Final = 5_000
_TERMINAL_RUN: Final = frozenset({"COMPLETED", "FAILED", "CANCELLED"})
_log = logging.getLogger("tsumugi_scheduler")
RUN_LOGGER: Final = "tsumugi.runs"
"""The logger of one-line run events (``run <id> <STATE>``); ``tsumugi dev`` shows them."""
_run_log = logging.getLogger(RUN_LOGGER)
_encode = msgspec.json.encode


class RunError(ValueError):
    """A start the run refuses (unknown flow, nesting, deadline); the message is the original's."""


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


class RunHost:
    """One Run object: its store (opened on first use), the scheduler's definition and its alarm."""

    def __init__(self, storage: Any, sql: SqlLike, env: Any, definition: TsumugiDefinition,
                 schemas: PayloadSchemas | None = None, exports: Any = None) -> None:  # fmt: skip
        """Serve the object whose ``ctx.storage`` is ``storage``; ``schemas`` is the isolate's payload-schema
        cache (a fresh one asks the performers again), ``exports`` its ``ctx.exports``."""
        self._storage = storage
        self._schemas = schemas if schemas is not None else PayloadSchemas()
        self._exports = exports
        self._sql = sql
        self._env = env
        self._definition = definition
        self._store: RunStore | None = None
        self._ticking = False

    @property
    def settings(self) -> RunSettings:
        """The definition's ``runs`` settings."""
        return self._definition.runs

    def store(self) -> RunStore:
        """The run's rows (tables created on first use)."""
        if self._store is None:
            self._store = RunStore(self._sql)
        return self._store

    async def _arm_now(self) -> None:
        await self._storage.setAlarm(time_source().now_ms())

    async def _arm_by(self, at: int) -> None:
        """Arm for ``at`` unless an alarm is due sooner (never later than one already set)."""
        current = await _runtime.current_alarm(self._storage)
        if current is None or current > at:
            await self._storage.setAlarm(at)

    # -- calls ----------------------------------------------------------------------------------------------

    async def start(self, run_id: str, flow: str, input_json: str, deadline_ms: Any = None,
                    parent: Any = None, depth: int = 0) -> dict[str, Any]:  # fmt: skip
        """Store the run and its static nodes; ``created`` is False when the run already exists.

        Raises:
            RunError: the flow is not registered, nesting is too deep or the deadline is not positive.
        """
        store = self.store()
        if store.run() is not None:
            return {"id": run_id, "created": False}
        spec = self._definition_flows().get(flow)
        if spec is None:
            raise RunError(f"flow is not registered: {flow}")
        max_depth = self.settings.max_depth
        if depth > max_depth:
            raise RunError(f"subflow nesting exceeded the limit: {max_depth}")
        try:
            deadline = check_deadline_ms(spec.deadline_ms if deadline_ms is None else deadline_ms)
        except InvalidFlowError as exc:
            raise RunError(str(exc)) from None
        now = time_source().now_ms()
        shape = [{"id": n.id, "binding": n.binding, "container": n.kind == "fan_out", "after": list(n.after),
                  "subflow": n.subflow} for n in spec.nodes]  # fmt: skip
        run = {
            "id": run_id, "flow": flow, "state": "RUNNING", "input": input_json, "shape": _encode(shape).decode(),
            "cancelling": 0, "parent_run_id": None if parent is None else str(parent["runId"]),
            "parent_node_id": None if parent is None else str(parent["nodeId"]), "depth": int(depth),
            "parent_notified": 0, "deadline_ms": deadline, "deadline_at": None if deadline is None else now + deadline,
            "expired": 0, "created_at": now, "updated_at": now, "resumes": 0, "noticed": 0,
            "notices": _encode({"on_failure": spec.on_failure, "on_settled": spec.on_settled}).decode(),
        }  # fmt: skip
        nodes = [{
            "id": n.id, "binding": n.binding, "state": "PENDING", "container": int(n.kind == "fan_out"),
            "parent": None, "origin": "static", "after": _encode(list(n.after)).decode(), "subflow": n.subflow,
            "seq": i, "gen": 0, "sent": 0, "created_at": now, "updated_at": now,
        } for i, n in enumerate(spec.nodes)]  # fmt: skip

        def write() -> None:
            store.insert_run(run)
            store.insert_nodes(nodes)
            store.outbox_run(run_id)
            store.outbox_nodes(n.id for n in spec.nodes)

        store.atomically(write)
        await self._arm_now()
        return {"id": run_id, "created": True}

    def _definition_flows(self) -> dict[str, FlowSpec]:
        return self._definition.flows

    async def notify(self, events: Any) -> None:
        """Record job events ``{"nodeId", "jobId", "state", "result", "error"}``; stale ones are ignored."""
        store = self.store()
        run = store.run()
        if run is None:
            return
        now = time_source().now_ms()
        touched: list[str] = []

        def write() -> None:
            # One outcome per (node, job): a repeat is a duplicate; an event of another job is stale and
            # changes nothing (the node waits on its current job), nor does one for a node already ended.
            outcomes: dict[tuple[str, Any], list[Any]] = {}
            for event in events:
                state = str(event.get("state"))
                done = state == "COMPLETED"
                outcomes.setdefault((str(event.get("nodeId")), event.get("jobId")), [
                    str(event.get("nodeId")), event.get("jobId"), state, event.get("result") if done else None,
                    event.get("error"), event.get("spawns") if done else None,
                ])  # fmt: skip
            spawning = [o for o in outcomes.values() if o[5]]
            if spawning:  # children first, so the node's downstream waits for them
                nodes = store.nodes_by_id((o[0] for o in spawning), ("state", "job_id"))
                for outcome in spawning:
                    node = nodes.get(outcome[0])
                    if node is None or node["job_id"] != outcome[1] or node["state"] in NODE_TERMINAL_STATES:
                        continue
                    try:
                        children, refused = spawn_rows(node, outcome[5], store.next_seq(), now)
                    except ChildError as exc:
                        outcome[2], outcome[4] = "FAILED", f"invalid spawn: {exc}"
                        continue
                    if store.count() + len(children) > self.settings.max_nodes:
                        outcome[2], outcome[4] = (
                            "FAILED",
                            f"node count exceeded the limit: {self.settings.max_nodes}",
                        )
                    else:
                        store.insert_nodes(children)
                        store.patch_nodes({child: {"state": "FAILED", "error": error, "updated_at": now}
                                           for child, error in refused.items()})  # fmt: skip
                        touched.extend(c["id"] for c in children)
            changed = store.finish_nodes(outcomes.values(), now)
            decisive.append(len(touched) > 0 or store.decisive(changed))  # a spawn adds nodes to start
            touched.extend(changed)
            if touched:
                store.outbox_nodes(touched)
                store.outbox_run(run["id"])  # its counters moved, even when no tick follows at once

        decisive: list[bool] = []
        store.atomically(write)
        if touched and decisive[0]:
            await self._arm_now()
        elif touched:  # nothing can start: the tick only projects, later, with the endings that follow
            await self._arm_by(now + PROJECTION_DELAY_MS)

    async def notify_child(self, node_id: str, child_run_id: str, state: str) -> None:
        """A child run ended in ``state``: its subflow node takes that state."""
        store = self.store()
        run = store.run()
        node = None if run is None else store.node(node_id)
        if run is None or node is None or node["child_run_id"] != child_run_id or state not in _TERMINAL_RUN:
            return
        if node["state"] in NODE_TERMINAL_STATES:
            return
        error = f"child run failed: {child_run_id}" if state == "FAILED" else None

        def write() -> None:
            store.update_node(node_id, state=state, error=error, updated_at=time_source().now_ms())
            store.outbox_nodes([node_id])

        store.atomically(write)
        await self._arm_now()

    async def cancel(self) -> dict[str, Any]:
        """Drain a RUNNING run to CANCELLED: unstarted nodes stop, running jobs finish."""
        store = self.store()
        run = store.run()
        if run is None:
            return {"ok": False, "reason": "gone"}
        if run["state"] != "RUNNING":
            return {"ok": False, "reason": "invalid-state"}
        store.update_run(cancelling=1)
        await self._arm_now()
        return {"ok": True}

    async def retry(self) -> dict[str, Any]:
        """Resume a FAILED run: failed, skipped and cancelled nodes run again; completed ones keep results."""
        store = self.store()
        run = store.run()
        if run is None:
            return {"ok": False, "reason": "gone"}
        if run["state"] != "FAILED":
            return {"ok": False, "reason": "invalid-state"}
        now = time_source().now_ms()

        def write() -> None:
            reset: list[str] = []
            has_children = {str(r["parent"]) for r in store.sql.exec("SELECT DISTINCT parent FROM node "
                                                                     "WHERE parent IS NOT NULL")}  # fmt: skip
            for node in store.nodes():
                if node["state"] not in ("FAILED", "STALLED", "SKIPPED", "CANCELLED"):
                    continue
                container = bool(node["container"]) and node["id"] in has_children
                store.update_node(node["id"], state="RUNNING" if container else "PENDING",
                                  job_id=node["job_id"] if node["container"] else None, child_run_id=None, error=None,
                                  gen=int(node["gen"]) + (0 if node["container"] else 1), sent=0, updated_at=now,
                                  scheduled_at=node["scheduled_at"] if container else None,
                                  finished_at=None)  # fmt: skip
                reset.append(node["id"])
            deadline_ms = _int_or_none(run["deadline_ms"])
            store.update_run(state="RUNNING", parent_notified=0, expired=0, cancelling=0, updated_at=now, noticed=0,
                             resumes=int(run["resumes"]) + 1,
                             deadline_at=None if deadline_ms is None else now + deadline_ms)  # fmt: skip
            store.outbox_nodes(reset)
            store.outbox_run(run["id"])

        store.atomically(write)
        await self._arm_now()
        return {"ok": True}

    async def state(self) -> str | None:
        """The run's state, or None when there is no run here."""
        run = self.store().run()
        return None if run is None else str(run["state"])

    # -- the tick -------------------------------------------------------------------------------------------

    async def alarm(self) -> None:
        """Tick (one at a time); a failing tick retries in 5 s."""
        if self._ticking:
            await self._arm_now()
            return
        self._ticking = True
        try:
            await self._tick()
        except Exception:
            _log.exception("tick of run failed; retrying in %d ms", _RETRY_MS)
            await self._arm_by(time_source().now_ms() + _RETRY_MS)  # a call during the tick may want it sooner
        finally:
            self._ticking = False

    async def _tick(self) -> None:
        store = self.store()
        run = store.run()
        if run is None:
            return
        now = time_source().now_ms()
        spec = self._definition_flows().get(run["flow"])
        before = run["state"]
        again = False
        if run["state"] == "RUNNING" and spec is None:
            self._fail_removed_flow(store, run, now)
        elif run["state"] == "RUNNING" or not store.outbox_empty():
            if run["state"] == "RUNNING" and run["deadline_at"] is not None and not run["expired"] and (
                    int(run["deadline_at"]) <= now):  # fmt: skip
                store.update_run(expired=1)
            run = store.run() or run
            if spec is not None and run["state"] == "RUNNING":
                again = await self._advance(store, run, spec, now)
        await self._project(store)
        run = store.run() or run
        if run["state"] != before:  # logged once projected: a reader of the line finds it in the read model
            _run_log.info("run %s %s", run["id"], run["state"])
        if run["state"] in _TERMINAL_RUN:
            if not await self._notify_parent(store, run) or not await self._send_notices(store, run):
                again = True
            elif await self._sweep(store, run, now):
                return
        await self._rearm(store, run, now, again)

    def _fail_removed_flow(self, store: RunStore, run: dict[str, Any], now: int) -> None:
        def write() -> None:
            failed = [n["id"] for n in store.nodes() if n["state"] == "PENDING"]
            for node_id in failed:
                store.update_node(node_id, state="FAILED", error=f"flow is not registered: {run['flow']}",
                                  updated_at=now)  # fmt: skip
            store.update_run(state="FAILED", updated_at=now)
            store.outbox_nodes(failed)
            store.outbox_run(run["id"])

        store.atomically(write)

    async def _advance(self, store: RunStore, run: dict[str, Any], spec: Any, now: int) -> bool:
        cancelling, expired = bool(run["cancelling"]), bool(run["expired"])
        deadline_error = (
            f"run deadline exceeded: {run['deadline_ms']}ms" if expired and not cancelling else None
        )
        steps = Steps(
            store, run, spec, now, self._definition.shards_of, self.settings.max_nodes, deadline_error
        )
        # A node may take several decisions in one tick (an empty fan-out expands, then aggregates); the same
        # decision twice (a cancel the shard refused while the job runs) waits for the next event instead.
        handled: set[tuple[str, str]] = set()
        deferred = False

        def decide() -> None:
            nonlocal deferred
            for _ in range(ADVANCE_ROUNDS):
                views = store.views()  # kept current by the store: no query per round
                fresh = [d for d in advance(views, cancelling, expired) if (d.node_id, d.kind) not in handled]
                if not fresh:
                    return
                room = DECISIONS_PER_TICK - len(handled)
                if len(fresh) > room:
                    fresh, deferred = fresh[:room], True
                handled.update((d.node_id, d.kind) for d in fresh)
                steps.apply(fresh)
                if deferred:
                    return
            deferred = True

        store.atomically(lambda: (decide(), store.outbox_nodes(steps.touched)))
        record_sent = await self._send(store, run)
        record_cancelled = await self._cancel(run, steps, deadline_error)

        def settle() -> bool:  # what the calls did, and the run state it implies, in one transaction
            changed = record_sent() | record_cancelled()
            self._settle_run(store, now, cancelling, expired, bool(steps.touched or changed))
            return changed

        return store.atomically(settle) or deferred

    def _settle_run(self, store: RunStore, now: int, cancelling: bool, expired: bool, touched: bool) -> None:
        run = store.run()
        assert run is not None
        views = store.views()
        state = run_state(views, cancelling, expired)
        if state != run["state"]:
            store.update_run(state=state, updated_at=now)
        if state != run["state"] or touched:
            store.outbox_run(run["id"])

    def _output(self, store: RunStore, run: dict[str, Any]) -> str | None:
        spec = self._definition.flows.get(run["flow"])
        if run["state"] != "COMPLETED" or spec is None or spec.output is None:
            return None
        node = store.node(spec.output)
        return None if node is None else node["result"]

    async def _send(self, store: RunStore, run: dict[str, Any]) -> Callable[[], bool]:
        """Enqueue unsent jobs and start unsent child runs; returns the write that records it (True when a
        node failed doing so), for the caller's transaction.

        Each job is checked once, by the scheduler's own enqueue path; an invalid one fails its node alone.
        """
        unsent = store.unsent()
        jobs = [n for n in unsent if n["child_run_id"] is None]
        failed: dict[str, str] = {}
        items: list[tuple[str, dict[str, Any]]] = []
        for node in jobs:
            options: dict[str, Any] = msgspec.json.decode(str(node["options"] or "{}"))
            item = {**{_camel(k): v for k, v in options.items()}, "binding": node["binding"],
                    "payload": msgspec.json.decode(str(node["payload"] or "null")), "id": node["job_id"],
                    "runId": run["id"], "nodeId": node["id"], "partitionKey": run["id"]}  # fmt: skip
            items.append((node["id"], item))
        service = SchedulerService(self._env, self._definition, self._schemas, self._exports)
        sent: list[str] = []
        for start in range(0, len(items), MAX_BATCH_ITEMS):
            chunk = items[start : start + MAX_BATCH_ITEMS]
            answers = await service.enqueue_valid([item for _, item in chunk])
            for (node_id, _), answer in zip(chunk, answers, strict=True):
                if isinstance(answer, EnqueueValidationError):
                    failed[node_id] = f"invalid job: {answer}"
                else:  # its own id: nodes cannot carry a unique_key, nor can on_enqueue default one
                    sent.append(node_id)
        for node in unsent:
            if node["child_run_id"] is None:
                continue
            try:
                await self._env.RUN.getByName(node["child_run_id"]).start(
                    node["child_run_id"], str(node["child_run_id"]).partition(":")[0], node["payload"] or "null",
                    None, {"runId": run["id"], "nodeId": node["id"]}, int(run["depth"]) + 1)  # fmt: skip
                sent.append(node["id"])
            except Exception as exc:
                failed[node["id"]] = f"failed to start child run: {_message(exc)}"

        def write() -> bool:
            now = time_source().now_ms()
            store.update_nodes(sent, sent=1)
            store.patch_nodes({node_id: {"state": "FAILED", "error": error, "updated_at": now}
                               for node_id, error in failed.items()})  # fmt: skip
            store.outbox_nodes(failed)
            return bool(failed)

        return write

    async def _cancel(self, run: dict[str, Any], steps: Steps, error: str | None) -> Callable[[], bool]:
        """Send the tick's cancels; returns the write that records the jobs cancelled before they started
        (True when there were any), for the caller's transaction."""
        final = "FAILED" if error is not None else "CANCELLED"
        done: list[str] = []
        for node_id, job_id in steps.cancel_jobs:
            name = shard_name_of(job_id)
            answer = await self._env.JOB_SHARD.getByName(name).cancel(name, job_id)
            if answer.get("ok") and not answer.get("requested"):
                done.append(node_id)  # cancelled before it started; else its own terminal event comes
        for _, child in steps.cancel_runs:
            await self._env.RUN.getByName(child).cancel()  # its end arrives through notify_child

        store = self.store()

        def write() -> bool:
            now = time_source().now_ms()
            for node_id in done:
                node = store.node(node_id)
                if node is not None and node["state"] == "SCHEDULED":
                    store.update_node(node_id, state=final, error=error, updated_at=now)
            store.outbox_nodes(done)
            return bool(done)

        return write

    async def _project(self, store: RunStore) -> None:
        for _ in range(_PROJECTION_ROUNDS):
            batch = store.outbox_batch(PROJECTION_BATCH)
            run = store.run()
            if batch is None or run is None:
                return
            nodes = node_rows(store.sql, str(run["id"]), batch.up_to_seq)
            snapshot = None if batch.run_seq is None else (batch.run_seq, self._run_snapshot(store, run))
            await project_runs(self._env.TSUMUGI_DB, nodes, snapshot, first=batch.first_seq == 1)
            store.ack(batch.up_to_seq)
            if batch.rows < PROJECTION_BATCH:
                return

    def _run_snapshot(self, store: RunStore, run: dict[str, Any]) -> dict[str, Any]:
        counts = progress(v.state for v in store.views())
        return {**run, "node_total": counts.node_total, "node_done": counts.node_done,
                "node_failed": counts.node_failed, "output": self._output(store, run)}  # fmt: skip

    async def _notify_parent(self, store: RunStore, run: dict[str, Any]) -> bool:
        if run["parent_run_id"] is None or run["parent_notified"]:
            return True
        try:
            await self._env.RUN.getByName(run["parent_run_id"]).notify_child(run["parent_node_id"], run["id"],
                                                                              run["state"])  # fmt: skip
        except Exception:
            _log.warning("telling parent run %s failed; retrying", run["parent_run_id"], exc_info=True)
            return False
        store.mark_run_done("parent_notified", int(run["resumes"]))
        return True

    async def _send_notices(self, store: RunStore, run: dict[str, Any]) -> bool:
        if run["noticed"]:
            return True
        items = (
            []
            if not notice_bindings(run)
            else notice_items(
                run,
                progress(v.state for v in store.views()),
                store.failed(MAX_FAILED_NODES),
                self._definition.shards_of,
            )
        )
        try:
            if items:
                await SchedulerService(
                    self._env, self._definition, self._schemas, self._exports
                ).enqueue_many(items)
        except Exception:
            _log.warning("run notices of %s failed; retrying", run["id"], exc_info=True)
            return False
        store.mark_run_done("noticed", int(run["resumes"]))
        return True

    def _keep_ms(self, run: dict[str, Any]) -> int:
        settings = self.settings
        return settings.failed_retention_ms if run["state"] == "FAILED" else settings.sweep_after_ms

    async def _sweep(self, store: RunStore, run: dict[str, Any], now: int) -> bool:
        if not store.outbox_empty() or int(run["updated_at"]) + self._keep_ms(run) > now:
            return False
        await self._storage.deleteAll()
        self._store = None
        return True

    async def _rearm(self, store: RunStore, run: dict[str, Any], now: int, again: bool) -> None:
        if again or not store.outbox_empty():
            await self._storage.setAlarm(now)
        elif run["state"] == "RUNNING":
            if run["deadline_at"] is not None and not run["expired"]:
                await self._arm_by(max(int(run["deadline_at"]), now))
        else:
            await self._arm_by(max(int(run["updated_at"]) + self._keep_ms(run), now + 1000))


def _message(error: BaseException) -> str:
    """The message of an error from across RPC, without its type and traceback."""
    first = error_text(error).splitlines()[0]
    kind, sep, message = first.partition(": ")
    return message if sep and " " not in kind else first


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
