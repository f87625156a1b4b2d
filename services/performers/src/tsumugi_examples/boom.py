"""``Boom``: always fails, to show retries with backoff, FAILED and the failure notice."""

from __future__ import annotations

from typing import Any, Final

from tsumugi_performer import JobContext, Performer

__all__ = ["BOOM_ERROR", "Boom"]

BOOM_ERROR: Final = "intentional failure"


class Boom(Performer[Any, None]):
    """Raises ``RuntimeError("intentional failure")`` on every attempt."""

    async def perform(self, payload: Any, ctx: JobContext) -> None:
        """Fail."""
        raise RuntimeError(BOOM_ERROR)
