"""The example performer Worker: each performer is an entrypoint named after its class (= its binding)."""

from workers import Response, WorkerEntrypoint

from tsumugi_examples import Boom as BoomPerformer
from tsumugi_examples import Hello as HelloPerformer
from tsumugi_examples import NotifyFailure as NotifyFailurePerformer
from tsumugi_examples import NotifySettled as NotifySettledPerformer
from tsumugi_examples import SendMail as SendMailPerformer
from tsumugi_examples import Slow as SlowPerformer
from tsumugi_performer.entrypoint import performer_entrypoint

Hello = performer_entrypoint(WorkerEntrypoint, HelloPerformer)
Boom = performer_entrypoint(WorkerEntrypoint, BoomPerformer)
Slow = performer_entrypoint(WorkerEntrypoint, SlowPerformer)
SendMail = performer_entrypoint(WorkerEntrypoint, SendMailPerformer, factory=SendMailPerformer.from_env)
NotifyFailure = performer_entrypoint(WorkerEntrypoint, NotifyFailurePerformer)
NotifySettled = performer_entrypoint(WorkerEntrypoint, NotifySettledPerformer)


class Default(WorkerEntrypoint):
    async def fetch(self, request):
        return Response("tsumugi example performers: Hello, Boom, Slow, SendMail, NotifyFailure, NotifySettled\n")
