"""Bearer-token authentication of the REST API, fail-closed, and the dashboard's session.

Source: docs/reference/original.md §2.12.

The token is a Worker secret (``TSUMUGI_TOKEN`` by default). A caller presents it as
``Authorization: Bearer <token>`` (scheme case-insensitive). The dashboard instead signs in once
(``POST /api/session``) and then presents the HttpOnly session cookie the server set, whose value is signed
with the token but is not the token (`tsumugi_scheduler.api.session`, ADR-0064), together with the page key
of that session in a header, and the session must still be open in D1 (ADR-0121); a raw token in the cookie is
refused. A missing secret refuses every request.

Example:
    >>> auth = BearerAuth()
    >>> class Env:
    ...     TSUMUGI_TOKEN = "s3cret"
    >>> auth.identify(Env(), {"authorization": "bearer s3cret"}, now_ms=0)
    'bearer'
    >>> auth.identify(Env(), {"cookie": "tsumugi_token=s3cret"}, now_ms=0) is None
    True
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator, Mapping
from typing import Any, Literal

import msgspec

from tsumugi_scheduler.api.session import PAGE_KEY_HEADER, SESSION_TTL_MS, session_id_of, signed_session_id
from tsumugi_scheduler.api.session_store import session_is_open

__all__ = ["DEFAULT_AUTH", "BearerAuth", "Credential", "bearer_of", "cookie_values", "same_secret"]

Credential = Literal["bearer", "session"]
"""How a request authenticated: the token in a header, or the dashboard's session cookie."""


def same_secret(given: str, expected: str) -> bool:
    """Compare in constant time, length included (both sides are hashed to 32 bytes first)."""
    left = hashlib.sha256(given.encode()).digest()
    right = hashlib.sha256(expected.encode()).digest()
    return hmac.compare_digest(left, right)


def cookie_values(header: str, name: str) -> Iterator[str]:
    """Every value of the cookie ``name`` in a ``Cookie`` header (a browser may send several paths' copies)."""
    for part in header.split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name:
            yield value


def bearer_of(headers: Mapping[str, str]) -> str | None:
    """The token of an ``Authorization: Bearer`` header; None when there is none."""
    scheme, _, value = headers.get("authorization", "").strip().partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


class BearerAuth(msgspec.Struct, frozen=True, kw_only=True):
    """A shared secret read from the Worker's env.

    Attributes:
        token_var: The env var (secret) holding the token.
        cookie: The name of the dashboard's session cookie, which the server sets after a sign-in with the
            token; None turns sign-in with the token off (only the header is accepted, and the dashboard
            points to an identity provider instead).
        session_ttl_ms: How long a dashboard sign-in lasts.
    """

    token_var: str = "TSUMUGI_TOKEN"
    cookie: str | None = "tsumugi_token"
    session_ttl_ms: int = SESSION_TTL_MS

    def token(self, env: Any) -> str | None:
        """The configured token; None when the secret is missing or empty (then nothing is accepted)."""
        expected = getattr(env, self.token_var, None)
        return expected if isinstance(expected, str) and expected else None

    def identify(self, env: Any, headers: Mapping[str, str], *, now_ms: int) -> Credential | None:
        """How the request authenticates, from its headers alone; None when it presents no valid credential.

        A bearer header, when present, decides alone: a wrong one is not rescued by a cookie. A session also
        needs its page key; whether it is still open is `admit`'s question.
        """
        expected = self.token(env)
        if expected is None:
            return None
        given = bearer_of(headers)
        if given is not None:
            return "bearer" if same_secret(given, expected) else None
        return "session" if self.session_id(env, headers, now_ms=now_ms) is not None else None

    def session_id(self, env: Any, headers: Mapping[str, str], *, now_ms: int) -> str | None:
        """The id of the session whose cookie and page key the request carries; None when there is none."""
        expected = self.token(env)
        if expected is None or self.cookie is None:
            return None
        key = headers.get(PAGE_KEY_HEADER)
        for value in cookie_values(headers.get("cookie", ""), self.cookie):
            found = session_id_of(value, key, expected, now_ms=now_ms, ttl_ms=self.session_ttl_ms)
            if found is not None:
                return found
        return None

    def signed_session_ids(self, env: Any, headers: Mapping[str, str], *, now_ms: int) -> list[str]:
        """Every session id the request's cookies carry with a valid signature (sign-out closes them all)."""
        expected = self.token(env)
        if expected is None or self.cookie is None:
            return []
        values = cookie_values(headers.get("cookie", ""), self.cookie)
        found = (signed_session_id(v, expected, now_ms=now_ms, ttl_ms=self.session_ttl_ms) for v in values)
        return [session_id for session_id in found if session_id is not None]

    async def admit(self, env: Any, headers: Mapping[str, str], *, now_ms: int) -> Credential | None:
        """`identify`, and for a session, that it is still open in the read model (one D1 read)."""
        expected = self.token(env)
        if expected is None:
            return None
        given = bearer_of(headers)
        if given is not None:
            return "bearer" if same_secret(given, expected) else None
        session_id = self.session_id(env, headers, now_ms=now_ms)
        if session_id is None or not await session_is_open(env.TSUMUGI_DB, session_id, now_ms=now_ms):
            return None
        return "session"


DEFAULT_AUTH = BearerAuth()
"""``TSUMUGI_TOKEN`` as a bearer header, or a dashboard session in the ``tsumugi_token`` cookie."""
