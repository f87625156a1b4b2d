"""A producer Worker: ``POST /hello?name=Ada`` enqueues a Hello job; ``GET /jobs/<id>`` reads it back.

It reaches the scheduler through the ``TSUMUGI`` Service Binding with tsumugi_client; its on_enqueue gives
every job it sends priority 5 unless the call chose one (the client applies it before sending).
"""

import json
from urllib.parse import parse_qs, unquote, urlsplit

from workers import Response, WorkerEntrypoint

from tsumugi_client import create_client

CLIENT = create_client(on_enqueue=lambda item: {"priority": 5})


class Default(WorkerEntrypoint):
    async def fetch(self, request):
        url = urlsplit(str(request.url))
        if url.path == "/hello":
            name = parse_qs(url.query).get("name", ["world"])[0]
            job_id = await CLIENT.enqueue(self.env, binding="Hello", payload={"name": name})
            return Response.from_json({"id": job_id}, status=201)
        if url.path.startswith("/jobs/"):
            detail = await CLIENT.get(self.env, unquote(url.path[len("/jobs/") :]))
            if detail is None:
                return Response.from_json({"error": "not found"}, status=404)
            return Response(
                json.dumps({"state": detail.state, "result": detail.result_value()}),
                headers={"content-type": "application/json"},
            )
        return Response("POST /hello?name=..., GET /jobs/<id>\n", status=404)
