"""Which dashboard sessions are open: the read model's ``dashboard_session`` table (ADR-0121).

Sign-in adds a row (and deletes expired ones), sign-out deletes it, and a cookie-authenticated request counts
only while its row exists: one primary-key read in D1 per such request. Requests with the bearer token never
read it. D1 is shared by every isolate of the Worker, so a sign-out holds everywhere at once; a failed read
refuses the request (fail-closed).
"""

from __future__ import annotations

import logging
from typing import Any, Final

__all__ = ["close_session", "open_session", "session_is_open"]

_log = logging.getLogger("tsumugi_scheduler.api")
_DROP_EXPIRED: Final = "DELETE FROM dashboard_session WHERE expires_at <= ?"
_ADD: Final = "INSERT INTO dashboard_session (id, expires_at) VALUES (?, ?)"
_FIND: Final = "SELECT 1 AS open FROM dashboard_session WHERE id = ? AND expires_at > ?"
_DROP: Final = "DELETE FROM dashboard_session WHERE id = ?"


async def open_session(db: Any, session_id: str, *, now_ms: int, expires_at: int) -> None:
    """Record ``session_id`` as open until ``expires_at``, and forget every expired session."""
    await db.batch([db.prepare(_DROP_EXPIRED).bind(now_ms), db.prepare(_ADD).bind(session_id, expires_at)])


async def session_is_open(db: Any, session_id: str, *, now_ms: int) -> bool:
    """True while ``session_id`` is signed in; False when it was closed, has expired, or D1 cannot say."""
    try:
        row = await db.prepare(_FIND).bind(session_id, now_ms).first()
    except Exception:
        _log.exception("dashboard session lookup failed; the request is refused")
        return False
    return row is not None


async def close_session(db: Any, session_id: str) -> None:
    """Sign ``session_id`` out everywhere."""
    await db.prepare(_DROP).bind(session_id).run()
