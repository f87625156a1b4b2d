"""The scheduler Worker's three classes, without the SDK base classes: an ``entry.py`` mixes them in.

A Worker's entry module must define the classes Cloudflare exports (a Durable Object class, named
entrypoints, ``Default``) as subclasses of the SDK's ``DurableObject`` / ``WorkerEntrypoint``; this module
never imports the SDK, so it holds everything else (ADR-0049). ``tsumugi_scheduler.entry_classes`` builds the
scheduler Worker's five classes from these mixins in one call (ADR-0155); written out, one of them reads::

    class TsumugiJobShard(JobShardMethods, DurableObject):
        tsumugi = TSUMUGI

The mixin comes first so its ``__init__`` runs and then hands ``(ctx, env)`` on to the SDK class. workerd
finds RPC methods through the class's MRO (``dir(cls)``), so inherited methods are exported as if written in
the entry module. Each method decodes what the runtime passes (``_runtime.plain``) and calls the application
service; an entry module that needs more adds or overrides methods in its own subclass.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec
from starlette.applications import Starlette

from tsumugi_core.exceptions import InvalidTypeError
from tsumugi_core.options import EnqueueValidationError
from tsumugi_scheduler import _runtime, run_service
from tsumugi_scheduler.api.runs import read_run
from tsumugi_scheduler.consumer import handle_batch
from tsumugi_scheduler.definition import TsumugiDefinition
from tsumugi_scheduler.event_service import send_event
from tsumugi_scheduler.maintenance import sweep_read_model
from tsumugi_scheduler.payload_schemas import PayloadSchemas
from tsumugi_scheduler.producer_rpc import SchedulerService, bare_field
from tsumugi_scheduler.rest_api import rest_app
from tsumugi_scheduler.run.host import RunHost
from tsumugi_scheduler.schedules.directory import prime
from tsumugi_scheduler.shard_admin import ShardAdmin
from tsumugi_scheduler.shard_host import JobShardHost

__all__ = ["DefaultMethods", "JobShardMethods", "RpcMethods", "RunMethods"]


def _definition_of(cls: type) -> TsumugiDefinition:
    definition = getattr(cls, "tsumugi", None)
    if not isinstance(definition, TsumugiDefinition):
        rule = f"must be define_tsumugi(...), got {type(definition).__name__}"
        raise InvalidTypeError("tsumugi", rule, message=f"class {cls.__name__} must set tsumugi = {rule[8:]}")
    return definition


class _Mixin:
    """Checks at class creation that a concrete subclass names its definition."""

    tsumugi: ClassVar[TsumugiDefinition]
    """The scheduler's definition (`define_tsumugi`); every concrete subclass sets it."""
    ctx: Any
    env: Any

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__module__.startswith("tsumugi_scheduler."):  # the library's own mixins name no definition
            _definition_of(cls)

    def __init__(self, ctx: Any, env: Any) -> None:
        # The SDK class follows in the MRO and stores (ctx, env) its own way (on Cloudflare it wraps env).
        super().__init__(ctx, env)  # pyright: ignore[reportCallIssue]


