"""``RunEngine``: the commands of one Run object, each one transaction over its SQL store (ADR-0117).

The engine is synchronous and owns every rule of a run; the Durable Object (`run.host`) only carries its
commands in and does what a tick hands out (enqueue jobs, start and cancel child runs, cancel jobs, project to
D1, tell the parent, send notices, delete the storage), then reports back. Time and ids come in through a
`Clock` and an `IdSource`, so tests drive the engine over stdlib sqlite3 without a Durable Object.

A tick is three steps: `plan_tick` (a removed flow fails the run, an expired deadline drains it, `advance`
decides in rounds of at most `DECISIONS_PER_TICK`, and the unsent starts and the cancels are handed out),
the host's I/O, then `finish_tick` with what it did (sent, refused, cancelled before start), which also
settles the run's state. Every step is idempotent: a crash anywhere repeats nothing that matters (unsent starts
are handed out again with the same ids, unprojected changes are projected by the next tick).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import msgspec

from tsumugi_core.clock import Clock, IdSource
from tsumugi_core.exceptions import TsumugiError
from tsumugi_core.flow_advance import NODE_TERMINAL_STATES, advance, progress, run_state
from tsumugi_core.flow_resume import resume_steps
from tsumugi_core.flow_spec import FlowSpec, InvalidFlowError, check_deadline_ms
from tsumugi_scheduler.run.notices import MAX_FAILED_NODES, notice_bindings, notice_items
from tsumugi_scheduler.run.rows import (
    ChildCancel,
    ChildStart,
    ControlAnswer,
    JobCancel,
    JobEvent,
    JobStart,
    ParentLink,
    RunRow,
    StartRun,
    TickPlan,
)
from tsumugi_scheduler.run.settings import RunSettings
from tsumugi_scheduler.run.sql_store import OutboxBatch, SqlRunStore
from tsumugi_scheduler.run.steps import ChildError, Steps, spawn_rows
from tsumugi_scheduler.run_input import RunInputError, run_input_json
from tsumugi_scheduler.shard import SqlLike

__all__ = [
    "ADVANCE_ROUNDS",
    "DECISIONS_PER_TICK",
    "PROJECTION_DELAY_MS",
    "TERMINAL_RUN_STATES",
    "Ending",
    "Projection",
    "RunEngine",
    "RunError",
    "TickOutcome",
]

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
TERMINAL_RUN_STATES: Final = frozenset({"COMPLETED", "FAILED", "CANCELLED"})
_NOTIFIABLE: Final = frozenset({"COMPLETED", "FAILED", "CANCELLED", "STALLED"})


class RunError(TsumugiError, ValueError):
    """A start the run refuses (unknown flow, nesting, deadline); the message is the original's."""


class TickOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What the host did with a `TickPlan`: nodes sent, nodes whose job or child run was refused (with the
    error), and jobs cancelled before they started."""

    sent: list[str] = []
    refused: dict[str, str] = {}
    cancelled: list[str] = []


class Projection(msgspec.Struct, frozen=True, kw_only=True):
    """One batch for the read model: node rows (JSON texts, run/projection.py), the run's snapshot when the
    batch names the run (outbox seq and row), whether it starts the object's outbox, and its last seq."""

    nodes: list[str]
    run: tuple[int, dict[str, Any]] | None
    first: bool
    up_to_seq: int
    rows: int


