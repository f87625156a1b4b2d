"""The scheduler Worker: the JobShard Durable Object, the queue consumer, the RPC entrypoint and the REST API.

Thin by design: each method hands plain values to tsumugi_scheduler. The definition below is this repository's
setup for the example performers (services/performers); copy this file to deploy your own.
"""

from workers import DurableObject, Response, WorkerEntrypoint

from tsumugi_scheduler import _runtime
from tsumugi_scheduler.consumer import handle_batch
from tsumugi_scheduler.definition import define_tsumugi
from tsumugi_scheduler.maintenance import sweep_read_model
from tsumugi_scheduler.producer_rpc import SchedulerService
from tsumugi_scheduler.rest_api import RestApi
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


class TsumugiJobShard(DurableObject):
    def __init__(self, ctx, env):
        super().__init__(ctx, env)
        self.host = JobShardHost(ctx.storage, _runtime.DurableObjectSql(ctx.storage), env, TSUMUGI)

    async def enqueue_many(self, name, items, settings=None):
        return await self.host.enqueue_many(name, _runtime.plain(items), _runtime.plain(settings))

    async def claim(self, name, job_id, attempt):
        return await self.host.claim(name, job_id, attempt)

    async def report(self, name, job_id, attempt, outcome):
        return await self.host.report(name, job_id, attempt, _runtime.plain(outcome))

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

    async def alarm(self, alarm_info=None):
        await self.host.alarm()


class TsumugiRpc(WorkerEntrypoint):
    def _service(self):
        return SchedulerService(self.env, TSUMUGI)

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
        answer = await RestApi(self.env, TSUMUGI).handle(await _runtime.read_request(request))
        return _runtime.to_response(Response, answer)

    async def queue(self, batch, env=None, ctx=None):
        await handle_batch(batch, self.env, self.ctx)

    async def scheduled(self, controller, env=None, ctx=None):
        await sweep_read_model(self.env, TSUMUGI)
