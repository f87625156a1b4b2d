"""The scheduler Worker bench/platform.py runs: bench/e2e_scheduler.py's definition plus one recurring schedule.

The same Worker classes and performers with no notices (a like-for-like job queue), the ``wide`` flow for the
fan-out workload, and ``tick``: ``Hello`` every minute, for the schedule-occurrence workload (its runtime is
started only for that workload, so no other workload pays for the schedule).
"""

from workers import DurableObject, WorkerEntrypoint

from e2e_scheduler import wide
from tsumugi_examples.greetings import greetings
from tsumugi_scheduler.definition import define_tsumugi
from tsumugi_scheduler.entrypoints import DefaultMethods, JobShardMethods, RpcMethods, RunMethods
from tsumugi_scheduler.schedule_entrypoints import SchedulerMethods, ScheduleRpcMethods


def _tick_payload(scheduled_at):
    return {"name": f"tick {scheduled_at}"}


TSUMUGI = define_tsumugi(
    performers=[
        "Hello",
        "Boom",
        "Slow",
        "SendMail",
        "NotifyFailure",
        "NotifySettled",
        "ListNames",
        "ReportGreetings",
    ],
    flows=[greetings, wide],
    schedules={"tick": {"binding": "Hello", "payload": _tick_payload, "every_ms": 60_000}},
)


class TsumugiJobShard(JobShardMethods, DurableObject):
    tsumugi = TSUMUGI


class TsumugiScheduler(SchedulerMethods, DurableObject):
    tsumugi = TSUMUGI


class TsumugiRun(RunMethods, DurableObject):
    tsumugi = TSUMUGI


class TsumugiRpc(ScheduleRpcMethods, RpcMethods, WorkerEntrypoint):
    tsumugi = TSUMUGI


class Default(DefaultMethods, WorkerEntrypoint):
    tsumugi = TSUMUGI