class Ending(msgspec.Struct, frozen=True, kw_only=True):
    """What a settled run still owes: its parent's news (``parent``: link and state) and its notices (enqueue
    items), for the ending numbered ``resumes``."""

    run_id: str
    resumes: int
    parent: tuple[ParentLink, str] | None
    notices: list[dict[str, Any]] | None


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class RunEngine:
    """The commands of the run held in one object's SQL; all synchronous, each one transaction."""

    def __init__(
        self,
        sql: SqlLike,
        *,
        flows: Mapping[str, FlowSpec],
        settings: RunSettings,
        shards_of: Callable[[str], int],
        clock: Clock,
        ids: IdSource,
    ) -> None:
        """Serve the object's SQL (nothing is created until a run starts)."""
        self._store = SqlRunStore(sql)
        self._flows = flows
        self._settings = settings
        self._shards_of = shards_of
        self._clock = clock
        self._ids = ids

    @property
    def store(self) -> SqlRunStore:
        """The engine's store (reads for tests and the simulator)."""
        return self._store

    def run(self) -> RunRow | None:
        """The run, or None when the object holds none (never started, or swept)."""
        run = self._store.run()
        if run is not None and run.nonce is None:  # stored before ADR-0115: its ids from now on are its own
            nonce = self._ids.new_local_id()
            self._store.atomically(lambda: self._store.update_run(nonce=nonce))
            run = msgspec.structs.replace(run, nonce=nonce)
        return run

    def state(self) -> str | None:
        """The run's state, or None when there is no run here."""
        run = self._store.run()
        return None if run is None else run.state

    # -- calls ----------------------------------------------------------------------------------------------

    def start(self, command: StartRun) -> bool:
        """Store the run and its static nodes; False when the object already holds a run.

        Raises:
            RunError: the flow is not registered, nesting is too deep, the deadline is not positive or the input
                breaks a rule of a run's input (a subflow's child is refused here: its parent's node fails).
        """
        if self._store.run() is not None:
            return False
        spec = self._flows.get(command.flow)
        if spec is None:
            raise RunError(f"flow is not registered: {command.flow}")
        if command.depth > self._settings.max_depth:
            raise RunError(f"subflow nesting exceeded the limit: {self._settings.max_depth}")
        try:
            deadline = check_deadline_ms(
                spec.deadline_ms if command.deadline_ms is None else command.deadline_ms
            )
        except InvalidFlowError as exc:
            raise RunError(str(exc)) from None
        try:
            run_input_json(spec, msgspec.json.decode(command.input_json))
        except (RunInputError, msgspec.DecodeError) as exc:
            raise RunError(str(exc)) from None
        now = self._clock.now_ms()
        shape = [
            {
                "id": n.id,
                "binding": n.binding,
                "container": n.kind == "fan_out",
                "after": list(n.after),
                "subflow": n.subflow,
            }
            for n in spec.nodes
        ]
        parent = command.parent
        run = RunRow(
            id=command.run_id,
            flow=command.flow,
            state="RUNNING",
            input=command.input_json,
            shape=msgspec.json.encode(shape).decode(),
            cancelling=0,
            parent_run_id=None if parent is None else parent.run_id,
            parent_node_id=None if parent is None else parent.node_id,
            depth=command.depth,
            parent_notified=0,
            deadline_ms=deadline,
            deadline_at=None if deadline is None else now + deadline,
            expired=0,
            created_at=now,
            updated_at=now,
            resumes=0,
            noticed=0,
            nonce=self._ids.new_local_id(),
            notices=msgspec.json.encode(
                {"on_failure": spec.on_failure, "on_settled": spec.on_settled}
            ).decode(),
        )
        nodes = [
            {
                "id": n.id,
                "binding": n.binding,
                "state": "PENDING",
                "container": int(n.kind == "fan_out"),
                "parent": None,
                "origin": "static",
                "after": msgspec.json.encode(list(n.after)).decode(),
                "subflow": n.subflow,
                "seq": i,
                "gen": 0,
                "sent": 0,
                "created_at": now,
                "updated_at": now,
            }
            for i, n in enumerate(spec.nodes)
        ]
        store = self._store

        def write() -> None:
            store.create()
            store.insert_run(run)
            store.insert_nodes(nodes)
            store.outbox_run(run.id)
            store.outbox_nodes(n.id for n in spec.nodes)

        store.atomically(write)
        return True

    def notify(self, events: Sequence[JobEvent]) -> int | None:
        """Record job events; stale ones (another job than the node's current one, a node already ended, an
        unknown node) change nothing. Answers when the object must tick: now when an ending may start
        something, a little later (`PROJECTION_DELAY_MS`) when it can only be projected, None when nothing
        changed."""
        store = self._store
        run = store.run()
        if run is None:
            return None
        now = self._clock.now_ms()
        touched: list[str] = []
        decisive: list[bool] = []

        def write() -> None:
            # One outcome per (node, job): a repeat is a duplicate.
            outcomes: dict[tuple[str, str | None], list[Any]] = {}
            for e in events:
                if e.state not in _NOTIFIABLE:
                    continue
                done = e.state == "COMPLETED"
                outcomes.setdefault(
                    (e.node_id, e.job_id),
                    [
                        e.node_id,
                        e.job_id,
                        e.state,
                        e.result if done else None,
                        e.error,
                        e.hold_until,
                        e.spawns if done else None,
                    ],
                )
            touched.extend(self._spawn(store, [o for o in outcomes.values() if o[6]], now))
            changed = store.finish_nodes(outcomes.values(), now)
            decisive.append(len(touched) > 0 or store.decisive(changed))  # a spawn adds nodes to start
            touched.extend(changed)
            if touched:
                store.outbox_nodes(touched)
                store.outbox_run(run.id)  # its counters moved, even when no tick follows at once

        store.atomically(write)
        if not touched:
            return None
        return now if decisive[0] else now + PROJECTION_DELAY_MS

    def _spawn(self, store: SqlRunStore, spawning: list[list[Any]], now: int) -> list[str]:
        """Insert the children of completing nodes before their ending is applied (so their downstream waits
        for them); a bad spawn id or the node limit turns the outcome into the node's failure."""
        if not spawning:
            return []
        made: list[str] = []
        nodes = store.nodes_by_id((o[0] for o in spawning), ("state", "job_id"))
        for outcome in spawning:
            node = nodes.get(outcome[0])
            if node is None or node.job_id != outcome[1] or node.state in NODE_TERMINAL_STATES:
                continue
            try:
                children, refused = spawn_rows(node.id, outcome[6], store.next_seq(), now)
            except ChildError as exc:
                outcome[2], outcome[4] = "FAILED", f"invalid spawn: {exc}"
                continue
            limit = self._settings.max_nodes
            if store.count() + len(children) > limit:
                outcome[2], outcome[4] = "FAILED", f"node count exceeded the limit: {limit}"
                continue
            store.insert_nodes(children)
            store.patch_nodes(
                {
                    child: {"state": "FAILED", "error": error, "updated_at": now}
                    for child, error in refused.items()
                }
            )
            made.extend(c["id"] for c in children)
        return made

    def notify_child(self, node_id: str, child_run_id: str, state: str) -> bool:
        """A child run ended in ``state``: its subflow node takes that state. True when it changed the node."""
        store = self._store
        run = store.run()
        node = None if run is None else store.node(node_id)
        if (
            run is None
            or node is None
            or node.child_run_id != child_run_id
            or state not in TERMINAL_RUN_STATES
        ):
            return False
        if node.state in NODE_TERMINAL_STATES:
            return False
        error = f"child run failed: {child_run_id}" if state == "FAILED" else None

        def write() -> None:
            store.update_node(node_id, state=state, error=error, updated_at=self._clock.now_ms())
            store.outbox_nodes([node_id])

        store.atomically(write)
        return True

    def cancel(self) -> ControlAnswer:
        """Drain a RUNNING run to CANCELLED: unstarted nodes stop, running jobs finish."""
        run = self._store.run()
        if run is None:
            return ControlAnswer(ok=False, reason="gone")
        if run.state != "RUNNING":
            return ControlAnswer(ok=False, reason="invalid-state")
        self._store.atomically(lambda: self._store.update_run(cancelling=1))
        return ControlAnswer(ok=True)

    def retry(self) -> ControlAnswer:
        """Resume a FAILED run (ADR-0116): nodes that did not succeed run again, each job node and subflow with a
        new job or child run, fan-outs whose children run again are reopened to sum them again; a child
        refused for its payload stays FAILED; completed nodes keep their results; the deadline restarts."""
        store = self._store
        run = self.run()
        if run is None:
            return ControlAnswer(ok=False, reason="gone")
        if run.state != "FAILED":
            return ControlAnswer(ok=False, reason="invalid-state")
        if run.parent_run_id is not None:
            # Its parent's node already ended with it, and a resumed parent starts a new child: run alone, the
            # work would be done twice and the parent would stay FAILED on a child that COMPLETED.
            return ControlAnswer(
                ok=False,
                reason="invalid-state",
                error=(
                    f"run {run.id} is the subflow of node {run.parent_node_id} of run {run.parent_run_id}: "
                    "resume that run to run it again"
                ),
            )
        now = self._clock.now_ms()

        def write() -> None:
            steps = resume_steps(store.views(), store.refused())
            rows = store.nodes_by_id((s.node_id for s in steps), ("gen", "job_id", "sent", "steps_from"))
            patches: dict[str, dict[str, Any]] = {}
            for step in steps:
                cleared = {"error": None, "result": None, "sent": 0, "finished_at": None, "updated_at": now}
                if step.kind == "reopen":  # keeps its children and when it expanded: it sums them again
                    patches[step.node_id] = {**cleared, "state": "RUNNING"}
                else:
                    row = rows[step.node_id]
                    patches[step.node_id] = {
                        **cleared,
                        "state": "PENDING",
                        "job_id": None,
                        "child_run_id": None,
                        "gen": row.gen + 1,
                        "scheduled_at": None,
                        # Its new job starts from the old job's stored steps: an at-most-once step that began
                        # is never run again, as under a retry of that job (ADR-0176). A job never known to be
                        # stored (its enqueue refused) has none: the steps stay those of the job before it
                        # (ADR-0184).
                        "steps_from": (row.job_id if row.sent else None) or row.steps_from,
                    }
            store.patch_nodes(patches)
            deadline_ms = run.deadline_ms
            store.update_run(
                state="RUNNING",
                parent_notified=0,
                expired=0,
                cancelling=0,
                updated_at=now,
                noticed=0,
                resumes=run.resumes + 1,
                deadline_at=None if deadline_ms is None else now + deadline_ms,
            )
            store.outbox_nodes(patches)
            store.outbox_run(run.id)

        store.atomically(write)
        return ControlAnswer(ok=True)

    # -- the tick -------------------------------------------------------------------------------------------

    def plan_tick(self) -> TickPlan | None:
        """Decide what the run does now (one transaction) and hand out what must be sent; None when the run is
        not RUNNING (or gone)."""
        store = self._store
        run = self.run()
        if run is None or run.state != "RUNNING":
            return None
        now = self._clock.now_ms()
        spec = self._flows.get(run.flow)
        if spec is None:
            store.atomically(lambda: self._fail_removed_flow(run, now))
            return None
        expired = bool(run.expired) or (run.deadline_at is not None and run.deadline_at <= now)
        cancelling = bool(run.cancelling)
        deadline_error = f"run deadline exceeded: {run.deadline_ms}ms" if expired and not cancelling else None
        steps = Steps(store, run, spec, now, self._shards_of, self._settings.max_nodes, deadline_error)
        deferred = False

        def decide() -> None:
            nonlocal deferred
            if expired and not run.expired:
                store.update_run(expired=1)
            # A node may take several decisions in one tick (an empty fan-out expands, then aggregates); the same
            # decision twice (a cancel the shard refused while the job runs) waits for the next event instead.
            handled: set[tuple[str, str]] = set()
            for _ in range(ADVANCE_ROUNDS):
                fresh = [
                    d
                    for d in advance(store.views(), cancelling, expired)
                    if (d.node_id, d.kind) not in handled
                ]
                if not fresh:
                    break
                room = DECISIONS_PER_TICK - len(handled)
                if len(fresh) > room:
                    fresh, deferred = fresh[:room], True
                handled.update((d.node_id, d.kind) for d in fresh)
                steps.apply(fresh)
                if deferred:
                    break
            else:
                deferred = True
            store.outbox_nodes(steps.touched)
            if steps.touched:
                store.outbox_run(run.id)  # its counters moved

        store.atomically(decide)
        jobs, children = self._unsent(run, now)
        return TickPlan(
            jobs=jobs,
            children=children,
            deferred=deferred,
            cancel_jobs=[JobCancel(node_id=n, job_id=j) for n, j in steps.cancel_jobs],
            cancel_children=[ChildCancel(node_id=n, child_run_id=c) for n, c in steps.cancel_runs],
        )

    def _unsent(self, run: RunRow, now: int) -> tuple[list[JobStart], list[ChildStart]]:
        jobs: list[JobStart] = []
        children: list[ChildStart] = []
        for node in self._store.unsent():
            if node.child_run_id is not None:
                flow = node.child_run_id.partition(":")[0]
                children.append(
                    ChildStart(
                        node_id=node.id,
                        run=StartRun(
                            run_id=node.child_run_id,
                            flow=flow,
                            input_json=node.payload or "null",
                            parent=ParentLink(run_id=run.id, node_id=node.id),
                            depth=run.depth + 1,
                        ),
                    )
                )
                continue
            options: dict[str, Any] = msgspec.json.decode(node.options or "{}")
            if node.hold_until is not None and node.hold_until > now:
                # The job it replaces may still run until then (a STALLED at-most-once attempt, ADR-0051/0121).
                start = max(now + int(options.pop("delay_ms", 0) or 0), int(options.get("run_at") or 0))
                options["run_at"] = max(start, node.hold_until)
            item = {
                **{_camel(k): v for k, v in options.items()},
                "binding": node.binding,
                "payload": msgspec.json.decode(node.payload or "null"),
                "id": node.job_id,
                "runId": run.id,
                "nodeId": node.id,
                "partitionKey": run.id,
            }
            jobs.append(JobStart(node_id=node.id, item=item, steps_from=node.steps_from))
        return jobs, children

    def _fail_removed_flow(self, run: RunRow, now: int) -> None:
        store = self._store
        failed = [v.id for v in store.views() if v.state == "PENDING"]
        store.patch_nodes(
            {
                node_id: {
                    "state": "FAILED",
                    "error": f"flow is not registered: {run.flow}",
                    "updated_at": now,
                }
                for node_id in failed
            }
        )
        store.update_run(state="FAILED", updated_at=now)
        store.outbox_nodes(failed)
        store.outbox_run(run.id)

    def finish_tick(self, plan: TickPlan, outcome: TickOutcome) -> bool:
        """Record what the host did with ``plan`` and settle the run's state, in one transaction. True when the
        run should tick again at once (decisions were deferred, or a start was refused)."""
        store = self._store

        def write() -> bool:
            run = store.run()
            assert run is not None
            now = self._clock.now_ms()
            store.update_nodes(outcome.sent, sent=1)
            store.patch_nodes(
                {
                    node_id: {"state": "FAILED", "error": error, "updated_at": now}
                    for node_id, error in outcome.refused.items()
                }
            )
            store.outbox_nodes(outcome.refused)
            expired, cancelling = bool(run.expired), bool(run.cancelling)
            error = f"run deadline exceeded: {run.deadline_ms}ms" if expired and not cancelling else None
            cancelled = [
                n
                for n, row in store.nodes_by_id(outcome.cancelled, ("state",)).items()
                if row.state == "SCHEDULED"
            ]
            store.update_nodes(
                cancelled, state="FAILED" if error is not None else "CANCELLED", error=error, updated_at=now
            )
            store.outbox_nodes(cancelled)
            changed = bool(outcome.refused or cancelled)
            state = run_state(store.views(), cancelling, expired)
            if state != run.state:
                store.update_run(state=state, updated_at=now)
            if state != run.state or changed:
                store.outbox_run(run.id)
            return changed

        return store.atomically(write) or plan.deferred

    # -- after the tick: projection, the parent, notices, sweep ---------------------------------------------

    def projection(self, limit: int) -> Projection | None:
        """The oldest ``limit`` outbox rows as one read-model batch, or None when all is projected."""
        store = self._store
        run = store.run()
        batch: OutboxBatch | None = None if run is None else store.outbox_batch(limit)
        if run is None or batch is None:
            return None
        nodes = store.projection_rows(run.id, batch.up_to_seq)
        snapshot = None if batch.run_seq is None else (batch.run_seq, self._snapshot(run))
        return Projection(
            nodes=nodes, run=snapshot, first=batch.first_seq == 1, up_to_seq=batch.up_to_seq, rows=batch.rows
        )

    def _snapshot(self, run: RunRow) -> dict[str, Any]:
        counts = progress(v.state for v in self._store.views())
        return {
            **msgspec.structs.asdict(run),
            "node_total": counts.node_total,
            "node_done": counts.node_done,
            "node_failed": counts.node_failed,
            "output": self._output(run),
        }

    def _output(self, run: RunRow) -> str | None:
        spec = self._flows.get(run.flow)
        if run.state != "COMPLETED" or spec is None or spec.output is None:
            return None
        node = self._store.node(spec.output)
        return None if node is None else node.result

    def projected(self, up_to_seq: int) -> None:
        """Forget the outbox rows up to ``up_to_seq`` (in the read model now)."""
        self._store.atomically(lambda: self._store.ack(up_to_seq))

    def ending(self) -> Ending | None:
        """What a settled run still owes (None while it runs, or when it owes nothing)."""
        run = self._store.run()
        if run is None or run.state not in TERMINAL_RUN_STATES:
            return None
        parent = None
        if run.parent_run_id is not None and run.parent_node_id is not None and not run.parent_notified:
            parent = (ParentLink(run_id=run.parent_run_id, node_id=run.parent_node_id), run.state)
        notices = None
        if not run.noticed:
            failed = [{"id": n.id, "error": n.error} for n in self._store.failed(MAX_FAILED_NODES)]
            as_row = msgspec.structs.asdict(run)
            notices = (
                notice_items(as_row, progress(v.state for v in self._store.views()), failed, self._shards_of)
                if notice_bindings(as_row)
                else []
            )
        if parent is None and notices is None:
            return None
        return Ending(run_id=run.id, resumes=run.resumes, parent=parent, notices=notices)

    def parent_told(self, resumes: int) -> None:
        """The parent heard of the ending numbered ``resumes`` (a resume since then owes it anew)."""
        self._store.atomically(lambda: self._store.mark_run_done("parent_notified", resumes))

    def noticed(self, resumes: int) -> None:
        """The notices of the ending numbered ``resumes`` were sent."""
        self._store.atomically(lambda: self._store.mark_run_done("noticed", resumes))

    def _keep_ms(self, run: RunRow) -> int:
        settings = self._settings
        return settings.failed_retention_ms if run.state == "FAILED" else settings.sweep_after_ms

    def sweep_due(self) -> bool:
        """True when the settled run has been projected, has told its parent and sent its notices, and its
        retention has passed: the host deletes the object's storage, then calls `swept`."""
        run = self._store.run()
        if run is None or run.state not in TERMINAL_RUN_STATES or self.ending() is not None:
            return False
        return self._store.outbox_empty() and run.updated_at + self._keep_ms(run) <= self._clock.now_ms()

    def swept(self) -> None:
        """The object's storage was deleted."""
        self._store.forget()

    def next_alarm(self, again: bool) -> int | None:
        """When the object must tick next: now when ``again`` or changes wait for the read model, the deadline
        while it runs, the end of its retention once settled; None when nothing is due."""
        run = self._store.run()
        if run is None:
            return None
        now = self._clock.now_ms()
        if again or not self._store.outbox_empty():
            return now
        if run.state == "RUNNING":
            return None if run.deadline_at is None or run.expired else max(run.deadline_at, now)
        return max(run.updated_at + self._keep_ms(run), now + 1000)
