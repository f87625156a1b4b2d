"""The Scheduler Durable Object's application shell: reconcile, fire due occurrences, and the run-time API.

One object per Scheduler shard (``scheduler#<i>``, ADR-0079). Every call names its shard first; the object
keeps it for its alarms. Each call reconciles the code's schedules of this shard when the definition's
fingerprint differs from the stored one (a deploy), then does its work and arms one alarm at the earliest
``next_run_at`` of an unpaused row.

The alarm fires up to `FIRE_BATCH` due rows: it decides each (`tsumugi_core.schedule_plan.plan_fire`, with
the previous job's state read from its shard for ``overlap: skip``), enqueues the fired occurrences in
batches through the producer service (derived ids: a repeated alarm re-enqueues the same ids, which the
shards absorb; each ends in a digest of the object's id key, so no caller can enqueue one first, ADR-0177),
then records every result in one transaction. A failure is recorded as ``last_error`` and the
schedule moves on to its next occurrence (the original does not retry an occurrence).

Answers are plain dicts: ``{"ok": true, "schedule": view}`` or ``{"ok": false, "status": 4xx, "error": ...}``
(errors cross RPC as answers, never as exceptions). Starting a flow from a schedule is the extension point
in `_start_runs`: a flow schedule's occurrence starts a run ``<flow>:<name>-<scheduled_at>-<digest>`` on its Run
object, whose start is idempotent by run id.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec

from tsumugi_core.exceptions import NotConfiguredError
from tsumugi_core.flow_spec import FlowSpec
from tsumugi_core.options import EnqueueItem, EnqueueValidationError
from tsumugi_core.schedule_plan import (
    Delete,
    Fire,
    Insert,
    Skip,
    plan_fire,
    reconcile,
    resumed_next_run,
)
from tsumugi_core.schedule_spec import (
    InvalidScheduleError,
    ScheduleSource,
    ScheduleSpec,
    occurrence_item,
    trigger_job_id,
)
from tsumugi_core.schedule_timing import first_occurrence, next_after
from tsumugi_core.states import ACTIVE_STATES
from tsumugi_scheduler import _runtime
from tsumugi_scheduler.api.plain_calls import shard_env
from tsumugi_scheduler.definition import TsumugiDefinition
from tsumugi_scheduler.producer_rpc import MAX_BATCH_ITEMS, SchedulerService
from tsumugi_scheduler.remote_errors import error_text
from tsumugi_scheduler.run_input import RunInputError, run_input_json
from tsumugi_scheduler.schedules.fields import merge_patch, spec_from_camel
from tsumugi_scheduler.schedules.routing import shard_of_schedule
from tsumugi_scheduler.schedules.store import DueRow, FireRecord, ScheduleRow, ScheduleStore
from tsumugi_scheduler.schedules.views import schedule_view
from tsumugi_scheduler.shard.port import SqlLike
from tsumugi_scheduler.timing import entropy, time_source
from tsumugi_scheduler.wire import shard_of_job

__all__ = ["FIRE_BATCH", "SCHEDULE_LOGGER", "SchedulerHost", "definition_fingerprint"]

FIRE_BATCH: Final = 500
"""Due rows one alarm fires; more are fired by the next alarm, armed at once."""
SCHEDULE_LOGGER: Final = "tsumugi.schedules"
_FINGERPRINT: Final = "defs_fingerprint"
_SHARD: Final = "shard"
_ID_KEY: Final = "id_key"
"""The object's secret part of every occurrence and run-now id (ADR-0177): drawn once, never sent anywhere."""
_ACTIVE: Final = frozenset(state.value for state in ACTIVE_STATES)
_log = logging.getLogger(SCHEDULE_LOGGER)
Firing = DueRow | ScheduleRow
"""A schedule being fired: a due row of a tick, or the whole row of a "run now"."""


def definition_fingerprint(specs: dict[str, ScheduleSpec]) -> str:
    """The code schedules as canonical JSON: a deploy that changes any of them changes it."""
    return msgspec.json.encode(sorted(specs.items())).decode()


MAX_RUNTIME_SCHEDULES: Final = 1_000
"""Run-time schedules one Scheduler shard holds at most (issue 25 item 8: 11,002 of them made the list 18 MB)."""


