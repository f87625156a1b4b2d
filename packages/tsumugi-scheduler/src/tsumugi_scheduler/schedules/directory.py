"""Schedules across the Scheduler shards: each call routed by name, lists gathered from every shard.

Used by the RPC entrypoint and the REST API. `prime` is the original's "priming": the first fetch, queue
batch or cron event of an isolate asks each Scheduler shard to reconcile with the code and arm its alarm,
so a deploy's code schedules start without any other call (a failure is retried on the next event).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from tsumugi_core.exceptions import TsumugiError
from tsumugi_scheduler._runtime import plain
from tsumugi_scheduler.api.plain_calls import PlainStub
from tsumugi_scheduler.definition import TsumugiDefinition
from tsumugi_scheduler.schedules.routing import object_name, shard_of_schedule

__all__ = ["ScheduleDirectory", "SchedulesNotConfiguredError", "plain_answer", "prime"]

_log = logging.getLogger("tsumugi.schedules")
_primed: set[int] = set()


class SchedulesNotConfiguredError(TsumugiError, RuntimeError):
    """The Worker has no ``SCHEDULER`` Durable Object binding."""

    def __init__(self) -> None:
        super().__init__(
            "SCHEDULER binding is not configured: add the TsumugiScheduler Durable Object to wrangler"
        )


class ScheduleDirectory:
    """The Scheduler shards of ``env`` for ``definition``."""

    def __init__(self, env: Any, definition: TsumugiDefinition) -> None:
        """Route over ``env.SCHEDULER``."""
        namespace = getattr(env, "SCHEDULER", None)
        if namespace is None:
            raise SchedulesNotConfiguredError
        self._namespace = namespace
        self._shards = definition.schedule_shards

    def _stub(self, shard: int) -> PlainStub:
        return PlainStub(self._namespace.getByName(object_name(shard)))

    def _route(self, name: str) -> tuple[PlainStub, int]:
        shard = shard_of_schedule(name, self._shards)
        return self._stub(shard), shard

    async def list(self) -> list[dict[str, Any]]:
        """Every schedule, by name."""
        pages = await asyncio.gather(*(self._stub(s).list(s) for s in range(self._shards)))
        return sorted((dict(v) for page in pages for v in page), key=lambda v: str(v["name"]))

    async def page(self, after: str, limit: int) -> tuple[list[dict[str, Any]], str | None]:
        """Up to ``limit`` schedules named after ``after``, by name, and the name to continue after (None at
        the end): each shard gives its first ``limit``, and the merge keeps the first ``limit`` of them."""
        pages = await asyncio.gather(*(self._stub(s).list(s, after, limit + 1) for s in range(self._shards)))
        merged = sorted((dict(v) for page in pages for v in page), key=lambda v: str(v["name"]))
        more = len(merged) > limit
        kept = merged[:limit]
        return kept, (str(kept[-1]["name"]) if more and kept else None)

    async def get(self, name: str) -> dict[str, Any] | None:
        """One schedule, or None."""
        stub, shard = self._route(name)
        found = await stub.get(shard, name)
        return None if found is None else dict(found)

    async def create(self, body: Any) -> dict[str, Any]:
        """A run-time schedule (routed by the body's ``name``)."""
        fields: Mapping[str, Any] = body if isinstance(body, Mapping) else {}  # pyright: ignore[reportUnknownVariableType]
        name = fields.get("name")
        if not isinstance(name, str):
            return {
                "ok": False,
                "status": 400,
                "error": "name is required and must be a string",
                "field": "name",
            }
        stub, shard = self._route(name)
        return dict(await stub.create(shard, body))

    async def call(self, method: str, name: str, *args: Any) -> dict[str, Any]:
        """``update`` / ``delete`` / ``pause`` / ``resume`` / ``trigger`` on the shard holding ``name``."""
        stub, shard = self._route(name)
        return dict(await getattr(stub, method)(shard, name, *args))

    async def sync(self) -> None:
        """Reconcile every shard with the code and arm its alarm."""
        await asyncio.gather(*(self._stub(s).sync(s) for s in range(self._shards)))


def prime(env: Any, definition: TsumugiDefinition, ctx: Any) -> None:
    """Once per isolate and definition: reconcile the Scheduler shards in the background (``waitUntil``)."""
    key = id(definition)
    if key in _primed or not definition.schedules.specs or getattr(env, "SCHEDULER", None) is None:
        return
    _primed.add(key)

    async def run() -> None:
        try:
            await ScheduleDirectory(env, definition).sync()
        except Exception:
            _primed.discard(key)  # the next event tries again
            _log.exception("priming the Scheduler failed")

    wait_until = getattr(ctx, "waitUntil", None)
    if wait_until is None:
        _primed.discard(key)
        return
    wait_until(run())


def plain_answer(value: Any) -> dict[str, Any]:
    """An RPC answer as a dict."""
    return dict(plain(value))
