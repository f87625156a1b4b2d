"""The scheduler Worker bench/platform.py runs: bench/e2e_scheduler.py's definition plus one recurring schedule.

The same Worker classes and performers with no notices (a like-for-like job queue), the ``wide`` flow for the
fan-out workload, and ``tick``: ``Hello`` every minute, for the schedule-occurrence workload (its runtime is
started only for that workload, so no other workload pays for the schedule).
"""

from workers import DurableObject, WorkerEntrypoint

from e2e_scheduler import wide
from tsumugi_examples.greetings import greetings
from tsumugi_scheduler.definition import define_tsumugi
from tsumugi_scheduler.entry_classes import entry_classes


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


TsumugiJobShard, TsumugiScheduler, TsumugiRun, TsumugiRpc, Default = entry_classes(
    TSUMUGI, DurableObject, WorkerEntrypoint, module=__name__
)