class JobShardMethods(_Mixin):
    """The JobShard Durable Object: one per (binding, shard); every call names its shard first."""

    def __init__(self, ctx: Any, env: Any) -> None:
        """Open the shard's host over the storage of the SDK's context (``self.ctx``, not the raw ``ctx``)."""
        super().__init__(ctx, env)
        storage = self.ctx.storage
        sql = _runtime.DurableObjectSql(storage, ctx.storage.sql)  # statements on the raw SQL API (ADR-0101)
        self.host = JobShardHost(storage, sql, self.env, self.tsumugi)
        self.admin = ShardAdmin(self.host, storage, sql)

    async def enqueue_many(self, name: str, items: Any, settings: Any = None) -> list[str]:
        """Store new jobs."""
        return await self.host.enqueue_many(name, _runtime.plain(items), _runtime.plain(settings))

    async def enqueue_json(self, name: str, items: str, settings: str | None = None) -> str:
        """Store new jobs: items, settings and ids as JSON text (ADR-0166)."""
        return await self.host.enqueue_json(name, items, settings)

    async def enqueue_checked(
        self, name: str, jobs: str, settings: str | None = None, steps_from: str | None = None
    ) -> str:
        """Store new jobs the scheduler's service checked: JSON text each way (ADR-0172); a resumed run node's
        new job takes its old job's steps in the same transaction (ADR-0184)."""
        return await self.host.enqueue_checked(name, jobs, settings, steps_from)

    async def claim(self, name: str, job_id: str, attempt: int) -> bool:
        """Claim a dispatched attempt for the consumer."""
        return await self.host.claim(name, job_id, attempt)

    async def start_many(self, name: str, attempts: Any) -> list[bool]:
        """Mark started attempts RUNNING (ADR-0052)."""
        return await self.host.start_many(name, _runtime.plain(attempts))

    async def report(self, name: str, job_id: str, attempt: int, outcome: Any) -> dict[str, Any]:
        """Report one attempt's outcome."""
        return await self.host.report(name, job_id, attempt, _runtime.plain(outcome))

    async def report_many(self, name: str, reports: Any) -> list[dict[str, Any]]:
        """Report several outcomes as one group (ADR-0038)."""
        return await self.host.report_many(name, _runtime.plain(reports))

    async def report_json(self, name: str, reports: str) -> str:
        """Report several outcomes: reports and answers as JSON text (ADR-0166)."""
        return await self.host.report_json(name, reports)

    async def heartbeat(self, name: str, job_id: str, attempt: int, progress: Any = None) -> dict[str, Any]:
        """Record a running attempt's heartbeat."""
        return await self.host.heartbeat(name, job_id, attempt, progress)

    async def step(self, name: str, job_id: str, attempt: int, command: str) -> str:
        """A running attempt's step command, JSON text in and out (ADR-0144)."""
        return await self.host.step(name, job_id, attempt, command)

    async def deliver_events(self, name: str, deliveries: Any) -> list[bool]:
        """Events for jobs of this shard that wait for them (ADR-0146)."""
        return await self.host.deliver_events(name, _runtime.plain(deliveries))

    async def cancel(self, name: str, job_id: str) -> dict[str, Any]:
        """Cancel a job (or ask its running attempt to stop)."""
        return await self.host.cancel(name, job_id)

    async def retry(self, name: str, job_id: str) -> dict[str, Any]:
        """Retry a finished job."""
        return await self.host.retry(name, job_id)

    async def reschedule(
        self, name: str, job_id: str, run_at: int, priority: int | None = None
    ) -> dict[str, Any]:
        """Move a waiting job to another time (and priority)."""
        return await self.host.reschedule(name, job_id, run_at, priority)

    async def now(self, name: str) -> int:
        """The shard's clock."""
        return await self.host.now(name)

    async def get(self, name: str, job_id: str) -> dict[str, Any] | None:
        """A job's detail."""
        return await self.host.get(name, job_id)

    async def configure(self, name: str, patch: Any) -> dict[str, Any]:
        """Change the shard's policy at runtime."""
        return await self.admin.configure(name, _runtime.plain(patch))

    async def reset_policy(self, name: str) -> dict[str, Any]:
        """Return to the code's policy."""
        return await self.admin.reset_policy(name)

    async def diagnostics(self, name: str) -> dict[str, Any]:
        """Counts per state and axis."""
        return await self.admin.diagnostics(name)

    async def mutate_many(self, name: str, action: Any, job_ids: Any, states: Any = None) -> dict[str, Any]:
        """Retry or cancel many jobs (only those in ``states`` when given)."""
        return await self.admin.mutate_many(
            name, action, _runtime.plain(job_ids), None if states is None else _runtime.plain(states)
        )

    async def explain(self, name: str, job_id: str) -> dict[str, Any] | None:
        """Why a job waits."""
        return await self.admin.explain(name, job_id)

    async def states_of(self, name: str, job_ids: Any) -> list[str | None]:
        """Each job's state or None (the Scheduler's overlap check)."""
        return await self.host.states_of(name, list(_runtime.plain(job_ids)))

    async def event_send(
        self, box: str, name: str, key: str, payload: str, event_id: str | None = None
    ) -> Any:
        """Keep an event and deliver it to the jobs waiting for it (this object is its box, ADR-0146)."""
        return await self.host.event_send(box, name, key, payload, event_id)

    async def event_wait(
        self, box: str, name: str, key: str, job_id: str, step: str, shard: str, until: int, seen: Any = None
    ) -> str | None:
        """A kept event for a job that starts waiting (JSON text), or None once it waits here."""
        return await self.host.event_wait(box, name, key, job_id, step, shard, until, _runtime.plain(seen))

    async def alarm(self, alarm_info: Any = None) -> None:
        """Tick: dispatch, reap, project, notify (an event box retries its deliveries instead)."""
        await self.host.alarm()


