"""The Run Durable Object's shell: decode -> `RunEngine` command -> the I/O the engine hands out -> one alarm.

The host holds no rule and no SQL of its own (ADR-0117). Calls (`start`, `notify`, `notify_child`, `cancel`,
`retry`, `state`) go to the engine and arm the alarm it asks for; a start is projected at once, so the run is
readable as soon as its start answers. The alarm's tick asks the engine for a plan, enqueues its jobs (one
``enqueue_valid`` per 500: an invalid job fails its node alone), starts its child runs (a refusal fails the
node; a lost answer leaves it unsent, to be started again under the same id, which the child absorbs), sends
its cancels, reports all that back, projects the outbox to D1, tells the parent, sends the notices and deletes
the object's storage once its retention has passed.
"""

from __future__ import annotations

import logging
from typing import Any, Final

import msgspec

from tsumugi_core.ids import shard_name_of
from tsumugi_core.options import EnqueueValidationError
from tsumugi_scheduler import _runtime
from tsumugi_scheduler.definition import TsumugiDefinition
from tsumugi_scheduler.payload_schemas import PayloadSchemas
from tsumugi_scheduler.producer_rpc import MAX_BATCH_ITEMS, SchedulerService
from tsumugi_scheduler.remote_errors import error_text
from tsumugi_scheduler.run.engine import (
    ADVANCE_ROUNDS,
    DECISIONS_PER_TICK,
    PROJECTION_DELAY_MS,
    TERMINAL_RUN_STATES,
    RunEngine,
    RunError,
    TickOutcome,
)
from tsumugi_scheduler.run.projection import project_runs
from tsumugi_scheduler.run.rows import ParentLink, StartRun, TickPlan, job_events
from tsumugi_scheduler.run.settings import RunSettings
from tsumugi_scheduler.shard import SqlLike
from tsumugi_scheduler.timing import entropy, time_source

__all__ = [
    "ADVANCE_ROUNDS",
    "DECISIONS_PER_TICK",
    "PROJECTION_BATCH",
    "PROJECTION_DELAY_MS",
    "RUN_LOGGER",
    "RunError",
    "RunHost",
]

PROJECTION_BATCH: Final = 500
"""Outbox rows per D1 batch (a few statements: node rows go as JSON arrays, run/projection.py)."""
_PROJECTION_ROUNDS: Final = 4
_RETRY_MS: Final = 5_000
_log = logging.getLogger("tsumugi_scheduler")
RUN_LOGGER: Final = "tsumugi.runs"
"""The logger of one-line run events (``run <id> <STATE>``); ``tsumugi dev`` shows them."""
_run_log = logging.getLogger(RUN_LOGGER)


class _Now:
    """The scheduler's time source, read at each call (tests swap it)."""

    def now_ms(self) -> int:
        return time_source().now_ms()


class _Ids:
    """The scheduler's id source, read at each call (the simulation seeds it)."""

    def new_local_id(self) -> str:
        return entropy()[0].new_local_id()


def _message(error: BaseException) -> tuple[str, str]:
    """The type name and message of an error from across RPC (without its traceback)."""
    first = error_text(error).splitlines()[0]
    kind, sep, message = first.partition(": ")
    return (kind, message) if sep and " " not in kind else ("", first)


