"""Bearer-token authentication of the REST API, one token per role, fail-closed (ADR-0151).

Source: docs/reference/original.md §2.12.

Each role may have a token, a Worker secret: ``TSUMUGI_TOKEN`` is the admin's (the one token of earlier
versions), ``TSUMUGI_OPERATOR_TOKEN`` the operator's and ``TSUMUGI_VIEWER_TOKEN`` the viewer's; a role whose
secret is unset has no token. A caller presents one as ``Authorization: Bearer <token>`` (scheme
case-insensitive) and is recorded as that secret's name. The dashboard instead signs in once
(``POST /api/session``) and then presents the HttpOnly session cookie the server set, signed with the token it
signed in with but not the token (`tsumugi_scheduler.api.session`, ADR-0064), together with the page key of
that session in a header, and the session must still be open in D1 (ADR-0121); a raw token in the cookie is
refused. With no secret set every request is refused.

Example:
    >>> auth = BearerAuth()
    >>> class Env:
    ...     TSUMUGI_TOKEN = "s3cret"
    ...     TSUMUGI_VIEWER_TOKEN = "look"
    >>> auth.token_role(Env(), "s3cret"), auth.token_role(Env(), "look"), auth.token_role(Env(), "nope")
    (('TSUMUGI_TOKEN', <Role.ADMIN: 'admin'>), ('TSUMUGI_VIEWER_TOKEN', <Role.VIEWER: 'viewer'>), None)
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tsumugi_scheduler.api.session import PAGE_KEY_HEADER, SESSION_TTL_MS, session_id_of, signed_session_id
from tsumugi_scheduler.api.session_store import session_is_open
from tsumugi_scheduler.cookies import cookie_values
from tsumugi_scheduler.identity import AuthScheme, Identity, Role

__all__ = ["DEFAULT_AUTH", "BearerAuth", "bearer_of", "cookie_values", "same_secret"]


def same_secret(given: str, expected: str) -> bool:
    """Compare in constant time, length included (both sides are hashed to 32 bytes first)."""
    left = hashlib.sha256(given.encode()).digest()
    right = hashlib.sha256(expected.encode()).digest()
    return hmac.compare_digest(left, right)


def bearer_of(headers: Mapping[str, str]) -> str | None:
    """The token of an ``Authorization: Bearer`` header; None when there is none."""
    scheme, _, value = headers.get("authorization", "").strip().partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


@dataclass(frozen=True, kw_only=True)
class BearerAuth(AuthScheme):
    """One shared secret per role, read from the Worker's env.

    Attributes:
        token_var: The secret holding the admin's token.
        operator_token_var: The secret holding the operator's token (None: operators have no token).
        viewer_token_var: The secret holding the viewer's token (None: viewers have no token).
        cookie: The name of the dashboard's session cookie, which the server sets after a sign-in with a
            token; None turns sign-in with a token off (only the header is accepted, and the dashboard
            points to an identity provider instead).
        session_ttl_ms: How long a dashboard sign-in lasts.
    """

    token_var: str = "TSUMUGI_TOKEN"
    operator_token_var: str | None = "TSUMUGI_OPERATOR_TOKEN"
    viewer_token_var: str | None = "TSUMUGI_VIEWER_TOKEN"
    cookie: str | None = "tsumugi_token"
    session_ttl_ms: int = SESSION_TTL_MS

    @property
    def token_cookie(self) -> str | None:
        """The session cookie's name; None when the dashboard cannot sign in with a token."""
        return self.cookie

    def tokens(self, env: Any) -> list[tuple[str, Role, str]]:
        """``(secret name, role, token)`` for each role whose secret is set, lowest role first.

        Lowest first: should two secrets hold the same value, the holder gets the lesser role.
        """
        found: list[tuple[str, Role, str]] = []
        for var, role in (
            (self.viewer_token_var, Role.VIEWER),
            (self.operator_token_var, Role.OPERATOR),
            (self.token_var, Role.ADMIN),
        ):
            value = None if var is None else getattr(env, var, None)
            if var is not None and isinstance(value, str) and value:
                found.append((var, role, value))
        return found

    def token(self, env: Any) -> str | None:
        """The admin's token; None when its secret is missing or empty."""
        expected = getattr(env, self.token_var, None)
        return expected if isinstance(expected, str) and expected else None

    def token_role(self, env: Any, given: str) -> tuple[str, Role] | None:
        """The secret name and role of the token ``given``; None when it is no configured token.

        Every configured token is compared, in constant time, whichever matches.
        """
        match: tuple[str, Role] | None = None
        for var, role, expected in self.tokens(env):
            if same_secret(given, expected) and match is None:
                match = (var, role)
        return match

    def session_of(
        self, env: Any, headers: Mapping[str, str], *, now_ms: int
    ) -> tuple[str, str, Role] | None:
        """``(session id, secret name, role)`` of the session whose cookie and page key the request carries."""
        if self.cookie is None:
            return None
        key = headers.get(PAGE_KEY_HEADER)
        for value in cookie_values(headers.get("cookie", ""), self.cookie):
            for var, role, expected in self.tokens(env):
                found = session_id_of(value, key, expected, now_ms=now_ms, ttl_ms=self.session_ttl_ms)
                if found is not None:
                    return found, var, role
        return None

    def signed_session_ids(self, env: Any, headers: Mapping[str, str], *, now_ms: int) -> list[str]:
        """Every session id the request's cookies carry with a valid signature (sign-out closes them all)."""
        if self.cookie is None:
            return []
        ids: list[str] = []
        for value in cookie_values(headers.get("cookie", ""), self.cookie):
            for _, _, expected in self.tokens(env):
                found = signed_session_id(value, expected, now_ms=now_ms, ttl_ms=self.session_ttl_ms)
                if found is not None:
                    ids.append(found)
        return ids

    async def admit(
        self, env: Any, headers: Mapping[str, str], scope: Mapping[str, Any], *, now_ms: int
    ) -> Identity | None:
        """A bearer header decides alone (a wrong one is not rescued by a cookie); else an open session."""
        given = bearer_of(headers)
        if given is not None:
            found = self.token_role(env, given)
            return None if found is None else Identity(name=found[0], role=found[1], via="token")
        session = self.session_of(env, headers, now_ms=now_ms)
        if session is None or not await session_is_open(env.TSUMUGI_DB, session[0], now_ms=now_ms):
            return None
        return Identity(name=session[1], role=session[2], via="session")


DEFAULT_AUTH = BearerAuth()
"""The three role tokens as a bearer header, or a dashboard session in the ``tsumugi_token`` cookie."""
