# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""The global ``fetch``: an outbound request over the network (httpx), answering a JS Response.

A network failure rejects with a JS ``TypeError`` carrying the cause's message; the SDK's ``workers.fetch`` and
``pyodide.http.pyfetch`` turn that into ``OSError``. The local runtime sets `BEFORE_SEND` to charge the
calling invocation one subrequest, as Cloudflare counts it, and `CONNECTIONS` to hold one of the invocation's
simultaneous connections from before the request leaves until its response headers are in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import httpx
from jsemu.builtins import define_global
from jsemu.core import UNDEFINED, JsCallable, js_error
from jsemu.fetch_api import Headers, Response, _request_new
from jsemu.promise import JsPromise

__all__ = ["BEFORE_SEND", "CONNECTIONS", "REWRITES", "Connections"]


class Connections(Protocol):
    """Where a request waits for a connection: ``acquire`` before it leaves, ``release`` once headers are in."""

    async def acquire(self) -> None: ...

    def release(self) -> None: ...


BEFORE_SEND: list[Callable[[], None]] = []
"""Called before each request leaves (the runtime's subrequest charge)."""
CONNECTIONS: list[Callable[[], Connections | None]] = []
"""Each answers the connections the request draws on, or None (the runtime's simultaneous connections)."""
REWRITES: list[Callable[[str], str | None]] = []
"""Each may answer another URL to send a request to (the local Access stand-in serves a team's URLs); the
response still carries the URL the Worker asked for."""


async def _send(resource: Any, init: Any) -> Response:
    request = _request_new(resource, init)
    body = await request.read_bytes()
    for hook in BEFORE_SEND:
        hook()
    held: list[Connections] = []
    try:
        for find in CONNECTIONS:
            connections = find()
            if connections is not None:
                await connections.acquire()
                held.append(connections)
        async with httpx.AsyncClient() as client:
            target = next((t for t in (r(request._url) for r in REWRITES) if t is not None), request._url)
            outgoing = client.build_request(
                request._method, target, headers=request._headers.sorted_pairs(), content=body or None
            )
            answer = await client.send(outgoing, stream=True)
            while held:  # the headers are in: the connection no longer counts
                held.pop().release()
            try:
                content = await answer.aread()
            finally:
                await answer.aclose()
    except httpx.HTTPError as error:
        raise js_error("TypeError", str(error) or type(error).__name__) from None
    finally:
        while held:
            held.pop().release()
    headers = Headers(list(answer.headers.items()))
    return Response(content, answer.status_code, answer.reason_phrase, headers, request._url)


def _fetch(resource: Any, init: Any = UNDEFINED) -> JsPromise:
    return JsPromise.from_awaitable(_send(resource, init))


define_global("fetch", JsCallable(_fetch, name="fetch"))
