# pyright: reportPrivateUsage=false
# (The runtime's half of the JS emulation reads jsemu's object internals; ADR-0097.)
"""The global ``fetch`` of the local runtime's Workers: an outbound request over the network (httpx).

One subrequest of the calling invocation, as on Cloudflare, and one of its six simultaneous connections until
the response headers arrive (a seventh waits for one of them, ADR-0102). A network failure rejects with a JS
``TypeError`` (``fetch failed``); the SDK's ``workers.fetch`` and ``pyodide.http.pyfetch`` turn that into
``OSError``.
"""

from __future__ import annotations

from typing import Any

import httpx
from jsemu.builtins import define_global
from jsemu.core import UNDEFINED, JsCallable, js_error
from jsemu.fetch_api import Headers, Response, _request_new
from jsemu.promise import JsPromise

from tsumugi_dev.invocation import charge_subrequest, current_connections

__all__ = ["install_fetch"]


async def _send(resource: Any, init: Any) -> Response:
    request = _request_new(resource, init)
    body = await request.read_bytes()
    charge_subrequest()
    connections = current_connections()
    if connections is not None:
        await connections.acquire()  # the seventh waits until one of six has its response headers
    held = connections
    try:
        async with httpx.AsyncClient() as client:
            outgoing = client.build_request(
                request._method, request._url, headers=request._headers.sorted_pairs(), content=body or None
            )
            answer = await client.send(outgoing, stream=True)
            if held is not None:  # the headers are in: the connection no longer counts (ADR-0102)
                held.release()
                held = None
            try:
                content = await answer.aread()
            finally:
                await answer.aclose()
    except httpx.HTTPError as error:
        raise js_error("TypeError", f"fetch failed: {error}") from None
    finally:
        if held is not None:
            held.release()
    return Response(content, answer.status_code, answer.reason_phrase, Headers(list(answer.headers.items())), request._url)


def _fetch(resource: Any, init: Any = UNDEFINED) -> JsPromise:
    return JsPromise.from_awaitable(_send(resource, init))


def install_fetch() -> None:
    """Make ``fetch`` a global of the emulated JS side (idempotent)."""
    define_global("fetch", JsCallable(_fetch, name="fetch"))


install_fetch()
