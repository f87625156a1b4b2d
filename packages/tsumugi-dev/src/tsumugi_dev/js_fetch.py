# pyright: reportPrivateUsage=false
# (The runtime's half of the JS emulation reads jsemu's object internals; ADR-0097.)
"""The global ``fetch`` of the local runtime's Workers: an outbound request over the network (httpx).

One subrequest of the calling invocation, as on Cloudflare. A network failure rejects with a JS ``TypeError``
(``fetch failed``); the SDK's ``workers.fetch`` and ``pyodide.http.pyfetch`` turn that into ``OSError``.
"""

from __future__ import annotations

from typing import Any

import httpx
from jsemu.builtins import define_global
from jsemu.core import UNDEFINED, JsCallable, js_error
from jsemu.fetch_api import Headers, Response, _request_new
from jsemu.promise import JsPromise

from tsumugi_dev.invocation import charge_subrequest

__all__ = ["install_fetch"]


async def _send(resource: Any, init: Any) -> Response:
    request = _request_new(resource, init)
    body = await request.read_bytes()
    charge_subrequest()
    try:
        async with httpx.AsyncClient() as client:
            answer = await client.request(
                request._method, request._url, headers=request._headers.sorted_pairs(), content=body or None
            )
    except httpx.HTTPError as error:
        raise js_error("TypeError", f"fetch failed: {error}") from None
    return Response(answer.content, answer.status_code, answer.reason_phrase, Headers(list(answer.headers.items())), request._url)


def _fetch(resource: Any, init: Any = UNDEFINED) -> JsPromise:
    return JsPromise.from_awaitable(_send(resource, init))


def install_fetch() -> None:
    """Make ``fetch`` a global of the emulated JS side (idempotent)."""
    define_global("fetch", JsCallable(_fetch, name="fetch"))


install_fetch()
