"""The scheduler Worker bench/e2e.py runs by default: the repository's scheduler with no notices.

``services/scheduler/src/entry.py`` configures ``on_failure`` and ``on_settled`` for every state, so each
example job there also runs a NotifySettled job: twice the work of a plain job queue. Huey runs no such
follow-up task, so the like-for-like comparison uses this module: the same Worker classes (the mixins of
``tsumugi_scheduler.entrypoints`` that entry.py uses, ADR-0049) over a definition with the same performers and
no notices (and the example flow, for bench/flows.py). ``--scheduler example`` in bench/e2e.py measures the example setup instead.
"""

from workers import DurableObject, WorkerEntrypoint

from tsumugi_examples.greetings import GreetingsInput, ReportGreetings, greetings
from tsumugi_examples.hello import Hello, HelloPayload
from tsumugi_performer.flow import FlowBuilder, flow
from tsumugi_scheduler.definition import define_tsumugi
from tsumugi_scheduler.entrypoints import DefaultMethods, JobShardMethods, RpcMethods, RunMethods
from tsumugi_scheduler.schedule_entrypoints import SchedulerMethods


@flow("wide", GreetingsInput)
def wide(f: FlowBuilder[GreetingsInput]) -> None:
    """greetings without its first node: the fan-out reads the run input, so it is not bound by the 8,192
    characters a node's result may hold (bench/flows.py's 10,000-node run)."""
    hello = f.fan_out(
        "hello",
        Hello,
        over=lambda run, deps: run.names,
        input=lambda name, run, index: HelloPayload(name=name),
    )
    f.node("report", ReportGreetings, after=[hello], input=lambda run, deps: deps[hello])


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
)


class TsumugiJobShard(JobShardMethods, DurableObject):
    tsumugi = TSUMUGI


# Bound in the wrangler config; this definition holds no schedule.
class TsumugiScheduler(SchedulerMethods, DurableObject):
    tsumugi = TSUMUGI


class TsumugiRun(RunMethods, DurableObject):
    tsumugi = TSUMUGI


class TsumugiRpc(RpcMethods, WorkerEntrypoint):
    tsumugi = TSUMUGI


class Default(DefaultMethods, WorkerEntrypoint):
    tsumugi = TSUMUGI
