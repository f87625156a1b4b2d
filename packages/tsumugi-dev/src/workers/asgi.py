"""``workers.asgi``: serve an ASGI app from a Worker's ``fetch`` (``await asgi.fetch(app, request, env)``).

Imitates the SDK's adapter on plain CPython: the request becomes an ASGI ``http`` scope (path
percent-decoded, ``raw_path`` kept, headers lower-cased bytes) with the Worker's ``env`` under
``scope["env"]``; the body is handed over in one message; the app's answer becomes a ``Response``.
Unlike the SDK, the ASGI lifespan protocol is not run around each request: the Workers here declare no
lifespan handlers, and a per-request startup would only cost time.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from workers.http import JsRequest, Request, Response

__all__ = ["fetch", "request_to_scope"]

ASGI = {"spec_version": "2.0", "version": "3.0"}
NULL_BODY_STATUSES = frozenset({101, 103, 204, 205, 304})


def _split_url(url: str) -> tuple[str, str, str]:
    # Not urlsplit: a front end that hands over a decoded path leaves a raw "#" of a job id in the URL,
    # which urlsplit would take for a fragment. A percent-encoded id reads the same either way.
    scheme, _, rest = url.partition("://")
    slash = rest.find("/")
    path, _, query = (rest[slash:] if slash >= 0 else "/").partition("?")
    return scheme or "http", path, query


def request_to_scope(request: Request | JsRequest, env: Any) -> dict[str, Any]:
    """The ASGI ``http`` scope of ``request`` (the SDK's wrapper or its ``js_object``), carrying ``env``.

    As in the SDK, the wrapper's ``method`` raises ``KeyError`` for a method Python's ``HTTPMethod`` lacks
    (QUERY, PURGE...); the JS object's is a plain string.
    """
    scheme, raw_path, query = _split_url(request.url)
    return {
        "asgi": ASGI, "type": "http", "http_version": "1.1", "method": str(request.method), "scheme": scheme,
        "path": unquote(raw_path), "raw_path": raw_path.encode(), "query_string": query.encode(),
        "root_path": "", "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in request.headers.items()],
        "client": None, "server": None, "env": env,
    }  # fmt: skip


async def fetch(
    app: Any, req: Request | JsRequest, env: Any, ctx: Any = None, *, options: Any = None
) -> Response:
    """Run ``app`` for ``req``; answers the app's response. The SDK's ``options`` are not emulated."""
    if options is not None:
        raise NotImplementedError("options: the ASGI adapter's options are not emulated by the local runtime")
    body = await req.bytes() if not req.body_used else b""
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    status: int | None = None
    headers: list[tuple[str, str]] = []
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
            headers.extend((k.decode("latin-1"), v.decode("latin-1")) for k, v in message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(bytes(message.get("body", b"")))

    await app(request_to_scope(req, env), receive, send)
    if status is None:
        raise RuntimeError("The application did not generate a response")
    content = None if status in NULL_BODY_STATUSES else b"".join(chunks)
    return Response(content, status=status, headers=headers)
