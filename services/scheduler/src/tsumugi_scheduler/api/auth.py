"""Bearer-token authentication of the REST API, fail-closed (reference §2.12).

The token is a Worker secret (``TSUMUGI_TOKEN`` by default). Credentials come from
``Authorization: Bearer <token>`` (scheme case-insensitive) or, when that header is absent or has another
scheme, from the ``tsumugi_token`` cookie (URL-decoded: the dashboard encodes it, gap 31). A missing secret
refuses every request.

Example:
    >>> auth = BearerAuth()
    >>> class Env:
    ...     TSUMUGI_TOKEN = "s3cret"
    >>> auth.allows(Env(), {"authorization": "bearer s3cret"}), auth.allows(Env(), {"cookie": "tsumugi_token=nope"})
    (True, False)
"""

from __future__ import annotations

import hashlib
import hmac
import urllib.parse
from collections.abc import Mapping
from typing import Any

import msgspec

__all__ = ["DEFAULT_AUTH", "BearerAuth", "credentials_of", "same_secret"]


def same_secret(given: str, expected: str) -> bool:
    """Compare in constant time, length included (both sides are hashed to 32 bytes first)."""
    left = hashlib.sha256(given.encode()).digest()
    right = hashlib.sha256(expected.encode()).digest()
    return hmac.compare_digest(left, right)


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name:
            return urllib.parse.unquote(value)
    return None


def credentials_of(headers: Mapping[str, str], cookie: str | None) -> str | None:
    """The presented token: a bearer header first, else the named cookie; None when there is none."""
    scheme, _, value = headers.get("authorization", "").strip().partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    if cookie is None:
        return None
    return _cookie(headers.get("cookie", ""), cookie)


class BearerAuth(msgspec.Struct, frozen=True, kw_only=True):
    """A shared secret read from the Worker's env.

    Attributes:
        token_var: The env var (secret) holding the token.
        cookie: The cookie that may carry the token (the dashboard's); None accepts only the header.
    """

    token_var: str = "TSUMUGI_TOKEN"
    cookie: str | None = "tsumugi_token"

    def allows(self, env: Any, headers: Mapping[str, str]) -> bool:
        """True when the request presents the configured token; always False without one (fail-closed)."""
        expected = getattr(env, self.token_var, None)
        if not isinstance(expected, str) or not expected:
            return False
        given = credentials_of(headers, self.cookie)
        return given is not None and same_secret(given, expected)


DEFAULT_AUTH = BearerAuth()
"""``TSUMUGI_TOKEN`` as a bearer header or the ``tsumugi_token`` cookie."""