class RunHost:
    """One Run object: its engine over the object's SQL, the scheduler's definition and its alarm."""

    def __init__(
        self,
        storage: Any,
        sql: SqlLike,
        env: Any,
        definition: TsumugiDefinition,
        schemas: PayloadSchemas | None = None,
        exports: Any = None,
    ) -> None:
        """Serve the object whose storage is ``storage`` (alarms, ``deleteAll``) and ``sql`` (its SQL API);
        ``schemas`` is the isolate's payload-schema cache, ``exports`` its ``ctx.exports``."""
        self._storage = storage
        self._schemas = schemas if schemas is not None else PayloadSchemas()
        self._exports = exports
        self._env = env
        self._definition = definition
        self.engine = RunEngine(
            sql,
            flows=definition.flows,
            settings=definition.runs,
            shards_of=definition.shards_of,
            clock=_Now(),
            ids=_Ids(),
        )
        self._ticking = False

    @property
    def settings(self) -> RunSettings:
        """The definition's ``runs`` settings."""
        return self._definition.runs

    def _service(self) -> SchedulerService:
        return SchedulerService(self._env, self._definition, self._schemas, self._exports)

    async def _arm_by(self, at: int) -> None:
        """Arm for ``at`` unless an alarm is due sooner (never later than one already set)."""
        current = await _runtime.current_alarm(self._storage)
        if current is None or current > at:
            await _runtime.set_alarm(self._storage, at)

    # -- calls ----------------------------------------------------------------------------------------------

    async def start(
        self,
        run_id: str,
        flow: str,
        input_json: str,
        deadline_ms: Any = None,
        parent: Any = None,
        depth: int = 0,
    ) -> dict[str, Any]:
        """Store the run and its static nodes; ``created`` is False when the run already exists.

        Raises:
            RunError: the flow is not registered, nesting is too deep or the deadline is not positive.
        """
        link = (
            None if parent is None else ParentLink(run_id=str(parent["runId"]), node_id=str(parent["nodeId"]))
        )
        command = StartRun(
            run_id=run_id,
            flow=flow,
            input_json=input_json,
            deadline_ms=deadline_ms,
            parent=link,
            depth=int(depth),
        )
        if not self.engine.start(command):
            return {"id": run_id, "created": False}
        try:
            await self._project()  # readable at once, as a job is
        except Exception:  # the tick projects it
            _log.warning("projecting the start of run %s failed; the tick retries", run_id, exc_info=True)
        await self._storage.setAlarm(time_source().now_ms())
        return {"id": run_id, "created": True}

    async def notify(self, events: Any) -> None:
        """Record job events ``{"nodeId", "jobId", "state", "result", "error", ...}``; stale ones are ignored."""
        at = self.engine.notify(job_events(events))
        if at is not None:
            await self._arm_by(at)

    async def notify_child(self, node_id: str, child_run_id: str, state: str) -> None:
        """A child run ended in ``state``: its subflow node takes that state."""
        if self.engine.notify_child(node_id, child_run_id, state):
            await self._storage.setAlarm(time_source().now_ms())

    async def cancel(self) -> dict[str, Any]:
        """Drain a RUNNING run to CANCELLED: unstarted nodes stop, running jobs finish."""
        answer = self.engine.cancel()
        if answer.ok:
            await self._storage.setAlarm(time_source().now_ms())
        return msgspec.to_builtins(answer)

    async def retry(self) -> dict[str, Any]:
        """Resume a FAILED run (ADR-0116)."""
        answer = self.engine.retry()
        if answer.ok:
            await self._storage.setAlarm(time_source().now_ms())
        return msgspec.to_builtins(answer)

    async def state(self) -> str | None:
        """The run's state, or None when there is no run here (never brings a swept object's storage back)."""
        return self.engine.state()

    # -- the tick -------------------------------------------------------------------------------------------

    async def alarm(self) -> None:
        """Tick (one at a time); a failing tick retries in 5 s."""
        if self._ticking:
            await self._storage.setAlarm(time_source().now_ms())
            return
        self._ticking = True
        try:
            await self._tick()
        except Exception:
            _log.exception("tick of run failed; retrying in %d ms", _RETRY_MS)
            await self._arm_by(
                time_source().now_ms() + _RETRY_MS
            )  # a call during the tick may want it sooner
        finally:
            self._ticking = False

    async def _tick(self) -> None:
        engine = self.engine
        run = engine.run()
        if run is None:
            return
        again, retry_later = False, False
        plan = engine.plan_tick()
        if plan is not None:
            outcome, retry_later = await self._carry_out(plan)
            again = engine.finish_tick(plan, outcome)
        await self._project()
        after = engine.state()
        if after != run.state:  # logged once projected: a reader of the line finds it in the read model
            _run_log.info("run %s %s", run.id, after)
        if after in TERMINAL_RUN_STATES:
            if not await self._settle():
                again = True
            elif engine.sweep_due():
                await self._storage.deleteAll()
                engine.swept()
                return
        at = engine.next_alarm(again)
        if at is not None:
            await (
                _runtime.set_alarm(self._storage, at)
                if again or at <= time_source().now_ms()
                else self._arm_by(at)
            )
        if retry_later:
            await self._arm_by(time_source().now_ms() + _RETRY_MS)

    async def _carry_out(self, plan: TickPlan) -> tuple[TickOutcome, bool]:
        """Send the plan's jobs and child runs and its cancels; what happened, and whether a start must be
        tried again later (a child start whose answer was lost)."""
        sent: list[str] = []
        refused: dict[str, str] = {}
        service = self._service()
        for start in range(0, len(plan.jobs), MAX_BATCH_ITEMS):
            chunk = plan.jobs[start : start + MAX_BATCH_ITEMS]
            # A resumed node's new job takes its old job's steps as its shard stores it, in one transaction:
            # its first attempt finds them, and a refused job leaves none behind (ADR-0176, ADR-0184).
            answers = await service.enqueue_valid(
                [job.item for job in chunk], [job.steps_from for job in chunk]
            )
            for job, answer in zip(chunk, answers, strict=True):
                if isinstance(answer, EnqueueValidationError):
                    refused[job.node_id] = f"invalid job: {answer}"
                else:
                    sent.append(job.node_id)
        retry_later = False
        for child in plan.children:
            run = child.run
            parent = None if run.parent is None else msgspec.to_builtins(run.parent)
            try:
                await self._env.RUN.getByName(run.run_id).start(
                    run.run_id, run.flow, run.input_json, None, parent, run.depth
                )
                sent.append(child.node_id)
            except Exception as exc:
                kind, message = _message(exc)
                if kind.endswith("RunError"):  # the child refused: the node fails
                    refused[child.node_id] = f"failed to start child run: {message}"
                else:  # lost on the way (it may have started): start it again, which it absorbs
                    _log.warning("starting child run %s failed; retrying", run.run_id, exc_info=True)
                    retry_later = True
        cancelled: list[str] = []
        for job in plan.cancel_jobs:
            name = shard_name_of(job.job_id)
            answer = await self._env.JOB_SHARD.getByName(name).cancel(name, job.job_id)
            if answer.get("ok") and not answer.get("requested"):
                cancelled.append(
                    job.node_id
                )  # cancelled before it started; else its own terminal event comes
        for child in plan.cancel_children:
            await self._env.RUN.getByName(child.child_run_id).cancel()  # its end arrives through notify_child
        return TickOutcome(sent=sent, refused=refused, cancelled=cancelled), retry_later

    async def _project(self) -> None:
        for _ in range(_PROJECTION_ROUNDS):
            batch = self.engine.projection(PROJECTION_BATCH)
            if batch is None:
                return
            await project_runs(self._env.TSUMUGI_DB, batch.nodes, batch.run, first=batch.first)
            self.engine.projected(batch.up_to_seq)
            if batch.rows < PROJECTION_BATCH:
                return

    async def _settle(self) -> bool:
        """Tell the parent and send the notices a settled run owes; False when one must be tried again."""
        ending = self.engine.ending()
        if ending is None:
            return True
        done = True
        if ending.parent is not None:
            link, state = ending.parent
            try:
                await self._env.RUN.getByName(link.run_id).notify_child(link.node_id, ending.run_id, state)
                self.engine.parent_told(ending.resumes)
            except Exception:
                _log.warning("telling parent run %s failed; retrying", link.run_id, exc_info=True)
                done = False
        if ending.notices is not None and done:
            try:
                if ending.notices:
                    await self._service().enqueue_many(ending.notices)
                self.engine.noticed(ending.resumes)
            except Exception:
                _log.warning("run notices of %s failed; retrying", ending.run_id, exc_info=True)
                done = False
        return done
