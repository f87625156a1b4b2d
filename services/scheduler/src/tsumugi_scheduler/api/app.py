"""The REST API as a Starlette (ASGI) app: the request pipeline of reference §4.1, then the route table.

Pipeline for every request:

1. a path outside ``/api/``, or any path when no auth is configured: plain-text ``404 not found``
   (fail-closed: an API that is not enabled does not reveal that it exists);
2. ``GET /api/openapi.json``: the document, without authentication;
3. missing or wrong credentials: ``401 {"error": "unauthorized"}``;
4. read-model migrations pending: ``503`` naming the files (`SchemaGate`);
5. the route; unknown paths ``404 {"error": "not found"}``. A fault is a JSON 500, never an exception
   escaping to the runtime.

The Worker's env travels in the ASGI scope (``scope["env"]``), as ``workers.asgi.fetch`` puts it.
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from tsumugi_core.options import EnqueueValidationError
from tsumugi_scheduler.api.answers import ApiError, json_response, text_not_found, validation_error
from tsumugi_scheduler.api.auth import DEFAULT_AUTH, BearerAuth
from tsumugi_scheduler.api.context import ApiContext
from tsumugi_scheduler.api.openapi import build_document
from tsumugi_scheduler.api.operations import OPENAPI_PATH, OPERATIONS
from tsumugi_scheduler.api.schema_gate import SchemaGate
from tsumugi_scheduler.dashboard import render_dashboard
from tsumugi_scheduler.definition import TsumugiDefinition

__all__ = ["ApiGate", "create_app"]


class ApiGate:
    """Steps 1-4 of the pipeline, and the JSON 500 of step 5 (pure ASGI middleware)."""

    def __init__(self, app: ASGIApp, auth: BearerAuth | None, gate: SchemaGate) -> None:
        """Guard ``app``; ``auth=None`` disables the API (every path answers 404)."""
        self.app = app
        self.auth = auth
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer, or pass the request on to the router."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if self.auth is None:
            await text_not_found()(scope, receive, send)
            return
        if not path.startswith("/api/"):
            # The dashboard page holds no data, so it is served without auth, but only when auth is set
            # (fail-closed: without auth nothing at all reveals the deployment). ADR-0023.
            if scope["method"] in ("GET", "HEAD"):
                page = HTMLResponse(render_dashboard(self.auth.cookie))
            else:
                page = text_not_found()
            await page(scope, receive, send)
            return
        if path != OPENAPI_PATH:
            refused = await self._refusal(scope)
            if refused is not None:
                await refused(scope, receive, send)
                return
        await self._run(scope, receive, send)

    async def _refusal(self, scope: Scope) -> Response | None:
        assert self.auth is not None
        env = scope.get("env")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if not self.auth.allows(env, headers):
            return json_response(401, {"error": "unauthorized"})
        try:
            await self.gate.check(env)
        except ApiError as exc:
            return exc.response()
        return None

    async def _run(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracking_send(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:
            if started:
                raise
            # A fault answers JSON with the error text (the original's 5xx shape), never a stack trace.
            await json_response(500, {"error": f"{type(exc).__name__}: {exc}"})(scope, receive, send)


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _invalid(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, EnqueueValidationError)
    return validation_error(exc).response()


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = "not found" if exc.status_code == 404 else exc.detail.lower()
    return json_response(exc.status_code, {"error": message})


def create_app(definition: TsumugiDefinition, *, auth: BearerAuth | None = DEFAULT_AUTH,
               gate: SchemaGate | None = None) -> Starlette:  # fmt: skip
    """The REST API of a scheduler defined by ``definition``.

    Args:
        definition: The scheduler's configuration (performers, shard counts, settings).
        auth: How requests authenticate; None turns the whole API off (every path answers 404).
        gate: The read-model schema check (a fresh one by default).

    Returns:
        An ASGI app; serve it with ``workers.asgi.fetch(app, request, env)``.
    """
    document = build_document(OPERATIONS)

    async def openapi(request: Request) -> Response:
        return json_response(200, document)

    routes = [Route(OPENAPI_PATH, openapi, methods=["GET"])]
    routes += [Route(op.path, op.endpoint, methods=[op.method]) for op in OPERATIONS]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(ApiGate, auth=auth, gate=gate or SchemaGate())],
        exception_handlers={ApiError: _api_error, EnqueueValidationError: _invalid, HTTPException: _http_error},
    )
    app.state.api = ApiContext(definition)
    return app
