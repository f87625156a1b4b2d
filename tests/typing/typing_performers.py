"""Performers the client typing cases refer to (imported there for type checking only)."""

from __future__ import annotations

import msgspec

from tsumugi_performer import JobContext, Performer


class HelloPayload(msgspec.Struct, frozen=True):
    name: str


class Hello(Performer[HelloPayload, str]):
    async def perform(self, payload: HelloPayload, ctx: JobContext) -> str:
        return f"Hello, {payload.name}!"


class Plain(Performer[int, list[int]]):
    async def perform(self, payload: int, ctx: JobContext) -> list[int]:
        return [payload]
