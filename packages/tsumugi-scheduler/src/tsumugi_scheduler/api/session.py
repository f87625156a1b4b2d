"""The dashboard's sign-in session: a signed cookie, a page key the signed-in page holds, and a row in D1.

The cookie never holds the token itself (ADR-0064). Its value is ``v2.<issued_at>.<id>.<mac>``: the issue time
(epoch ms), a random session id, and HMAC-SHA256 keyed with the token over the version, the time and the id,
base64url without padding. Rotating the token invalidates every session at once; a session expires ``ttl_ms``
after sign-in.

A cookie alone is not enough (ADR-0121). Browsers send a host's cookies to every port of it, so a page served
on another port of 127.0.0.1 receives the HttpOnly cookie and can replay it from a script. The sign-in answer
therefore also carries a page key, ``HMAC(token, "tsumugi-page" + id)``, which only the page that signed in
reads (it is in a response body, and the page keeps it in its origin's storage, which other ports cannot read);
every API call sends it in `PAGE_KEY_HEADER`. And the id must be open in the read model's
``dashboard_session`` table (`tsumugi_scheduler.api.session_store`): sign-out deletes it, so a copied cookie
stops working on the server, not only in the browser.

Example:
    >>> value = issue_session("s3cret", 1_000, "A" * 22)
    >>> value.startswith("v2.1000.AAAAAAAAAAAAAAAAAAAAAA.")
    True
    >>> key = page_key("s3cret", "A" * 22)
    >>> session_id_of(value, key, "s3cret", now_ms=2_000, ttl_ms=60_000)
    'AAAAAAAAAAAAAAAAAAAAAA'
    >>> session_id_of(value, None, "s3cret", now_ms=2_000, ttl_ms=60_000) is None
    True
    >>> session_id_of(value, key, "rotated", now_ms=2_000, ttl_ms=60_000) is None
    True
    >>> session_id_of(value, key, "s3cret", now_ms=61_000, ttl_ms=60_000) is None
    True
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from typing import Final

__all__ = [
    "CLOCK_SKEW_MS",
    "PAGE_KEY_HEADER",
    "SESSION_PATH",
    "SESSION_TTL_MS",
    "clearing_cookie",
    "issue_session",
    "page_key",
    "session_cookie",
    "session_id_of",
    "signed_session_id",
]

SESSION_PATH: Final = "/api/session"
"""``GET``: am I signed in; ``POST {"token": ...}``: sign in; ``DELETE``: sign out."""
SESSION_TTL_MS: Final = 12 * 60 * 60 * 1000
"""How long a sign-in lasts (a working day); then the dashboard asks for the token again."""
CLOCK_SKEW_MS: Final = 60_000
"""A session issued this far in the future still counts (isolates' clocks differ slightly)."""
COOKIE_PATH: Final = "/api"
"""The cookie goes only to the API, never to the page or any other path of the host."""
PAGE_KEY_HEADER: Final = "x-tsumugi-session"
"""The request header carrying the page key (a custom header: a cross-origin page cannot send it unasked)."""
_VERSION: Final = "v2"
_ID: Final = re.compile(r"[A-Za-z0-9_-]{22}")
_ISSUED: Final = re.compile(r"[0-9]{1,16}")


def _mac(token: str, text: str) -> str:
    digest = hmac.new(token.encode(), text.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _session_mac(token: str, issued_at: int, session_id: str) -> str:
    return _mac(token, f"tsumugi-session:{_VERSION}:{issued_at}:{session_id}")


def issue_session(token: str, now_ms: int, session_id: str) -> str:
    """A session value for ``session_id`` (22 base64url characters), signed with ``token``, issued at ``now_ms``."""
    return f"{_VERSION}.{now_ms}.{session_id}.{_session_mac(token, now_ms, session_id)}"


def page_key(token: str, session_id: str) -> str:
    """The key the signed-in page sends with each call of session ``session_id``."""
    return _mac(token, f"tsumugi-page:{_VERSION}:{session_id}")


def signed_session_id(value: str, token: str, *, now_ms: int, ttl_ms: int) -> str | None:
    """The id of ``value`` when it was signed with ``token`` less than ``ttl_ms`` ago; None otherwise.

    Only ASCII digits count as the issue time (``str.isdigit`` also accepts "²", which ``int`` refuses).
    """
    parts = value.split(".")
    if len(parts) != 4 or parts[0] != _VERSION:
        return None
    _, issued_text, session_id, mac = parts
    if _ISSUED.fullmatch(issued_text) is None or _ID.fullmatch(session_id) is None:
        return None
    issued_at = int(issued_text)
    if not (now_ms - ttl_ms < issued_at <= now_ms + CLOCK_SKEW_MS):
        return None
    if not hmac.compare_digest(mac.encode(), _session_mac(token, issued_at, session_id).encode()):
        return None
    return session_id


def session_id_of(value: str, key: str | None, token: str, *, now_ms: int, ttl_ms: int) -> str | None:
    """The id of a live session whose page key ``key`` matches; None otherwise (constant-time comparisons)."""
    session_id = signed_session_id(value, token, now_ms=now_ms, ttl_ms=ttl_ms)
    if session_id is None or key is None:
        return None
    return session_id if hmac.compare_digest(key.encode(), page_key(token, session_id).encode()) else None


def session_cookie(name: str, value: str, *, secure: bool, ttl_ms: int) -> str:
    """The ``Set-Cookie`` value: HttpOnly (no script reads it), SameSite=Strict, the API path only."""
    secure_flag = "; Secure" if secure else ""
    return f"{name}={value}; Path={COOKIE_PATH}; Max-Age={ttl_ms // 1000}; HttpOnly; SameSite=Strict{secure_flag}"


def clearing_cookie(name: str, path: str = COOKIE_PATH) -> str:
    """A ``Set-Cookie`` value that deletes the cookie ``name`` of ``path`` (sign-out; ``/`` for the old one)."""
    return f"{name}=; Path={path}; Max-Age=0; HttpOnly; SameSite=Strict"
