"""`WorkerClient`: jobs, runs and schedules from inside a Worker, through its Service Binding.

It has the HTTP clients' methods (ADR-0162) with the Worker's ``env`` first. Every enqueue runs the same steps
as theirs, all before anything is sent: the on_enqueue defaults (A1), the core's validation, and routing to a
shard. Items then go out in one call per destination shard (chunks of one shard in order, different shards in
parallel), and the ids come back in input order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping, Sequence
from types import TracebackType
from typing import Any, Literal, Self, Unpack, overload

from tsumugi_client._enqueue_kwargs import EnqueueItemDict, EnqueueKwargs, item_from_fields
from tsumugi_client._enqueue_plan import item_of, relocate, unprefixed
from tsumugi_client._events import EventSent, decode_event_sent, event_body
from tsumugi_client._routing import Batch, Destination, destination_of, plan_batches
from tsumugi_client._rpc_transport import ServiceBindingTransport
from tsumugi_client._runs import (
    FlowLike,
    RunDetail,
    read_run_detail,
    rpc_run,
    run_body,
    run_control,
    started_run_id,
)
from tsumugi_client._schedules import (
    ScheduleFields,
    rpc_schedule,
    schedule_body,
    schedule_change,
    schedule_of,
    schedules_of,
    trigger_answer,
)
from tsumugi_client._targets import P, PerformerRef, Performs, resolve_target
from tsumugi_client._views import CancelResult, JobDetail
from tsumugi_client._wire import reschedule_body, wire_item
from tsumugi_core.enqueue_defaults import OnEnqueue, apply_defaults
from tsumugi_core.exceptions import InvalidTypeError
from tsumugi_core.ids import InvalidJobIdError, parse_job_id
from tsumugi_core.options import EnqueueItem, EnqueueValidationError, validate_enqueue
from tsumugi_core.time_values import Duration, Instant

__all__ = ["WorkerClient"]


def _check_job_id(job_id: object) -> str:
    if not isinstance(job_id, str):
        raise InvalidJobIdError(f"job id must be a string, got {type(job_id).__name__}")
    parse_job_id(job_id)
    return job_id


class WorkerClient:
    """The Worker client: the HTTP clients' methods through a Service Binding; make it with `create_client`.

    Every method takes the Worker's ``env`` first, as the original's ``createClient`` does (ADR-0061): the
    Service Binding lives there. Programs outside Workers use `TsumugiClient` / `AsyncTsumugiClient`, whose
    methods have the same names, arguments and answers but for two things: ``enqueue`` answers the job id, not
    a handle (waiting inside a Worker would spend its wall time and subrequests), and ``env`` comes first
    (ADR-0162). Options are keyword-only and kept apart from the payload.
    """

    def __init__(
        self,
        *,
        transport: ServiceBindingTransport,
        shard_counts: Mapping[str, int],
        on_enqueue: OnEnqueue | None,
    ) -> None:
        """Use ``transport``; ``shard_counts`` and ``on_enqueue`` are already checked by `create_client`."""
        self._transport = transport
        self._shard_counts = dict(shard_counts)
        self._on_enqueue = on_enqueue

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Nothing to release (the binding belongs to the Worker); kept so ``async with`` works."""
        await self._transport.aclose()

    @overload
    async def enqueue(
        self, env: object, target: type[Performs[P, Any]], payload: P, /, **options: Unpack[EnqueueKwargs]
    ) -> str: ...
    @overload
    async def enqueue(
        self, env: object, target: PerformerRef[P, Any], payload: P, /, **options: Unpack[EnqueueKwargs]
    ) -> str: ...
    @overload
    async def enqueue(
        self, env: object, target: str, payload: Any, /, **options: Unpack[EnqueueKwargs]
    ) -> str: ...
    @overload
    async def enqueue(
        self, env: object, *, binding: str, payload: Any, **options: Unpack[EnqueueKwargs]
    ) -> str: ...
    async def enqueue(self, env: object, *args: Any, **options: Any) -> str:
        """Enqueue one job and return its id (an existing id on a dedup hit).

        The target is a performer class, a `PerformerRef` or a binding name, followed by the payload (typed
        targets check the payload with pyright); the original's keywords ``binding=`` / ``payload=`` work too.
        Example (inside a Worker): ``await client.enqueue(self.env, Mail, MailPayload(to="a"), priority=5)``.

        Raises:
            EnqueueValidationError: an option breaks a rule (nothing is sent), or the scheduler refused it.
            TsumugiClientError: the scheduler could not be reached or failed.
        """
        if args:
            if len(args) != 2 or "binding" in options or "payload" in options:
                raise InvalidTypeError(
                    "target",
                    "and payload go together, or binding= and payload= alone",
                    message=(
                        "enqueue takes (env, target, payload, **options) or (env, binding=, payload=, ...)"
                    ),
                )
            binding, _ = resolve_target(args[0])
            options = {"binding": binding, "payload": args[1], **options}
        item = item_from_fields(options)
        prepared = await self._prepare(item)
        try:
            (job_id,) = await self._send(env, [prepared])
        except EnqueueValidationError as exc:
            raise unprefixed(exc) from None
        return job_id

    async def enqueue_many(self, env: object, items: Sequence[EnqueueItem | EnqueueItemDict]) -> list[str]:
        """Enqueue several jobs with one call per destination shard; ids come back in input order.

        Items are `EnqueueItem`s or dicts of Python option names. Every item is checked before any is sent;
        errors name the item as ``items[<index>].<field>``. Calls to different shards are independent: when
        one fails, others may have stored their items (the error of the first failed batch is raised).

        Raises:
            EnqueueValidationError: an item breaks a rule (nothing is sent), or the scheduler refused one.
            TsumugiClientError: the scheduler could not be reached or failed.
        """
        prepared: list[tuple[EnqueueItem, Destination]] = []
        for index, raw in enumerate(items):
            try:
                item = item_of(raw)
                prepared.append(await self._prepare(item))
            except EnqueueValidationError as exc:
                raise EnqueueValidationError(f"items[{index}].{exc.field}", exc.rule) from None
        return await self._send(env, prepared)

    async def _prepare(self, item: EnqueueItem) -> tuple[EnqueueItem, Destination]:
        if self._on_enqueue is not None:
            defaults = self._on_enqueue(item)
            if isinstance(defaults, Awaitable):
                defaults = await defaults
            item = apply_defaults(item, defaults)
        validate_enqueue(item)
        return item, destination_of(item, self._shard_counts)

    async def _send(self, env: object, prepared: Sequence[tuple[EnqueueItem, Destination]]) -> list[str]:
        if not prepared:
            return []
        # Built up front: nothing is sent unless every item encodes.
        wire = [wire_item(item, destination.shard) for item, destination in prepared]
        per_destination: dict[Destination, list[Batch]] = {}
        for batch in plan_batches([destination for _, destination in prepared]):
            per_destination.setdefault(batch.destination, []).append(batch)
        ids: list[str] = [""] * len(prepared)

        async def send_in_order(batches: list[Batch]) -> None:
            # One shard's chunks go one after the other so creation order follows input order there.
            for batch in batches:
                try:
                    answer = await self._transport.enqueue_many(env, [wire[p] for p in batch.positions])
                except EnqueueValidationError as exc:
                    raise relocate(exc, batch.positions) from None
                for position, job_id in zip(batch.positions, answer, strict=True):
                    ids[position] = job_id

        outcomes = await asyncio.gather(
            *(send_in_order(batches) for batches in per_destination.values()), return_exceptions=True
        )
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        return ids

    async def get(self, env: object, job_id: str) -> JobDetail | None:
        """The job's current detail, or None when the scheduler does not know it.

        Raises:
            InvalidJobIdError: ``job_id`` is malformed (nothing is sent).
            TsumugiClientError: the scheduler could not be reached or failed.
        """
        return await self._transport.get(env, _check_job_id(job_id))

    async def cancel(self, env: object, job_id: str) -> CancelResult:
        """Cancel a job; a QUEUED or RUNNING job is asked to stop (``requested=True``).

        Raises:
            InvalidJobIdError: ``job_id`` is malformed (nothing is sent).
            JobNotFoundError: the job is not in its shard (swept or never existed).
            TsumugiClientError: the job's state does not permit it (status 409), or a transport failure.
        """
        return await self._transport.cancel(env, _check_job_id(job_id))

    async def retry(self, env: object, job_id: str) -> None:
        """Run a FAILED or STALLED job again now.

        Raises:
            InvalidJobIdError: ``job_id`` is malformed (nothing is sent).
            JobNotFoundError: the job is not in its shard (swept or never existed).
            TsumugiClientError: the job's state does not permit it (status 409), or a transport failure.
        """
        await self._transport.retry(env, _check_job_id(job_id))

    async def send_event(
        self, env: object, name: str, *, key: str, payload: Any = None, event_id: str | None = None
    ) -> EventSent:
        """Send event ``name``/``key``: every job waiting for it gets ``payload`` once (ADR-0146).

        An event no job waits for yet is kept a day for jobs that start waiting later; ``event_id`` makes a
        resend harmless while it is kept.

        Raises:
            EnqueueValidationError: ``name``, ``key``, ``payload`` or ``event_id`` breaks its rule (``field``).
            TsumugiClientError: a transport failure.
        """
        answer = await self._transport.send_event(env, event_body(name, key, payload, event_id))
        return decode_event_sent(answer)

    async def reschedule(
        self,
        env: object,
        job_id: str,
        *,
        run_at: Instant | None = None,
        delay_ms: Duration | None = None,
        priority: int | None = None,
    ) -> None:
        """Move a SCHEDULED job to ``run_at`` or ``delay_ms`` from now, optionally with a new priority.

        ``run_at`` is epoch ms or an aware `datetime`; ``delay_ms`` is ms or a `timedelta`.

        Raises:
            EnqueueValidationError: both or neither of ``run_at`` / ``delay_ms``, or a bad value (nothing sent).
            InvalidJobIdError: ``job_id`` is malformed (nothing is sent).
            JobNotFoundError: the job is not in its shard (swept or never existed).
            TsumugiClientError: the job is not SCHEDULED or has a cancel request (status 409), or a transport
                failure.
        """
        checked = _check_job_id(job_id)
        await self._transport.reschedule(env, checked, reschedule_body(run_at, delay_ms, priority))

    # runs ---------------------------------------------------------------------------------------------

    async def start_run(
        self,
        env: object,
        flow: str | FlowLike,
        run_input: Any,
        *,
        run_id: str | None = None,
        deadline_ms: Duration | None = None,
    ) -> str:
        """Start a run of ``flow`` on ``run_input``; see `TsumugiClient.start_run`.

        Raises:
            RunStartError: the scheduler refused it (the message is its rule).
            TsumugiClientError: the scheduler could not be reached or has no flows.
        """
        body = run_body(flow, run_input, run_id, deadline_ms)
        return started_run_id(await rpc_run(self._transport.stub(env), "start_run", body))

    async def get_run(self, env: object, run_id: str) -> RunDetail | None:
        """The run and its nodes, or None when the scheduler has no such run."""
        found = await rpc_run(self._transport.stub(env), "get_run", run_id)
        return None if found is None else read_run_detail(found)

    async def _run_control(self, env: object, action: Literal["cancel", "retry"], run_id: str) -> None:
        run_control(await rpc_run(self._transport.stub(env), f"{action}_run", run_id), run_id)

    async def cancel_run(self, env: object, run_id: str) -> None:
        """Cancel a RUNNING run (it drains to CANCELLED); 409 ``invalid-state`` / 410 ``gone`` otherwise."""
        await self._run_control(env, "cancel", run_id)

    async def retry_run(self, env: object, run_id: str) -> None:
        """Resume a FAILED run; 409 ``invalid-state`` / 410 ``gone`` otherwise."""
        await self._run_control(env, "retry", run_id)

    # schedules ----------------------------------------------------------------------------------------

    async def _schedule(self, env: object, method: str, *args: Any) -> Any:
        return await rpc_schedule(self._transport.stub(env), method, *args)

    async def list_schedules(self, env: object) -> list[dict[str, Any]]:
        """Every schedule (the API's view: timing in words, next occurrences, last run...)."""
        return schedules_of(await self._schedule(env, "list_schedules"))

    async def get_schedule(self, env: object, name: str) -> dict[str, Any] | None:
        """One schedule, or None."""
        found = await self._schedule(env, "get_schedule", name)
        return None if found is None else dict(found)

    async def create_schedule(
        self, env: object, name: str, **options: Unpack[ScheduleFields]
    ) -> dict[str, Any]:
        """Create a run-time schedule (`ScheduleFields`); the created schedule.

        Raises:
            ScheduleError: the scheduler refused it (``field`` as the body spells it, ``rule``, ``status``).
        """
        answer = await self._schedule(env, "create_schedule", schedule_body(name, **options))
        return schedule_of(schedule_change(answer))

    async def update_schedule(
        self, env: object, name: str, **changes: Unpack[ScheduleFields]
    ) -> dict[str, Any]:
        """Change a run-time schedule's fields; the changed schedule."""
        answer = await self._schedule(env, "update_schedule", name, schedule_body(**changes))
        return schedule_of(schedule_change(answer))

    async def delete_schedule(self, env: object, name: str) -> None:
        """Delete a run-time schedule."""
        schedule_change(await self._schedule(env, "delete_schedule", name))

    async def pause_schedule(self, env: object, name: str) -> dict[str, Any]:
        """Stop firing; the schedule."""
        return schedule_of(schedule_change(await self._schedule(env, "pause_schedule", name)))

    async def resume_schedule(self, env: object, name: str) -> dict[str, Any]:
        """Fire again from the next boundary; the schedule."""
        return schedule_of(schedule_change(await self._schedule(env, "resume_schedule", name)))

    async def trigger_schedule(self, env: object, name: str) -> str:
        """Enqueue one occurrence now; its job id (a flow schedule's: the id of the run it started)."""
        return trigger_answer(schedule_change(await self._schedule(env, "trigger_schedule", name)))
