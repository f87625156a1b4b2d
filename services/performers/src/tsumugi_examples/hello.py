"""``Hello``: the smallest performer; greets by name."""

from __future__ import annotations

import msgspec

from tsumugi_performer import JobContext, Performer

__all__ = ["Hello", "HelloPayload"]


class HelloPayload(msgspec.Struct, frozen=True, kw_only=True):
    """``{"name": ...}``."""

    name: str


class Hello(Performer[HelloPayload, str]):
    """Returns ``Hello, <name>!``; the result lands in the read model."""

    async def perform(self, payload: HelloPayload, ctx: JobContext) -> str:
        """Greet."""
        return f"Hello, {payload.name}!"
