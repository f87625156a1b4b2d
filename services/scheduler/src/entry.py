"""The scheduler Worker: the JobShard Durable Object, the queue consumer, the RPC entrypoint and the REST API.

Thin by design: each method hands plain values to tsumugi_scheduler. The definition below is this repository's
setup for the example performers (services/performers); copy this file to deploy your own.
"""

from workers import DurableObject, WorkerEntrypoint, asgi

from tsumugi_core.options import EnqueueValidationError
from tsumugi_scheduler import _runtime
from tsumugi_scheduler.consumer import handle_batch
from tsumugi_scheduler.definition import define_tsumugi
from tsumugi_scheduler.maintenance import sweep_read_model
from tsumugi_scheduler.producer_rpc import SchedulerService
from tsumugi_scheduler.rest_api import rest_app
from tsumugi_scheduler.shard_admin import ShardAdmin
from tsumugi_scheduler.shard_host import JobShardHost


def _mail_defaults(item):
    # Scheduler-side on_enqueue: mail gets more attempts unless the producer chose (beyond-the-original A1).
    return {"max_attempts": 5} if item.binding == "SendMail" else None


TSUMUGI = define_tsumugi(
    performers=["Hello", "Boom", "Slow", "SendMail", "NotifyFailure", "NotifySettled"],
    bindings={"Slow": {"policy": {"reaper_grace_ms": 5_000}}},
    on_enqueue=_mail_defaults,
    on_failure="NotifyFailure",
    on_settled={"binding": "NotifySettled", "states": ["COMPLETED", "FAILED", "CANCELLED", "STALLED"]},
)
API = rest_app(TSUMUGI)  # made once per isolate: it caches the read-model schema check


class TsumugiJobShard(DurableObject):
    def __init__(self, ctx, env):
        super().__init__(ctx, env)
        sql = _runtime.DurableObjectSql(ctx.storage)
        self.host = JobShardHost(ctx.storage, sql, env, TSUMUGI)
        self.admin = ShardAdmin(self.host, ctx.storage, sql)

    async def enqueue_many(self, name, items, settings=None):
        return await self.host.enqueue_many(name, _runtime.plain(items), _runtime.plain(settings))

    async def claim(self, name, job_id, attempt):
        return await self.host.claim(name, job_id, attempt)

    async def report(self, name, job_id, attempt, outcome):
        return await self.host.report(name, job_id, attempt, _runtime.plain(outcome))

    async def report_many(self, name, reports):
        return await self.host.report_many(name, _runtime.plain(reports))

    async def heartbeat(self, name, job_id, attempt, progress=None):
        return await self.host.heartbeat(name, job_id, attempt, progress)

    async def cancel(self, name, job_id):
        return await self.host.cancel(name, job_id)

    async def retry(self, name, job_id):
        return await self.host.retry(name, job_id)

    async def reschedule(self, name, job_id, run_at, priority=None):
        return await self.host.reschedule(name, job_id, run_at, priority)

    async def now(self, name):
        return await self.host.now(name)

    async def get(self, name, job_id):
        return await self.host.get(name, job_id)

    async def configure(self, name, patch):
        return await self.admin.configure(name, _runtime.plain(patch))

    async def reset_policy(self, name):
        return await self.admin.reset_policy(name)

    async def diagnostics(self, name):
        return await self.admin.diagnostics(name)

    async def mutate_many(self, name, action, job_ids):
        return await self.admin.mutate_many(name, action, _runtime.plain(job_ids))

    async def explain(self, name, job_id):
        return await self.admin.explain(name, job_id)

    async def alarm(self, alarm_info=None):
        await self.host.alarm()


class TsumugiRpc(WorkerEntrypoint):
    def _service(self):
        return SchedulerService(self.env, TSUMUGI)

    async def enqueue(self, item):
        # One item is a batch of one; its errors name the bare field (max_attempts), as POST /api/jobs does.
        try:
            (job_id,) = await self._service().enqueue_many([_runtime.plain(item)])
        except EnqueueValidationError as exc:
            raise EnqueueValidationError(
                exc.field.removeprefix("items[0]").lstrip(".") or "item", exc.rule
            ) from None
        return job_id

    async def enqueue_many(self, items, settings=None):
        return await self._service().enqueue_many(_runtime.plain(items), _runtime.plain(settings))

    async def get(self, job_id):
        return await self._service().get(job_id)

    async def cancel(self, job_id):
        return await self._service().cancel(job_id)

    async def retry(self, job_id):
        return await self._service().retry(job_id)

    async def reschedule(self, job_id, body):
        return await self._service().reschedule(job_id, _runtime.plain(body))

    async def heartbeat(self, job_id, attempt, progress=None):
        return await self._service().heartbeat(job_id, attempt, progress)


class Default(WorkerEntrypoint):
    async def fetch(self, request):
        return await asgi.fetch(API, request, self.env)

    async def queue(self, batch, env=None, ctx=None):
        await handle_batch(batch, self.env, self.ctx)

    async def scheduled(self, controller, env=None, ctx=None):
        await sweep_read_model(self.env, TSUMUGI)
