"""The operator's calls on one JobShard object: runtime policy, diagnostics, bulk mutations, explain.

`ShardAdmin` sits beside `JobShardHost` in the Durable Object and uses the same engine (``host.engine``).
Every answer is a plain JSON value (docs/design/scheduler-rpc.md §1): the REST API calls these methods over
the JOB_SHARD namespace, one call per shard. Policy crosses as the camelCase `PolicyPatch` JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal

import msgspec

from tsumugi_core.options import EnqueueValidationError
from tsumugi_core.policy import PolicyPatch, PolicyValidationError, ShardSettings
from tsumugi_scheduler import _runtime
from tsumugi_scheduler.explain import explain_job
from tsumugi_scheduler.shard import JobShardEngine, SqlLike
from tsumugi_scheduler.shard_host import JobShardHost
from tsumugi_scheduler.timing import time_source
from tsumugi_scheduler.wire import convert_plain

__all__ = ["BULK_ACTIONS", "ShardAdmin", "settings_view"]

BULK_ACTIONS: Final = ("retry", "cancel")


def settings_view(settings: ShardSettings) -> dict[str, Any]:
    """The effective settings as the REST API shows them (snake_case, flat)."""
    policy, retention = settings.policy, settings.retention

    def rate(value: Any) -> dict[str, int] | None:
        return None if value is None else {"tokens": value.tokens, "interval_ms": value.interval_ms}

    return {
        "concurrency": policy.concurrency,
        "rate": rate(policy.rate),
        "per_key_concurrency": policy.per_key_concurrency,
        "per_key_rate": rate(policy.per_key_rate),
        "aging_interval_ms": policy.aging_interval_ms,
        "reaper_grace_ms": policy.reaper_grace_ms,
        "paused": policy.paused,
        "sweep_after_ms": retention.sweep_after_ms,
        "failed_retention_ms": retention.failed_retention_ms,
    }


class ShardAdmin:
    """Operator commands of one JobShard object; arms the object's alarm after each change."""

    def __init__(self, host: JobShardHost, storage: Any, sql: SqlLike) -> None:
        """Serve the object whose host is ``host`` (``storage`` for the alarm, ``sql`` for reads)."""
        self._host = host
        self._storage = storage
        self._sql = sql

    def _engine(self, name: str) -> JobShardEngine:
        engine = self._host.engine(name)
        assert engine is not None  # a name was given
        return engine

    async def _arm(self, engine: JobShardEngine) -> None:
        # Earlier-only, as JobShardHost arms: a later alarm could strand a job that is due now.
        at = engine.next_wake_at()
        if at is None:
            return
        current = await _runtime.current_alarm(self._storage)
        if current is None or current > at:
            await _runtime.set_alarm(self._storage, at)

    def _answer(self, engine: JobShardEngine, settings: ShardSettings) -> dict[str, Any]:
        return {"pinned": engine.pinned, "settings": settings_view(settings)}

    async def configure(self, name: str, patch: Any) -> dict[str, Any]:
        """Pin the settings in force with ``patch`` (camelCase PolicyPatch JSON) applied, until reset (ADR-0058).

        Answers ``{"pinned": true, "settings": <effective settings>}``.

        Raises:
            EnqueueValidationError: a field has the wrong type or breaks its rule (field ``policy.<name>``).
        """
        decoded = convert_plain(patch, PolicyPatch, "policy")
        engine = self._engine(name)
        try:
            settings = engine.configure(decoded, self._host.code_settings(engine.binding))
        except PolicyValidationError as exc:
            raise EnqueueValidationError(f"policy.{exc.field}", exc.rule) from None
        await self._arm(engine)
        return self._answer(engine, settings)

    async def reset_policy(self, name: str) -> dict[str, Any]:
        """Drop the pin; answers ``{"pinned": false, "settings": <the code's settings>}``."""
        engine = self._engine(name)
        settings = engine.reset_policy(self._host.code_settings(engine.binding))
        await self._arm(engine)
        return self._answer(engine, settings)

    async def diagnostics(self, name: str) -> dict[str, Any]:
        """Counts by state, feed backlogs, what held dispatch back in the last tick, the settings and the pin."""
        engine = self._engine(name)
        found = engine.diagnostics()
        return {
            "counts": dict(found.counts),
            "changes_pending": found.changes_pending,
            "notices_pending": found.notices_pending,
            "run_events_pending": found.run_events_pending,
            "blocked": msgspec.to_builtins(found.blocked),
            "settings": settings_view(engine.settings),
            "pinned": engine.pinned,
        }

    async def mutate_many(
        self,
        name: str,
        action: Literal["retry", "cancel"],
        job_ids: Sequence[str],
        states: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """Retry or cancel jobs of this shard; ``{"ok": [...], "failed": [{"id", "reason"}]}``; with ``states``,
        a job in another state is refused as ``invalid-state``.

        Raises:
            EnqueueValidationError: ``action`` is not retry or cancel.
        """
        if action not in BULK_ACTIONS:
            raise EnqueueValidationError("action", f"must be retry or cancel, got {action!r}")
        engine = self._engine(name)
        expect = None if states is None else frozenset(str(s) for s in states)
        answer = engine.mutate_many(action, [str(i) for i in job_ids], expect)
        await self._arm(engine)
        return msgspec.to_builtins(answer)

    async def explain(self, name: str, job_id: str) -> dict[str, Any] | None:
        """Why ``job_id`` waits (see tsumugi_scheduler.explain), or None when the shard does not hold it."""
        engine = self._engine(name)
        found = explain_job(self._sql, engine, job_id, time_source().now_ms())
        return None if found is None else msgspec.to_builtins(found)
