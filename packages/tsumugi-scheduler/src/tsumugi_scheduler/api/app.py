"""The REST API as a Starlette (ASGI) app: the request pipeline, then the route table.

Source: docs/reference/original.md §4.1 (the pipeline).

Pipeline for every request:

1. any path when no auth is configured: plain-text ``404 not found`` (fail-closed: an API that is not
   enabled does not reveal that it exists); ``GET`` outside ``/api/``: the dashboard page, with its
   Content-Security-Policy; another method there: ``404``;
2. a body declared larger than `MAX_BODY_BYTES`: ``413``, before anything is read or authenticated;
3. ``/api/session``: the dashboard's sign-in, probe and sign-out (`session_routes`, ADR-0064);
4. ``GET /api/openapi.json``: the document, without authentication;
5. missing or wrong credentials: ``401 {"error": "unauthorized"}``; a credential the browser sends by itself
   (the session cookie, Access's token) from another origin: ``403``; a state change (not GET/HEAD/OPTIONS)
   with a body, or with such a credential, that is not declared as ``application/json``: ``415`` (ADR-0064);
   the identity is kept in the scope (``scope["state"]["identity"]``) for the handlers;
6. read-model migrations pending: ``503`` naming the files (`SchemaGate`);
7. the route: a role short of the route's (`Operation.role`) is ``403 {"error": "forbidden", "needs":
   <role>, "role": <yours>}`` (ADR-0151); unknown paths (a trailing slash included) ``404 {"error": "not found"}``, a known path
   with another method ``405 {"error": "method not allowed"}``. A fault is ``500 {"error": "internal
   error"}`` with the detail in the log, never an exception escaping to the runtime.

The Worker's env travels in the ASGI scope (``scope["env"]``), as ``workers.asgi.fetch`` puts it.
"""

from __future__ import annotations

import logging
from typing import Any, Final, Literal, cast

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from tsumugi_core.options import EnqueueValidationError
from tsumugi_scheduler.api.action_log import record_action
from tsumugi_scheduler.api.action_targets import changed_targets
from tsumugi_scheduler.api.answers import ApiError, json_response, text_not_found, validation_error
from tsumugi_scheduler.api.auth import DEFAULT_AUTH
from tsumugi_scheduler.api.context import ApiContext
from tsumugi_scheduler.api.openapi import build_document
from tsumugi_scheduler.api.operations import OPENAPI_PATH, OPERATIONS, Operation
from tsumugi_scheduler.api.payload_types import with_payload_types
from tsumugi_scheduler.api.request_origin import SAFE_METHODS, cross_origin_reason, declares_json
from tsumugi_scheduler.api.schema_gate import SchemaGate
from tsumugi_scheduler.api.session import SESSION_PATH
from tsumugi_scheduler.api.session_routes import answer_session, cross_origin, not_json
from tsumugi_scheduler.dashboard import dashboard_headers, render_dashboard
from tsumugi_scheduler.definition import TsumugiDefinition
from tsumugi_scheduler.identity import AuthScheme, Identity
from tsumugi_scheduler.request_limits import MAX_BODY_BYTES
from tsumugi_scheduler.timing import time_source

__all__ = ["INTERNAL_ERROR", "MAX_BODY_BYTES", "ApiGate", "create_app", "identity_of"]

INTERNAL_ERROR: Final = "internal error"
_log = logging.getLogger("tsumugi_scheduler.api")


