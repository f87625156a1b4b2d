"""Refuse API calls while the read model's D1 migrations are pending.

Source: docs/reference/original.md §4.1 (step 5 of the pipeline).

The check is cached per isolate and per D1 binding: a current schema stays current (forever), a schema found
out of date is asked again on the next request (so applying the migrations takes effect at once), and a D1
failure that says nothing about the schema is remembered for 5 s so an outage does not double the load.

The cache is keyed by the binding's name, not by the object ``env.<binding>`` answers: the SDK wraps the env
anew for each request (``workers`` ``_EnvWrapper``), so that object differs every time, and a cache keyed by it
asked D1 two statements on every API request (ADR-0164). One isolate has one env, so the name is the database.
"""

from __future__ import annotations

from typing import Any, Final

from tsumugi_scheduler.api.answers import ApiError
from tsumugi_scheduler.readmodel import pending_migrations
from tsumugi_scheduler.timing import time_source

__all__ = ["TRANSIENT_CACHE_MS", "UNAVAILABLE", "SchemaGate", "out_of_date_message"]

TRANSIENT_CACHE_MS: Final = 5_000
UNAVAILABLE: Final = "database temporarily unavailable"


def out_of_date_message(pending: list[str], database: str) -> str:
    """The original's 503 text naming the missing files (wrangler accepts the binding name)."""
    return (
        f"database schema is out of date: {', '.join(pending)} not applied. "
        f'run "wrangler d1 migrations apply {database} --remote"'
    )


class SchemaGate:
    """Checks ``env.<binding>`` (the read model) before any route reads or writes it."""

    def __init__(self, binding: str = "TSUMUGI_DB") -> None:
        """Guard the D1 database bound as ``binding``."""
        self.binding = binding
        self._current = False
        self._failing_until: int | None = None

    async def check(self, env: Any) -> None:
        """Return when the schema is current.

        Raises:
            ApiError: 503 naming the pending migrations, or 503 ``database temporarily unavailable``.
        """
        d1 = getattr(env, self.binding, None)
        if d1 is None:
            raise ApiError(
                503,
                {
                    "error": f"the {self.binding} binding (D1 read model) is missing",
                    "missing": [{"kind": "d1", "name": self.binding}],
                },
            )
        if self._current:
            return
        now = time_source().now_ms()
        if self._failing_until is not None and self._failing_until > now:
            raise ApiError(503, {"error": UNAVAILABLE})
        try:
            pending = await pending_migrations(d1)
        except Exception:
            self._failing_until = now + TRANSIENT_CACHE_MS
            raise ApiError(503, {"error": UNAVAILABLE}) from None
        self._failing_until = None
        if pending:
            raise ApiError(503, {"error": out_of_date_message(pending, self.binding), "pending": pending})
        self._current = True
