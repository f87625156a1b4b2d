"""The only place that knows how the Workers runtime hands values to Python (JsProxy, wrapped bindings).

Everything else in tsumugi_scheduler takes plain Python values and duck-typed bindings, so it imports and
runs on plain CPython; this module adapts what the runtime gives (``ctx.storage``, JS objects) and serves
the REST API's ASGI app with the SDK's ``workers.asgi.fetch`` (imported when first called, so this module
imports on plain CPython too). Only the Worker classes (``entrypoints.py``, ``entry.py``) call it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from tsumugi_scheduler.request_limits import MAX_BODY_BYTES

__all__ = ["DurableObjectSql", "PostText", "plain", "post_text", "serve_asgi"]

T = TypeVar("T")

PostText = Callable[[str, str, Mapping[str, str], float], Awaitable[tuple[int, str]]]
"""POST ``body`` (text) with ``headers`` to ``url``, answering (status, body text) within ``timeout_s``."""


async def post_text(url: str, body: str, headers: Mapping[str, str], timeout_s: float) -> tuple[int, str]:
    """POST through the Worker's ``fetch`` (``workers.fetch``), the platform's HTTP client.

    Worker code uses no httpx: PyPI's build needs httpcore, anyio and sockets, which Pyodide lacks, and the
    upload carries none (ADR-0110). Raises what ``fetch`` raises (``OSError`` on Cloudflare) and
    ``TimeoutError`` after ``timeout_s``.
    """
    from workers import fetch  # the SDK: present in a Worker, and under the local runtime

    async def send() -> tuple[int, str]:
        response = await fetch(url, method="POST", headers=dict(headers), body=body)
        return int(response.status), str(await response.text())

    return await asyncio.wait_for(send(), timeout_s)


def plain(value: Any) -> Any:
    """A JS value as Python (``to_py``); Python values (the local runtime's) pass through."""
    to_py = getattr(value, "to_py", None)
    return to_py() if callable(to_py) else value


async def serve_asgi(app: Any, request: Any, env: Any) -> Any:
    """Answer ``request`` with the ASGI ``app`` (``workers.asgi.fetch``).

    The adapter gets the JS Request (``js_object``), which it accepts as well: the SDK's wrapper reads its
    method as ``HTTPMethod[name]``, a ``KeyError`` (a 500) for a method workerd passes on but Python's enum
    lacks, such as QUERY or PURGE. With the string the app answers 405 with ``Allow`` (ADR-0059).
    """
    from workers import Response, asgi  # the SDK: present in a Worker, and under the local runtime

    declared = request.headers.get("content-length")
    if declared is not None and (not str(declared).isdigit() or int(declared) > MAX_BODY_BYTES):
        # Before the adapter reads the body into memory (ADR-0065): the app's own check would come too late.
        error = f'{{"error": "body must be at most {MAX_BODY_BYTES} bytes"}}'
        return Response(error, status=413, headers={"content-type": "application/json"})
    return await asgi.fetch(app, getattr(request, "js_object", request), env)


class DurableObjectSql:
    """The engine's SQL port over ``ctx.storage``: ``exec`` and ``transaction_sync``.

    ``transactionSync`` runs a Python callable from JS; its return value would cross back through JS and be
    converted, so the result is kept on the Python side instead.
    """

    def __init__(self, storage: Any) -> None:
        """Wrap ``ctx.storage`` of a SQLite-backed Durable Object."""
        self._storage = storage
        self._sql = storage.sql

    def exec(self, query: str, *params: Any) -> Any:
        """Run one statement (``ctx.storage.sql.exec``)."""
        return self._sql.exec(query, *params)

    def transaction_sync(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` atomically (``ctx.storage.transactionSync``)."""
        box: list[T] = []

        def run() -> None:
            box.append(fn())

        run_in_transaction = getattr(self._storage, "transactionSync", None) or self._storage.transaction_sync
        run_in_transaction(run)
        return box[0]