class ApiGate:
    """Steps 1-4 of the pipeline, and the JSON 500 of step 5 (pure ASGI middleware)."""

    def __init__(self, app: ASGIApp, auth: AuthScheme | None, gate: SchemaGate) -> None:
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
                cookie = self.auth.token_cookie
                page = HTMLResponse(render_dashboard(cookie), headers=dashboard_headers(cookie))
            else:
                page = text_not_found()
            await page(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        too_large = json_response(413, {"error": f"body must be at most {MAX_BODY_BYTES} bytes"})
        if _declared_length(headers) > MAX_BODY_BYTES:
            await too_large(scope, receive, send)
            return
        if "content-length" not in headers:
            # A chunked body declares no size: it is read here, up to the cap, before any route reads it whole.
            body = await _capped_body(receive)
            if body is None:
                await too_large(scope, receive, send)
                return
            receive = _replayed(body, receive)
        if path == SESSION_PATH:
            await answer_session(scope, receive, send, self.auth, headers)
            return
        if path != OPENAPI_PATH:
            refused = await self._refusal(scope, headers)
            if refused is not None:
                await refused(scope, receive, send)
                return
        await self._run(scope, receive, send)

    async def _refusal(self, scope: Scope, headers: dict[str, str]) -> Response | None:
        assert self.auth is not None
        env = scope.get("env")
        identity = await self.auth.admit(env, headers, scope, now_ms=time_source().now_ms())
        if identity is None:
            return json_response(401, {"error": "unauthorized"})
        scope.setdefault("state", {})["identity"] = identity
        if identity.ambient:
            reason = cross_origin_reason(headers, str(scope.get("scheme", "http")))
            if reason is not None:
                return cross_origin(reason)
        changes_state = scope["method"] not in SAFE_METHODS
        has_body = _declared_length(headers) > 0 or "transfer-encoding" in headers
        if changes_state and (has_body or identity.ambient) and not declares_json(headers):
            return not_json()
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
        except Exception:
            if started:
                raise
            # The detail goes to the Worker's log only: an error text can carry paths, SQL or secrets.
            _log.exception("%s %s failed", scope.get("method", "?"), scope.get("path", "?"))
            await json_response(500, {"error": INTERNAL_ERROR})(scope, receive, send)


async def _capped_body(receive: Receive) -> bytes | None:
    """The request's body, or None once it passes `MAX_BODY_BYTES` (the rest is not read)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replayed(body: bytes, receive: Receive) -> Receive:
    """``receive`` that hands ``body`` over first, then waits on the connection as before."""
    pending = [body]

    async def replay() -> Any:
        if pending:
            return {"type": "http.request", "body": pending.pop(), "more_body": False}
        return await receive()

    return replay


def _declared_length(headers: dict[str, str]) -> int:
    """The ``Content-Length`` a request declares; 0 when absent, and over any cap when unreadable."""
    text = headers.get("content-length")
    if text is None:
        return 0
    text = text.strip()
    # ASCII digits only: str.isdigit() holds for '²' too, which int() refuses.
    return int(text) if text.isascii() and text.isdigit() else MAX_BODY_BYTES + 1


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _invalid(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, EnqueueValidationError)
    return validation_error(exc).response()


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = "not found" if exc.status_code == 404 else exc.detail.lower()
    answer = json_response(exc.status_code, {"error": message})
    answer.headers.update(exc.headers or {})  # a 405 keeps its Allow header
    return answer


def identity_of(request: Request) -> Identity:
    """The signed-in identity of a request that passed the gate."""
    found: Any = request.scope.get("state", {}).get("identity")
    assert isinstance(found, Identity), "the gate admits no request without an identity"
    return found


def _forbidden(op: Operation, identity: Identity) -> Response:
    role = None if identity.role is None else identity.role.value
    reason = f"{op.operation_id} needs the {op.role.value} role; {identity.name} has " + (
        "no role" if role is None else f"the {role} role"
    )
    return json_response(403, {"error": "forbidden", "reason": reason, "needs": op.role.value, "role": role})


def _by_method(endpoints: dict[str, Operation], literal: dict[str, list[str]]) -> Any:
    async def endpoint(request: Request) -> Response:
        # A path of its own (/api/jobs/bulk-retry) is never a value of a parameter (/api/jobs/{id}): another
        # method there is 405 with that path's Allow, not a lookup of job "bulk-retry".
        own = literal.get(request.url.path)
        if own is not None:
            raise HTTPException(405, headers={"Allow": ", ".join(own)})
        # HEAD is served by the GET handler (Starlette adds it to a GET route); the body is then dropped.
        op = endpoints["GET" if request.method == "HEAD" else request.method]
        identity = identity_of(request)
        if not identity.may(op.role):
            return _forbidden(op, identity)
        answer = await op.endpoint(request)
        if op.method != "GET" and op.records and 200 <= answer.status_code < 300:
            await record_action(
                request.scope["env"].TSUMUGI_DB,
                identity,
                op.operation_id,
                changed_targets(op, request, answer),
                at=time_source().now_ms(),
            )
        return answer

    return endpoint


def create_app(
    definition: TsumugiDefinition,
    *,
    auth: AuthScheme | Literal["default", "definition"] | None = "definition",
    gate: SchemaGate | None = None,
) -> Starlette:
    """The REST API of a scheduler defined by ``definition``.

    Args:
        definition: The scheduler's configuration (performers, shard counts, settings).
        auth: How requests authenticate: the definition's ``auth`` unless given; ``"default"`` for the role
            tokens; None turns the whole API off (every path answers 404).
        gate: The read-model schema check (a fresh one by default).

    Returns:
        An ASGI app; serve it with ``workers.asgi.fetch(app, request, env)``.
    """
    document = build_document(
        OPERATIONS,
        bindings={b: definition.shards_of(b) for b in definition.performers},
        flows=tuple(definition.flows),
        flow_inputs={n: s.input_schema for n, s in definition.flows.items()},
    )

    async def openapi(request: Request) -> Response:
        # Each performer's payload type, as the enqueue check reads it (cached per isolate, ADR-0124).
        schemas, env = request.app.state.api.schemas, request.scope.get("env")
        published = {b: await schemas.published(b, env) for b in sorted(definition.performers)}
        typed = {binding: schema for binding, schema in published.items() if schema is not None}
        return json_response(200, with_payload_types(document, typed) if typed else document)

    chosen = definition.auth if auth == "definition" else auth
    scheme: AuthScheme | None = (
        DEFAULT_AUTH if chosen in ("default", "definition") else cast("AuthScheme | None", chosen)
    )
    by_path: dict[str, dict[str, Operation]] = {}
    for op in OPERATIONS:
        by_path.setdefault(op.path, {})[op.method] = op
    # One route per path, so a 405 lists every method the path has in its Allow header.
    routes = [Route(OPENAPI_PATH, openapi, methods=["GET"])]
    literal: dict[str, list[str]] = {
        path: sorted({*endpoints, *(["HEAD"] if "GET" in endpoints else [])})
        for path, endpoints in by_path.items()
        if "{" not in path
    }
    routes += [
        Route(path, _by_method(endpoints, literal if "{" in path else {}), methods=list(endpoints))
        for path, endpoints in by_path.items()
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(ApiGate, auth=scheme, gate=gate or SchemaGate())],
        exception_handlers={
            ApiError: _api_error,
            EnqueueValidationError: _invalid,
            HTTPException: _http_error,
        },
    )
    # /api/jobs/ is not /api/jobs: a JSON 404, never a 307 redirect that a fetch client may follow blindly.
    app.router.redirect_slashes = False
    app.state.api = ApiContext(definition)
    return app
