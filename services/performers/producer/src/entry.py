"""A producer Worker: ``POST /hello?name=Ada`` enqueues a Hello job; ``GET /jobs/<id>`` reads it back.

Both need ``Authorization: Bearer <PRODUCER_TOKEN>`` (a secret: ``wrangler secret put PRODUCER_TOKEN``, or
``PRODUCER_TOKEN=...`` in this folder's ``.dev.vars`` under ``tsumugi dev``); without the secret every request
is refused (fail-closed). Enqueueing is POST only, so no link, image or redirect can trigger it (ADR-0066).

It reaches the scheduler through the ``TSUMUGI`` Service Binding with tsumugi_client; its on_enqueue gives
every job it sends priority 5 unless the call chose one (the client applies it before sending).
"""

import hashlib
import hmac
import json
from urllib.parse import parse_qs, unquote, urlsplit

from workers import Response, WorkerEntrypoint

from tsumugi_client import create_client

CLIENT = create_client(on_enqueue=lambda item: {"priority": 5})
USAGE = "POST /hello?name=..., GET /jobs/<id>, with Authorization: Bearer <PRODUCER_TOKEN>\n"


NO_SECRET = (
    "this producer has no PRODUCER_TOKEN secret, so it refuses every request: under tsumugi dev copy "
    "services/performers/producer/.dev.vars.example to .dev.vars beside it and restart; on Cloudflare run "
    "wrangler secret put PRODUCER_TOKEN --name tsumugi-producer"
)


def _configured(env):
    expected = getattr(env, "PRODUCER_TOKEN", None)
    return isinstance(expected, str) and bool(expected)


def _authorized(request, env):
    expected = getattr(env, "PRODUCER_TOKEN", None)
    if not _configured(env):
        return False  # fail-closed: no secret, no access
    scheme, _, given = (request.headers.get("authorization") or "").strip().partition(" ")
    digest = hashlib.sha256(given.strip().encode()).digest()
    return scheme.lower() == "bearer" and hmac.compare_digest(
        digest, hashlib.sha256(expected.encode()).digest()
    )


def _refusal(status, error, **headers):
    return Response(
        json.dumps({"error": error}), status=status, headers={"content-type": "application/json", **headers}
    )


class Default(WorkerEntrypoint):
    async def fetch(self, request):
        url = urlsplit(str(request.url))
        method = str(request.method)
        if url.path != "/hello" and not url.path.startswith("/jobs/"):
            return Response(USAGE, status=404)
        if not _configured(self.env):
            # Still refused (fail-closed), but the operator learns why (issue 26): nothing can pass anyway.
            return Response(
                json.dumps({"error": "unauthorized", "detail": NO_SECRET}),
                status=401,
                headers={"content-type": "application/json", "www-authenticate": "Bearer"},
            )
        if not _authorized(request, self.env):
            return _refusal(401, "unauthorized", **{"www-authenticate": "Bearer"})
        if url.path == "/hello":
            if method != "POST":
                return _refusal(405, "method not allowed", allow="POST")
            name = parse_qs(url.query).get("name", ["world"])[0]
            job_id = await CLIENT.enqueue(self.env, binding="Hello", payload={"name": name})
            return Response.from_json({"id": job_id}, status=201)
        if method not in ("GET", "HEAD"):
            return _refusal(405, "method not allowed", allow="GET, HEAD")
        detail = await CLIENT.get(self.env, unquote(url.path[len("/jobs/") :]))
        if detail is None:
            return _refusal(404, "not found")
        return Response(
            json.dumps({"state": detail.state, "result": detail.result_value()}),
            headers={"content-type": "application/json"},
        )
