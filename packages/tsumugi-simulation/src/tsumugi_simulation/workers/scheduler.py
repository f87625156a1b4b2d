"""The simulated system's scheduler Worker: Tsumugi's real scheduler classes over the scenario's definition."""

from workers import DurableObject, WorkerEntrypoint

from tsumugi_scheduler.entrypoints import DefaultMethods, JobShardMethods, RpcMethods, RunMethods
from tsumugi_scheduler.schedule_entrypoints import SchedulerMethods
from tsumugi_simulation._system import current_definition

TSUMUGI = current_definition()


class TsumugiJobShard(JobShardMethods, DurableObject):
    tsumugi = TSUMUGI


class TsumugiRun(RunMethods, DurableObject):
    tsumugi = TSUMUGI


class TsumugiScheduler(SchedulerMethods, DurableObject):
    tsumugi = TSUMUGI


class TsumugiRpc(RpcMethods, WorkerEntrypoint):
    tsumugi = TSUMUGI


class Default(DefaultMethods, WorkerEntrypoint):
    tsumugi = TSUMUGI
