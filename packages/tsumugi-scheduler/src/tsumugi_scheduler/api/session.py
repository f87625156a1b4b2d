"""The dashboard's sign-in session: an expiring value signed with the API token, kept in an HttpOnly cookie.

The cookie never holds the token itself (ADR-0064). Its value is ``v1.<issued_at>.<mac>``, where ``mac`` is
HMAC-SHA256 keyed with the token over the version and the issue time (epoch ms), base64url without padding.
Nothing is stored server-side, so it works on any number of isolates; rotating the token invalidates every
session at once, and a session expires ``ttl_ms`` after sign-in.

Example:
    >>> value = issue_session("s3cret", 1_000)
    >>> value.startswith("v1.1000.")
    True
    >>> session_is_valid(value, "s3cret", now_ms=2_000, ttl_ms=60_000)
    True
    >>> session_is_valid(value, "rotated", now_ms=2_000, ttl_ms=60_000)
    False
    >>> session_is_valid(value, "s3cret", now_ms=61_000, ttl_ms=60_000)
    False
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Final

__all__ = [
    "CLOCK_SKEW_MS",
    "SESSION_PATH",
    "SESSION_TTL_MS",
    "clearing_cookie",
    "issue_session",
    "session_cookie",
    "session_is_valid",
]

SESSION_PATH: Final = "/api/session"
"""``GET``: am I signed in; ``POST {"token": ...}``: sign in; ``DELETE``: sign out."""
SESSION_TTL_MS: Final = 12 * 60 * 60 * 1000
"""How long a sign-in lasts (a working day); then the dashboard asks for the token again."""
CLOCK_SKEW_MS: Final = 60_000
"""A session issued this far in the future still counts (isolates' clocks differ slightly)."""
COOKIE_PATH: Final = "/api"
"""The cookie goes only to the API, never to the page or any other path of the host."""
_VERSION: Final = "v1"


def _mac(token: str, issued_at: int) -> str:
    digest = hmac.new(
        token.encode(), f"tsumugi-session:{_VERSION}:{issued_at}".encode(), hashlib.sha256
    ).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def issue_session(token: str, now_ms: int) -> str:
    """A session value signed with ``token``, issued at ``now_ms``."""
    return f"{_VERSION}.{now_ms}.{_mac(token, now_ms)}"


def session_is_valid(value: str, token: str, *, now_ms: int, ttl_ms: int) -> bool:
    """True when ``value`` was issued with ``token`` less than ``ttl_ms`` ago (constant-time MAC check)."""
    version, _, rest = value.partition(".")
    issued_text, _, mac = rest.partition(".")
    if version != _VERSION or not issued_text.isdigit() or len(issued_text) > 16 or not mac:
        return False
    issued_at = int(issued_text)
    if not (now_ms - ttl_ms < issued_at <= now_ms + CLOCK_SKEW_MS):
        return False
    return hmac.compare_digest(mac.encode(), _mac(token, issued_at).encode())


def session_cookie(name: str, value: str, *, secure: bool, ttl_ms: int) -> str:
    """The ``Set-Cookie`` value: HttpOnly (no script reads it), SameSite=Strict, the API path only."""
    secure_flag = "; Secure" if secure else ""
    return f"{name}={value}; Path={COOKIE_PATH}; Max-Age={ttl_ms // 1000}; HttpOnly; SameSite=Strict{secure_flag}"


def clearing_cookie(name: str, path: str = COOKIE_PATH) -> str:
    """A ``Set-Cookie`` value that deletes the cookie ``name`` of ``path`` (sign-out; ``/`` for the old one)."""
    return f"{name}=; Path={path}; Max-Age=0; HttpOnly; SameSite=Strict"
