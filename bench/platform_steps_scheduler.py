"""The scheduler Worker bench/platform.py runs for its step workloads: ``Hello`` and ``Steps``, no notices."""

from workers import DurableObject, WorkerEntrypoint

from tsumugi_scheduler.definition import define_tsumugi
from tsumugi_scheduler.entrypoints import DefaultMethods, JobShardMethods, RpcMethods, RunMethods
from tsumugi_scheduler.schedule_entrypoints import SchedulerMethods

TSUMUGI = define_tsumugi(performers=["Hello", "Steps"], bindings={"Steps": {"policy": {"concurrency": 2000}}})


class TsumugiJobShard(JobShardMethods, DurableObject):
    tsumugi = TSUMUGI


class TsumugiScheduler(SchedulerMethods, DurableObject):
    tsumugi = TSUMUGI


class TsumugiRun(RunMethods, DurableObject):
    tsumugi = TSUMUGI


class TsumugiRpc(RpcMethods, WorkerEntrypoint):
    tsumugi = TSUMUGI


class Default(DefaultMethods, WorkerEntrypoint):
    tsumugi = TSUMUGI