class RunMethods(_Mixin):
    """The Run Durable Object: one per flow run (addressed by the run id)."""

    _schemas: ClassVar[PayloadSchemas]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._schemas = PayloadSchemas()  # once per class, i.e. per isolate (ADR-0075)

    def __init__(self, ctx: Any, env: Any) -> None:
        """Open the run's host over the storage of the SDK's context (``self.ctx``, not the raw ``ctx``)."""
        super().__init__(ctx, env)
        storage = self.ctx.storage
        self.run = RunHost(
            storage,
            _runtime.DurableObjectSql(storage, ctx.storage.sql),
            self.env,
            self.tsumugi,
            self._schemas,
            getattr(self.ctx, "exports", None),
        )

    async def start(
        self,
        run_id: str,
        flow: str,
        input_json: str,
        deadline_ms: Any = None,
        parent: Any = None,
        depth: int = 0,
    ) -> dict[str, Any]:
        """Start the run (idempotent by run id)."""
        return await self.run.start(
            run_id, flow, input_json, _runtime.plain(deadline_ms), _runtime.plain(parent), depth
        )

    async def notify(self, events: Any) -> None:
        """Job events of the run's nodes, from the job shards' outbox."""
        await self.run.notify(_runtime.plain(events))

    async def notify_child(self, node_id: str, child_run_id: str, state: str) -> None:
        """A child run's end."""
        await self.run.notify_child(node_id, child_run_id, state)

    async def cancel(self) -> dict[str, Any]:
        """Cancel (drain) the run."""
        return await self.run.cancel()

    async def retry(self) -> dict[str, Any]:
        """Resume a FAILED run."""
        return await self.run.retry()

    async def state(self) -> str | None:
        """The run's state."""
        return await self.run.state()

    async def alarm(self, alarm_info: Any = None) -> None:
        """Tick the run."""
        await self.run.alarm()


def _json_argument(value: Any, field: str) -> Any:
    """An argument sent as JSON text, decoded; anything else is refused naming ``field``."""
    if not isinstance(value, str):
        raise EnqueueValidationError(field, f"must be JSON text, got {type(value).__name__}")
    try:
        return msgspec.json.decode(value)
    except msgspec.DecodeError as exc:
        raise EnqueueValidationError(field, f"must be valid JSON text ({exc})") from None


