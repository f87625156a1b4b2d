"""The consumer's RUNNING marks of one queue batch, sent to each shard together: one ``start_many`` per shard.

Every job is RUNNING while its performer executes (the seed's states; ADR-0052). An at-least-once attempt
needs no permission to start, so its mark is not awaited before the performer is called. The marks of a
batch wait `MARK_DELAY_MS` and then go to each shard with one call; an attempt that answered meanwhile needs
no mark (its report moves the job on), so a batch of quick jobs costs no mark at all. The batch handler stops
the wait once every attempt answered. The shard fences each mark by the live attempt, so a mark that arrives
after its report, or twice, changes nothing. (At-most-once attempts are marked by their claim, awaited.)
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

from tsumugi_scheduler.remote_errors import is_missing_method
from tsumugi_scheduler.timing import TimeSource

__all__ = ["MARK_DELAY_MS", "START_MANY_METHOD", "StartMarks"]

START_MANY_METHOD: Final = "start_many"
"""The JobShard RPC method marking started attempts RUNNING."""
MARK_DELAY_MS: Final = 100
"""How long started attempts wait to be marked: those that answer first are never marked. The shard counts
silence from the mark, so this much (well inside ``reaper_grace_ms``) is added to a silent attempt's life."""
_log = logging.getLogger("tsumugi_scheduler")


class StartMarks:
    """Collects started attempts per shard and sends those still running after `MARK_DELAY_MS`."""

    def __init__(self, env: Any, clock: TimeSource) -> None:
        """Mark through ``env.JOB_SHARD``, waiting on ``clock``."""
        self._env = env
        self._clock = clock
        self._pending: dict[str, dict[tuple[str, int], None]] = {}
        self._timer: asyncio.Task[None] | None = None
        self._sending: set[asyncio.Task[None]] = set()

    def mark(self, shard: str, job_id: str, attempt: int) -> None:
        """Mark one started attempt RUNNING unless it answers within `MARK_DELAY_MS`."""
        self._pending.setdefault(shard, {})[job_id, attempt] = None
        if self._timer is None:
            self._timer = asyncio.get_running_loop().create_task(self._wait())

    def answered(self, shard: str, job_id: str, attempt: int) -> None:
        """The attempt answered: a mark not sent yet is dropped."""
        marks = self._pending.get(shard)
        if marks is not None:
            marks.pop((job_id, attempt), None)

    async def _wait(self) -> None:
        await self._clock.sleep_ms(MARK_DELAY_MS)
        self._timer = None
        self._flush()

    def _flush(self) -> None:
        pending, self._pending = self._pending, {}
        for shard, marks in pending.items():
            if not marks:
                continue
            body = [{"jobId": job_id, "attempt": attempt} for job_id, attempt in marks]
            task = asyncio.get_running_loop().create_task(self._send(shard, body))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _send(self, shard: str, marks: list[dict[str, Any]]) -> None:
        try:
            await self._env.JOB_SHARD.getByName(shard).start_many(shard, marks)
        except Exception as exc:
            if is_missing_method(exc, START_MANY_METHOD):
                _log.warning(
                    "shard %s has no %s(); its jobs stay QUEUED while they run (update the "
                    "scheduler's entry.py)",
                    shard,
                    START_MANY_METHOD,
                )
                return
            # A lost mark only leaves the job QUEUED; the report or the reaper still settles it.
            _log.warning("RUNNING marks for %d attempts on %s failed", len(marks), shard, exc_info=True)

    async def drain(self) -> None:
        """Every attempt answered: stop waiting, send what is still pending, and wait for the sends."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._flush()
        while self._sending:
            await asyncio.gather(*self._sending)
