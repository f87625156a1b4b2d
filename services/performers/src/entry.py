"""The example performer Worker: each performer is an entrypoint named after its class (= its binding)."""

from urllib.parse import urlsplit

from workers import Response, WorkerEntrypoint

from tsumugi_examples import Boom as BoomPerformer
from tsumugi_examples import Hello as HelloPerformer
from tsumugi_examples import ListNames as ListNamesPerformer
from tsumugi_examples import MailSink
from tsumugi_examples import NotifyFailure as NotifyFailurePerformer
from tsumugi_examples import NotifySettled as NotifySettledPerformer
from tsumugi_examples import Order as OrderPerformer
from tsumugi_examples import ReportGreetings as ReportGreetingsPerformer
from tsumugi_examples import SendMail as SendMailPerformer
from tsumugi_examples import Slow as SlowPerformer
from tsumugi_performer.entrypoint import performer_entrypoint

Hello = performer_entrypoint(WorkerEntrypoint, HelloPerformer)
Boom = performer_entrypoint(WorkerEntrypoint, BoomPerformer)
Slow = performer_entrypoint(WorkerEntrypoint, SlowPerformer)
SendMail = performer_entrypoint(WorkerEntrypoint, SendMailPerformer, factory=SendMailPerformer.from_env)
NotifyFailure = performer_entrypoint(WorkerEntrypoint, NotifyFailurePerformer)
NotifySettled = performer_entrypoint(WorkerEntrypoint, NotifySettledPerformer)
ListNames = performer_entrypoint(WorkerEntrypoint, ListNamesPerformer)
ReportGreetings = performer_entrypoint(WorkerEntrypoint, ReportGreetingsPerformer)
Order = performer_entrypoint(WorkerEntrypoint, OrderPerformer, factory=OrderPerformer.from_env)


# The local stand-in for the mail API SendMail posts to (vars.MAIL_API_URL points here under `tsumugi dev`).
MAIL_SINK = MailSink()


class Default(WorkerEntrypoint):
    async def fetch(self, request):
        path = urlsplit(str(request.url)).path
        if path == "/mail" and MAIL_SINK.from_a_page(request.headers):
            return Response.from_json({"error": "the mail sink does not answer web pages"}, status=403)
        if path == "/mail" and request.method == "POST":
            answer = MAIL_SINK.post(await request.text(), request.headers.get("idempotency-key"))
            return Response.from_json(answer.body, status=answer.status)
        if path == "/mail" and request.method == "GET":
            return Response.from_json(MAIL_SINK.listing())
        return Response(
            "tsumugi example performers: Hello, Boom, Slow, SendMail, NotifyFailure, NotifySettled, ListNames,"
            " ReportGreetings, Order\n"
            "POST /mail: the local mail sink SendMail posts to; GET /mail lists what it received\n"
        )