class RpcMethods(_Mixin):
    """The named entrypoint producers reach over a Service Binding (``tsumugi_client``).

    Schedule calls come from `tsumugi_scheduler.schedule_entrypoints.ScheduleRpcMethods`, which an entry
    module mixes in beside this class.
    """

    _schemas: ClassVar[PayloadSchemas]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._schemas = PayloadSchemas()  # once per class, i.e. per isolate (ADR-0075)

    def _service(self) -> SchedulerService:
        exports = getattr(getattr(self, "ctx", None), "exports", None)
        return SchedulerService(self.env, self.tsumugi, self._schemas, exports)

    async def enqueue(self, item: Any) -> str:
        """Enqueue one job; errors name the bare field (``max_attempts``), as POST /api/jobs does."""
        try:
            (job_id,) = await self._service().enqueue_many([_runtime.plain(item)])
        except EnqueueValidationError as exc:
            raise bare_field(exc, "items[0]") from None
        return job_id

    async def enqueue_many(self, items: Any, settings: Any = None) -> list[str]:
        """Enqueue jobs."""
        return await self._service().enqueue_many(_runtime.plain(items), _runtime.plain(settings))

    async def enqueue_json(self, items: Any, settings: Any = None) -> str:
        """Enqueue jobs: the items (and settings) as JSON text, the ids answered as JSON text (ADR-0166)."""
        decoded = _json_argument(items, "items")
        given = None if settings is None else _json_argument(settings, "settings")
        return msgspec.json.encode(await self._service().enqueue_many(decoded, given)).decode()

    async def send_event(
        self, name: Any, key: Any, payload: Any = None, event_id: Any = None
    ) -> dict[str, Any]:
        """Send an event to the jobs waiting for ``name``/``key`` (ADR-0146); errors name the field."""
        return await send_event(self.env, name, key, _runtime.plain(payload), event_id)

    async def get(self, job_id: Any) -> dict[str, Any] | None:
        """A job's detail."""
        return await self._service().get(job_id)

    async def cancel(self, job_id: Any) -> dict[str, Any]:
        """Cancel a job."""
        return await self._service().cancel(job_id)

    async def retry(self, job_id: Any) -> dict[str, Any]:
        """Retry a finished job."""
        return await self._service().retry(job_id)

    async def reschedule(self, job_id: Any, body: Any) -> dict[str, Any]:
        """Move a waiting job."""
        return await self._service().reschedule(job_id, _runtime.plain(body))

    async def heartbeat(self, job_id: Any, attempt: Any, progress: Any = None) -> dict[str, Any]:
        """A performer's heartbeat, forwarded to its shard."""
        return await self._service().heartbeat(job_id, attempt, progress)

    async def start_run(self, body: Any) -> str:
        """Start a flow run from ``{"flow", "input", "id"?, "deadlineMs"?}``; answers the run id."""
        return await run_service.start_run(self.env, self.tsumugi, _runtime.plain(body))

    async def get_run(self, run_id: Any) -> dict[str, Any] | None:
        """A run and its nodes from the read model (GET /api/runs/{id}'s body), or None."""
        found = await read_run(self.env.TSUMUGI_DB, str(run_id))
        return None if found is None else msgspec.to_builtins(found)

    async def cancel_run(self, run_id: Any) -> dict[str, Any]:
        """Cancel a RUNNING run."""
        return await run_service.cancel_run(self.env, self.tsumugi, str(run_id))

    async def retry_run(self, run_id: Any) -> dict[str, Any]:
        """Resume a FAILED run."""
        return await run_service.retry_run(self.env, self.tsumugi, str(run_id))


class DefaultMethods(_Mixin):
    """The Worker's default handlers: the REST API and dashboard, the queue consumer and the cron sweep."""

    _api: ClassVar[Starlette]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__module__.startswith("tsumugi_scheduler."):  # the library's own mixins name no definition
            # Made once per class, i.e. once per isolate: the app caches the read-model schema check.
            cls._api = rest_app(_definition_of(cls))

    async def fetch(self, request: Any) -> Any:
        """Serve the REST API and the dashboard."""
        prime(self.env, self.tsumugi, self.ctx)
        return await _runtime.serve_asgi(self._api, request, self.env)

    async def queue(self, batch: Any, env: Any = None, ctx: Any = None) -> None:
        """Run a batch of dispatched attempts."""
        prime(self.env, self.tsumugi, self.ctx)
        await handle_batch(batch, self.env, self.ctx)

    async def scheduled(self, controller: Any, env: Any = None, ctx: Any = None) -> None:
        """The cron sweep of the read model; primes the Scheduler."""
        prime(self.env, self.tsumugi, self.ctx)
        await sweep_read_model(self.env, self.tsumugi)
