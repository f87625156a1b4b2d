"""The consumer's RUNNING marks of one queue batch, sent to each shard together: one ``start_many`` per step.

Every job is RUNNING while its performer executes (the seed's states; ADR-0052). An at-least-once attempt
needs no permission to start, so its mark is not awaited before the performer is called: the marks made in
one event-loop step go to each shard with one call, next to the performer calls, and the batch handler waits
for them before it returns. The shard fences each mark by the live attempt, so a mark that arrives after its
report, or twice, changes nothing. (At-most-once attempts are marked by their claim, which is awaited.)
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

from tsumugi_scheduler.remote_errors import is_missing_method

__all__ = ["START_MANY_METHOD", "StartMarks"]

START_MANY_METHOD: Final = "start_many"
"""The JobShard RPC method marking started attempts RUNNING."""
_log = logging.getLogger("tsumugi_scheduler")


class StartMarks:
    """Collects started attempts per shard during one loop step and sends each shard's with one call."""

    def __init__(self, env: Any) -> None:
        """Mark through ``env.JOB_SHARD``."""
        self._env = env
        self._pending: dict[str, list[dict[str, Any]]] = {}
        self._sending: set[asyncio.Task[None]] = set()
        self._scheduled = False

    def mark(self, shard: str, job_id: str, attempt: int) -> None:
        """Queue the mark of one started attempt; it is sent when the current loop step ends."""
        self._pending.setdefault(shard, []).append({"jobId": job_id, "attempt": attempt})
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._scheduled = False
        pending, self._pending = self._pending, {}
        for shard, marks in pending.items():
            task = asyncio.get_running_loop().create_task(self._send(shard, marks))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _send(self, shard: str, marks: list[dict[str, Any]]) -> None:
        try:
            await self._env.JOB_SHARD.getByName(shard).start_many(shard, marks)
        except Exception as exc:
            if is_missing_method(exc, START_MANY_METHOD):
                _log.warning("shard %s has no %s(); its jobs stay QUEUED while they run (update the "
                             "scheduler's entry.py)", shard, START_MANY_METHOD)  # fmt: skip
                return
            # A lost mark only leaves the job QUEUED; the report or the reaper still settles it.
            _log.warning("RUNNING marks for %d attempts on %s failed", len(marks), shard, exc_info=True)

    async def drain(self) -> None:
        """Wait until every mark queued so far has been sent (or has failed)."""
        while self._scheduled or self._sending:
            if self._scheduled:
                await asyncio.sleep(0)
                continue
            await asyncio.gather(*self._sending)