def _fail(status: int, error: str, field: str | None = None, rule: str | None = None) -> dict[str, Any]:
    answer: dict[str, Any] = {"ok": False, "status": status, "error": error}
    if field is not None:
        answer["field"] = field
        answer["rule"] = rule
    return answer


def _invalid(exc: InvalidScheduleError) -> dict[str, Any]:
    return _fail(400, str(exc), exc.field, exc.rule)


def _read_only(name: str) -> dict[str, Any]:
    return _fail(
        409,
        f"schedule {name} is defined in code and is read-only; pause, resume and trigger it, "
        "or change it in the code",
    )


def _not_found(name: str) -> dict[str, Any]:
    return _fail(404, f"schedule not found: {name}")


class SchedulerHost:
    """One Scheduler object: its store, its alarm and its shard of the code's schedules."""

    def __init__(self, storage: Any, sql: SqlLike, env: Any, definition: TsumugiDefinition) -> None:
        """Serve the object whose ``ctx.storage`` is ``storage``."""
        self._storage = storage
        self._sql = sql
        self._env = env
        self._definition = definition
        self._store: ScheduleStore | None = None
        self._shard: int | None = None
        self._ticking = False
        self._reconciled = False
        self._id_key: str | None = None

    # -- opening and reconciling ----------------------------------------------------------------------------

    def _open(self, shard: int | None) -> ScheduleStore | None:
        if self._store is not None and self._shard is not None:
            return self._store
        if self._store is None:
            self._store = ScheduleStore(self._sql)
        stored = self._store.setting(_SHARD)
        if stored is None and shard is not None:
            self._store.put_setting(_SHARD, str(shard))
        self._shard = int(stored) if stored is not None else shard
        return None if self._shard is None else self._store

    def _code_specs(self) -> dict[str, ScheduleSpec]:
        count = self._definition.schedule_shards
        return {
            name: spec
            for name, spec in self._definition.schedules.specs.items()
            if shard_of_schedule(name, count) == self._shard
        }

    def _reconcile(self, store: ScheduleStore, now: int) -> None:
        if self._reconciled:
            return  # once per object instance: a deploy starts new instances with the new code
        code = self._code_specs()
        fingerprint = definition_fingerprint(code)
        if store.setting(_FINGERPRINT) == fingerprint:
            self._reconciled = True
            return
        stored = [row.stored() for row in store.all()]

        def apply() -> None:
            for change in reconcile(code, stored, now):
                if isinstance(change, Insert):
                    store.insert(
                        name=change.name,
                        source=ScheduleSource.CODE,
                        spec=change.spec,
                        next_run_at=change.next_run_at,
                        now=now,
                    )
                elif isinstance(change, Delete):
                    store.delete(change.name)
                else:
                    store.replace_spec(
                        name=change.name,
                        source=ScheduleSource.CODE,
                        spec=change.spec,
                        next_run_at=change.next_run_at,
                        now=now,
                    )
            store.put_setting(_FINGERPRINT, fingerprint)

        self._sql.transaction_sync(apply)
        self._reconciled = True

    def _ready(self, shard: int | None) -> ScheduleStore | None:
        store = self._open(shard)
        if store is not None:
            self._reconcile(store, time_source().now_ms())
        return store

    async def _arm(self, store: ScheduleStore) -> None:
        at = store.next_due_at()
        if at is None:
            await self._storage.deleteAlarm()
        else:
            await _runtime.set_alarm(self._storage, at)

    def _registered(self) -> tuple[str, ...]:
        return self._definition.performers

    def _flows(self) -> Mapping[str, FlowSpec]:
        return self._definition.flows

    def _key(self, store: ScheduleStore) -> str:
        """The object's id key, drawn from the id source the first time an id is derived."""
        if self._id_key is None:
            stored = store.setting(_ID_KEY)
            if stored is None:
                stored = entropy()[0].new_local_id()
                store.put_setting(_ID_KEY, stored)
            self._id_key = stored
        return self._id_key

    def _target_shards(self, spec: ScheduleSpec) -> int:
        return 1 if spec.flow is not None else self._definition.shards_of(spec.binding)

    def _shard_counts(self) -> dict[str, int]:
        return {b: self._definition.shards_of(b) for b in self._definition.performers}

    # -- reads ----------------------------------------------------------------------------------------------

    async def sync(self, shard: int) -> int:
        """Reconcile with the code and arm the alarm; the number of schedules held."""
        store = self._ready(shard)
        assert store is not None
        await self._arm(store)
        return len(store.all())

    async def list(
        self, shard: int, after: str | None = None, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """This shard's schedules by name: every one, or up to ``limit`` named after ``after``."""
        store = self._ready(shard)
        assert store is not None
        await self._arm(store)
        rows = store.all() if limit is None else store.page(after or "", limit)
        return [schedule_view(row) for row in rows]

    async def get(self, shard: int, name: str) -> dict[str, Any] | None:
        """One schedule's view, or None."""
        store = self._ready(shard)
        assert store is not None
        row = store.get(name)
        return None if row is None else schedule_view(row)

    # -- run-time schedules ---------------------------------------------------------------------------------

    async def create(self, shard: int, body: Any) -> dict[str, Any]:
        """A run-time schedule from a camelCase body; 409 when the name exists."""
        store = self._ready(shard)
        assert store is not None
        try:
            spec = spec_from_camel(
                body, registered=self._registered(), shards=self._shard_counts(), flows=self._flows()
            )
        except InvalidScheduleError as exc:
            return _invalid(exc)
        if store.get(spec.name) is not None:
            return _fail(409, f"schedule already exists: {spec.name}")
        if store.count_runtime() >= MAX_RUNTIME_SCHEDULES:
            return _fail(
                409,
                f"this scheduler shard holds {MAX_RUNTIME_SCHEDULES} run-time schedules, its most: "
                "delete one first, or give schedules more shards",
            )
        now = time_source().now_ms()
        store.insert(
            name=spec.name,
            source=ScheduleSource.RUNTIME,
            spec=spec,
            next_run_at=first_occurrence(spec.timing, now),
            now=now,
        )
        await self._arm(store)
        return self._answer(store, spec.name)

    async def update(self, shard: int, name: str, body: Any) -> dict[str, Any]:
        """Change a run-time schedule; a changed timing recomputes the next run, anything else keeps it."""
        store = self._ready(shard)
        assert store is not None
        row = store.get(name)
        if row is None:
            return _not_found(name)
        if row.source is ScheduleSource.CODE:
            return _read_only(name)
        try:
            spec = merge_patch(
                row.spec,
                body,
                registered=self._registered(),
                shards=self._shard_counts(),
                flows=self._flows(),
            )
        except InvalidScheduleError as exc:
            return _invalid(exc)
        now = time_source().now_ms()
        next_run_at = (
            row.next_run_at if spec.timing == row.spec.timing else first_occurrence(spec.timing, now)
        )
        store.replace_spec(
            name=name, source=ScheduleSource.RUNTIME, spec=spec, next_run_at=next_run_at, now=now
        )
        await self._arm(store)
        return self._answer(store, name)

    async def delete(self, shard: int, name: str) -> dict[str, Any]:
        """Delete a run-time schedule."""
        store = self._ready(shard)
        assert store is not None
        row = store.get(name)
        if row is None:
            return _not_found(name)
        if row.source is ScheduleSource.CODE:
            return _read_only(name)
        store.delete(name)
        await self._arm(store)
        return {"ok": True, "name": name}

    async def pause(self, shard: int, name: str) -> dict[str, Any]:
        """Stop firing (any schedule; kept across deploys)."""
        return await self._set_paused(shard, name, paused=True)

    async def resume(self, shard: int, name: str) -> dict[str, Any]:
        """Fire again from the next boundary after now."""
        return await self._set_paused(shard, name, paused=False)

    async def _set_paused(self, shard: int, name: str, *, paused: bool) -> dict[str, Any]:
        store = self._ready(shard)
        assert store is not None
        row = store.get(name)
        if row is None:
            return _not_found(name)
        now = time_source().now_ms()
        next_run_at = row.next_run_at if paused or not row.paused else resumed_next_run(row.stored(), now)
        store.set_paused(name, paused, next_run_at, now)
        await self._arm(store)
        return self._answer(store, name)

    async def trigger(self, shard: int, name: str) -> dict[str, Any]:
        """Run now: one job at once (also while paused); the next run is unchanged."""
        store = self._ready(shard)
        assert store is not None
        row = store.get(name)
        if row is None:
            return _not_found(name)
        now = time_source().now_ms()
        job_id = trigger_job_id(row.spec, self._target_shards(row.spec), now, self._key(store))
        refusals: dict[str, EnqueueValidationError] = {}
        errors = await self._enqueue_fires([(row, now, job_id)], refusals)
        error = errors.get(name)
        is_flow = row.spec.flow is not None
        store.record_trigger(
            name, now, None if error or is_flow else job_id, error, None if error or not is_flow else job_id
        )
        answer = self._answer(store, name)
        answer["run_id" if is_flow else "job_id"] = job_id
        refused = refusals.get(name)
        if refused is not None:
            # The scheduler refuses the job the schedule makes (its payload against the performer's type as it
            # is now, e.g. after a redeploy): the schedule conflicts with it, naming the field; not an upstream
            # failure (it answered 502).
            field = refused.field.removeprefix("items[0].")
            answer.update(_fail(409, f"{field} {refused.rule}", field, refused.rule))
        elif error:
            answer.update(_fail(502, error))
        return answer

    def _answer(self, store: ScheduleStore, name: str) -> dict[str, Any]:
        row = store.get(name)
        assert row is not None
        return {"ok": True, "schedule": schedule_view(row)}

    # -- the alarm ------------------------------------------------------------------------------------------

    async def alarm(self) -> None:
        """Fire the due occurrences, then arm the next alarm."""
        store = self._ready(None)
        if store is None or self._ticking:
            return  # never called by name yet, or a tick in progress (it arms after itself)
        self._ticking = True
        try:
            now = time_source().now_ms()
            due = store.due(now, FIRE_BATCH)
            if due:
                await self._fire(store, due, now)
            if len(due) == FIRE_BATCH:
                await self._storage.setAlarm(time_source().now_ms())
                return
        finally:
            self._ticking = False
        await self._arm(store)

    async def _active(self, rows: Sequence[DueRow]) -> set[str]:
        """Names whose last job is still SCHEDULED, QUEUED or RUNNING (one call per JobShard), or whose last
        flow run is still RUNNING (one call per Run object)."""
        by_shard: dict[str, list[tuple[str, str]]] = {}
        runs = [
            row
            for row in rows
            if row.spec.flow is not None and row.last_run_id is not None and row.spec.overlap.value == "skip"
        ]
        for row in rows:
            if row.spec.flow is None and row.last_job_id is not None and row.spec.overlap.value == "skip":
                by_shard.setdefault(shard_of_job(row.last_job_id), []).append((row.name, row.last_job_id))
        shards = shard_env(self._env).JOB_SHARD

        async def ask(shard: str, pairs: list[tuple[str, str]]) -> set[str]:
            try:
                states = await shards.getByName(shard).states_of(shard, [job for _, job in pairs])
            except Exception:
                _log.exception("reading job states from %s failed; treating them as finished", shard)
                return set()
            return {name for (name, _), state in zip(pairs, states, strict=True) if state in _ACTIVE}

        async def running(row: DueRow) -> set[str]:
            try:
                state = await self._env.RUN.getByName(row.last_run_id).state()
            except Exception:
                _log.exception("reading run %s failed; treating it as finished", row.last_run_id)
                return set()
            return {row.name} if state == "RUNNING" else set()

        found = await asyncio.gather(
            *(ask(s, pairs) for s, pairs in by_shard.items()), *(running(row) for row in runs)
        )
        names: set[str] = set()
        return names.union(*found)

    async def _fire(self, store: ScheduleStore, due: list[DueRow], now: int) -> None:
        active = await self._active(due)
        records: list[FireRecord] = []
        fires: list[tuple[Firing, int, str]] = []
        for row in due:
            try:
                plan = plan_fire(
                    row.stored(),
                    now=now,
                    previous_active=row.name in active,
                    shards=self._target_shards(row.spec),
                    id_key=self._key(store),
                )
            except InvalidScheduleError as exc:  # a binding resharded since the schedule was made
                records.append(
                    FireRecord(
                        name=row.name,
                        occurrence=row.next_run_at,
                        next_run_at=_following(row, now),
                        error=str(exc),
                    )
                )
                continue
            if isinstance(plan, Skip):
                records.append(
                    FireRecord(
                        name=row.name, occurrence=plan.occurrence, next_run_at=plan.next_run_at, skipped=True
                    )
                )
                continue
            assert isinstance(plan, Fire)
            fires.append((row, plan.occurrence, plan.job_id))
            is_flow = row.spec.flow is not None
            records.append(
                FireRecord(
                    name=row.name,
                    occurrence=plan.occurrence,
                    next_run_at=plan.next_run_at,
                    job_id=None if is_flow else plan.job_id,
                    run_id=plan.job_id if is_flow else None,
                )
            )
        errors = await self._enqueue_fires(fires)
        if errors:
            records = [
                msgspec.structs.replace(r, job_id=None, run_id=None, error=errors[r.name])
                if r.name in errors
                else r
                for r in records
            ]
        store.record(records, now)

    async def _payload(self, row: Firing, occurrence: int) -> Any:
        if not row.spec.payload_from_code:
            return row.spec.payload
        function = self._definition.schedules.payloads.get(row.name)
        if function is None:
            raise NotConfiguredError(f"the code no longer defines a payload function for {row.name}")
        value = function(occurrence)
        return await value if inspect.isawaitable(value) else value

    async def _enqueue_fires(
        self,
        fires: Sequence[tuple[Firing, int, str]],
        refusals: dict[str, EnqueueValidationError] | None = None,
    ) -> dict[str, str]:
        """Enqueue each ``(row, scheduled_at, job_id)``; the error text of each schedule that failed (and, in
        ``refusals``, the validation error of each whose job the scheduler refused).

        A flow schedule's ``job_id`` is its run id (``<flow>:<name>-<scheduled_at>``): `_start_runs`.
        """
        errors = await self._start_runs([fire for fire in fires if fire[0].spec.flow is not None])
        items: list[tuple[str, EnqueueItem]] = []
        for row, at, job_id in fires:
            if row.spec.flow is not None:
                continue
            try:
                spec = row.spec
                payload = await self._payload(row, at) if spec.payload_from_code else spec.payload
                items.append((row.name, occurrence_item(spec, payload, job_id)))
            except Exception as exc:
                errors[row.name] = error_text(exc).splitlines()[0]
        service = SchedulerService(shard_env(self._env), self._definition)
        for start in range(0, len(items), MAX_BATCH_ITEMS):
            chunk = items[start : start + MAX_BATCH_ITEMS]
            try:
                await service.enqueue_items([item for _, item in chunk])
            except EnqueueValidationError:
                # One bad item refuses the batch: enqueue one by one so each error lands on its schedule.
                for name, item in chunk:
                    try:
                        await service.enqueue_items([item])
                    except Exception as exc:
                        errors[name] = error_text(exc).splitlines()[0]
                        if refusals is not None and isinstance(exc, EnqueueValidationError):
                            refusals[name] = exc
            except Exception as exc:
                text = error_text(exc).splitlines()[0]
                errors.update((name, text) for name, _ in chunk)
        for name, text in errors.items():
            _log.warning("schedule %s failed: %s", name, text)
        return errors

    async def _start_runs(self, fires: Sequence[tuple[Firing, int, str]]) -> dict[str, str]:
        """Start each flow schedule's run on its Run object; a repeated start of the same id starts nothing."""
        errors: dict[str, str] = {}
        if not fires:
            return errors
        runs = getattr(self._env, "RUN", None)

        async def start(row: Firing, at: int, run_id: str) -> None:
            try:
                if runs is None:
                    raise NotConfiguredError(
                        "RUN binding is not configured, add the Run DO binding to wrangler"
                    )
                value = await self._payload(row, at)
                flow = self._definition.flows.get(str(row.spec.flow))
                if row.spec.payload_from_code and flow is not None:  # a stored input was checked when saved
                    run_input = _checked_run_input(row.name, value, flow)
                else:
                    run_input = msgspec.json.encode(value).decode()
                await runs.getByName(run_id).start(
                    run_id, row.spec.flow, run_input, row.spec.deadline_ms, None, 0
                )
            except Exception as exc:
                errors[row.name] = error_text(exc).splitlines()[0]

        await asyncio.gather(*(start(row, at, run_id) for row, at, run_id in fires))
        return errors


def _following(row: DueRow, now: int) -> int:
    return next_after(row.spec.timing, row.next_run_at, now)


def _checked_run_input(name: str, value: Any, flow: FlowSpec) -> str:
    """An input from the code's function as the run stores it, refused as POST /api/runs would refuse it
    (ADR-0077, ADR-0175: never sent as null, at most a payload's size, of the flow's input type)."""
    try:
        return run_input_json(flow, value)
    except RunInputError as exc:
        raise InvalidScheduleError(
            exc.field, f"{exc.rule} (the input function of schedule {name} answered it)"
        ) from None
