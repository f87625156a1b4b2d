"""``/api/session``: the dashboard's sign-in, its probe and its sign-out (ADR-0064).

* ``GET`` answers ``200 {"signedIn": bool, "identity": name | null, "role": role | null, "tokenSignIn": bool}``
  whatever the credentials, so the page can ask before it calls anything that would answer 401 (no console
  errors before sign-in), and knows which actions its role allows (ADR-0151);
* ``POST {"token": "..."}`` checks the token, opens a session in D1, sets the HttpOnly session cookie
  (`session_cookie`) and answers the session's page key (``{"signedIn": true, "pageKey": ...}``), which the
  page sends with every call (ADR-0121); it also deletes a cookie of the same name at path ``/`` (where
  earlier dashboards kept the raw token); ``401`` says whether the token was wrong or the deployment has none;
  a body that is not a JSON object with a non-empty ``token`` is a 400 naming the rule, however it is broken;
* ``DELETE`` closes the sessions the request's cookies name, on the server (a copied cookie stops working),
  and deletes the cookie (sign-out).

Sign-in and sign-out are state changes: they need ``Content-Type: application/json`` (POST) and a same-origin
request, like every cookie-authenticated call.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any, Final, cast

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from tsumugi_scheduler.api.answers import ApiError, json_response
from tsumugi_scheduler.api.auth import BearerAuth
from tsumugi_scheduler.api.json_body import read_json
from tsumugi_scheduler.api.request_origin import cross_origin_reason, declares_json
from tsumugi_scheduler.api.session import clearing_cookie, issue_session, page_key, session_cookie
from tsumugi_scheduler.api.session_store import close_session, open_session
from tsumugi_scheduler.identity import AuthScheme
from tsumugi_scheduler.timing import time_source

__all__ = ["NOT_JSON", "NO_TOKEN_CONFIGURED", "WRONG_TOKEN", "answer_session", "cross_origin", "not_json"]

WRONG_TOKEN: Final = "wrong token"
NO_TOKEN_CONFIGURED: Final = "this deployment has no API token (set the TSUMUGI_TOKEN secret)"
NOT_JSON: Final = "Content-Type must be application/json"
_ALLOW: Final = "DELETE, GET, HEAD, POST"


def not_json() -> Response:
    """The 415 of a state change whose body is not declared as JSON."""
    return json_response(415, {"error": NOT_JSON})


def cross_origin(reason: str) -> Response:
    """The 403 of a cookie-authenticated request from another origin."""
    return json_response(403, {"error": f"cross-origin request refused ({reason})"})


def _token_of(body: bytes) -> str | None:
    try:
        value: Any = read_json(body)  # strict and bounded: a deeply nested body is a 400, never a 500
    except ApiError:
        return None
    if not isinstance(value, dict):
        return None
    token: Any = cast("dict[str, Any]", value).get("token")
    return token.strip() if isinstance(token, str) and token.strip() else None


async def _sign_in(request: Request, auth: BearerAuth | None, headers: Mapping[str, str]) -> Response:
    if not declares_json(headers):
        return not_json()
    if auth is None or auth.cookie is None:
        return json_response(404, {"error": "sign-in with a token is not enabled"})
    given = _token_of(await request.body())
    if given is None:
        return json_response(400, {"error": "token must be a non-empty string"})
    env = request.scope.get("env")
    if not auth.tokens(env):
        return json_response(401, {"error": NO_TOKEN_CONFIGURED})
    found = auth.token_role(env, given)
    if found is None:
        return json_response(401, {"error": WRONG_TOKEN})
    expected = next(token for var, _, token in auth.tokens(env) if var == found[0])
    now_ms = time_source().now_ms()
    session_id = secrets.token_urlsafe(16)
    await open_session(
        request.scope["env"].TSUMUGI_DB, session_id, now_ms=now_ms, expires_at=now_ms + auth.session_ttl_ms
    )
    answer = json_response(
        200,
        {
            "signedIn": True,
            "pageKey": page_key(expected, session_id),
            "identity": found[0],
            "role": found[1].value,
        },
    )
    value = issue_session(expected, now_ms, session_id)
    secure = request.url.scheme == "https"
    answer.headers.append(
        "set-cookie", session_cookie(auth.cookie, value, secure=secure, ttl_ms=auth.session_ttl_ms)
    )
    answer.headers.append("set-cookie", clearing_cookie(auth.cookie, "/"))
    return answer


async def answer_session(
    scope: Scope, receive: Receive, send: Send, auth: AuthScheme, headers: Mapping[str, str]
) -> None:
    """Answer a request to `SESSION_PATH`."""
    request = Request(scope, receive)
    method = request.method
    bearer = auth.find(BearerAuth)
    if method in ("GET", "HEAD"):
        now_ms = time_source().now_ms()
        identity = await auth.admit(scope.get("env"), headers, scope, now_ms=now_ms)
        role = None if identity is None or identity.role is None else identity.role.value
        answer = json_response(
            200,
            {
                "signedIn": identity is not None,
                "role": role,
                "identity": None if identity is None else identity.name,
                "tokenSignIn": auth.token_cookie is not None,
            },
        )
    elif (reason := cross_origin_reason(headers, request.url.scheme)) is not None:
        answer = cross_origin(reason)
    elif method == "POST":
        answer = await _sign_in(request, bearer, headers)
    elif method == "DELETE":
        env: Any = scope.get("env")
        ids = [] if bearer is None else bearer.signed_session_ids(env, headers, now_ms=time_source().now_ms())
        for session_id in ids:
            await close_session(env.TSUMUGI_DB, session_id)
        answer = json_response(200, {"signedIn": False})
        if bearer is not None and bearer.cookie is not None:
            answer.headers.append("set-cookie", clearing_cookie(bearer.cookie))
            answer.headers.append("set-cookie", clearing_cookie(bearer.cookie, "/"))
    else:
        answer = json_response(405, {"error": "method not allowed"})
        answer.headers["allow"] = _ALLOW
    await answer(scope, receive, send)
