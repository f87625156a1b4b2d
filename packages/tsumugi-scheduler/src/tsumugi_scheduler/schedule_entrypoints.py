"""The Scheduler Durable Object class and the schedule methods of the RPC entrypoint (issue 12).

An entry module mixes `SchedulerMethods` into a ``DurableObject`` subclass (conventionally
``TsumugiScheduler``, bound as ``SCHEDULER``), as it does `JobShardMethods`; ``entry_classes`` does it for
the usual five classes (ADR-0155). Written out::

    class TsumugiScheduler(SchedulerMethods, DurableObject):
        tsumugi = TSUMUGI

`ScheduleRpcMethods` is part of `RpcMethods`: ``list_schedules``, ``get_schedule``, ``create_schedule``,
``update_schedule``, ``delete_schedule``, ``pause_schedule``, ``resume_schedule``, ``trigger_schedule``.
Each answers ``{"ok": true, ...}`` or ``{"ok": false, "status": n, "error": "..."}``.
"""

from __future__ import annotations

from typing import Any

from tsumugi_scheduler import _runtime
from tsumugi_scheduler.entrypoints import _Mixin  # pyright: ignore[reportPrivateUsage]
from tsumugi_scheduler.schedules.directory import ScheduleDirectory
from tsumugi_scheduler.schedules.host import SchedulerHost

__all__ = ["ScheduleRpcMethods", "SchedulerMethods"]


class SchedulerMethods(_Mixin):
    """The Scheduler Durable Object: one per Scheduler shard; every call names its shard first."""

    def __init__(self, ctx: Any, env: Any) -> None:
        """Open the host over the storage of the SDK's context (``self.ctx``, not the raw ``ctx``)."""
        super().__init__(ctx, env)
        storage = self.ctx.storage
        sql = _runtime.DurableObjectSql(storage, ctx.storage.sql)  # statements on the raw SQL API (ADR-0101)
        self.host = SchedulerHost(storage, sql, self.env, self.tsumugi)

    async def sync(self, shard: int) -> int:
        """Reconcile with the code and arm the alarm."""
        return await self.host.sync(shard)

    async def list(
        self, shard: int, after: str | None = None, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """This shard's schedules: all, or up to ``limit`` named after ``after``."""
        return await self.host.list(shard, after, limit)

    async def get(self, shard: int, name: str) -> dict[str, Any] | None:
        """One schedule."""
        return await self.host.get(shard, name)

    async def create(self, shard: int, body: Any) -> dict[str, Any]:
        """A run-time schedule."""
        return await self.host.create(shard, _runtime.plain(body))

    async def update(self, shard: int, name: str, body: Any) -> dict[str, Any]:
        """Change a run-time schedule."""
        return await self.host.update(shard, name, _runtime.plain(body))

    async def delete(self, shard: int, name: str) -> dict[str, Any]:
        """Delete a run-time schedule."""
        return await self.host.delete(shard, name)

    async def pause(self, shard: int, name: str) -> dict[str, Any]:
        """Pause a schedule."""
        return await self.host.pause(shard, name)

    async def resume(self, shard: int, name: str) -> dict[str, Any]:
        """Resume a schedule."""
        return await self.host.resume(shard, name)

    async def trigger(self, shard: int, name: str) -> dict[str, Any]:
        """Run a schedule now."""
        return await self.host.trigger(shard, name)

    async def alarm(self, alarm_info: Any = None) -> None:
        """Fire due occurrences."""
        await self.host.alarm()


class ScheduleRpcMethods(_Mixin):
    """Schedule calls on the RPC entrypoint (``tsumugi_client`` schedules module)."""

    def _directory(self) -> ScheduleDirectory:
        return ScheduleDirectory(self.env, self.tsumugi)

    async def list_schedules(self) -> list[dict[str, Any]]:
        """Every schedule."""
        return await self._directory().list()

    async def get_schedule(self, name: str) -> dict[str, Any] | None:
        """One schedule or None."""
        return await self._directory().get(name)

    async def create_schedule(self, body: Any) -> dict[str, Any]:
        """A run-time schedule from a camelCase body."""
        return await self._directory().create(_runtime.plain(body))

    async def update_schedule(self, name: str, body: Any) -> dict[str, Any]:
        """Change a run-time schedule."""
        return await self._directory().call("update", name, _runtime.plain(body))

    async def delete_schedule(self, name: str) -> dict[str, Any]:
        """Delete a run-time schedule."""
        return await self._directory().call("delete", name)

    async def pause_schedule(self, name: str) -> dict[str, Any]:
        """Pause a schedule."""
        return await self._directory().call("pause", name)

    async def resume_schedule(self, name: str) -> dict[str, Any]:
        """Resume a schedule."""
        return await self._directory().call("resume", name)

    async def trigger_schedule(self, name: str) -> dict[str, Any]:
        """Run a schedule now."""
        return await self._directory().call("trigger", name)
