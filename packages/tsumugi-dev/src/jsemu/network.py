# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""The global ``fetch``: an outbound request over the network (httpx), answering a JS Response.

A network failure rejects with a JS ``TypeError`` carrying the cause's message; the SDK's ``workers.fetch`` and
``pyodide.http.pyfetch`` turn that into ``OSError``. The local runtime sets `BEFORE_SEND` to charge the
calling invocation one subrequest, as Cloudflare counts it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from jsemu.builtins import define_global
from jsemu.core import UNDEFINED, JsCallable, js_error
from jsemu.fetch_api import Headers, Response, _request_new
from jsemu.promise import JsPromise

__all__ = ["BEFORE_SEND"]

BEFORE_SEND: list[Callable[[], None]] = []
"""Called before each request leaves (the runtime's subrequest charge)."""


async def _send(resource: Any, init: Any) -> Response:
    request = _request_new(resource, init)
    body = await request.read_bytes()
    for hook in BEFORE_SEND:
        hook()
    try:
        async with httpx.AsyncClient() as client:
            answer = await client.request(
                request._method, request._url, headers=request._headers.sorted_pairs(), content=body or None
            )
    except httpx.HTTPError as error:
        raise js_error("TypeError", str(error) or type(error).__name__) from None
    headers = Headers(list(answer.headers.items()))
    return Response(answer.content, answer.status_code, answer.reason_phrase, headers, request._url)


def _fetch(resource: Any, init: Any = UNDEFINED) -> JsPromise:
    return JsPromise.from_awaitable(_send(resource, init))


define_global("fetch", JsCallable(_fetch, name="fetch"))
