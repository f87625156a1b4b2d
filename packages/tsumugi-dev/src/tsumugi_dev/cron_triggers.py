"""Cron Triggers: call a Worker's ``scheduled`` handler at every instant its ``triggers.crons`` match.

Expressions are in Cloudflare's dialect (``tsumugi_dev.wrangler_cron``: UTC, five fields, 1 = Sunday, names,
``L`` / ``W`` / ``#``), not the dialect of Tsumugi's own schedules. Missed instants are not replayed after a
restart, as on Cloudflare; the next match after start-up fires.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from tsumugi_dev.clock import RuntimeClock, Timer
from tsumugi_dev.wrangler_cron import WranglerCron, next_fire_at, parse_wrangler_cron

__all__ = ["CronTrigger"]

_log = logging.getLogger("tsumugi_dev")

RunScheduled = Callable[[str, int], Coroutine[Any, Any, None]]


class CronTrigger:
    """One cron expression of one Worker, re-armed after every firing."""

    def __init__(self, expression: str, clock: RuntimeClock, run: RunScheduled) -> None:
        self.expression = expression
        self.spec: WranglerCron = parse_wrangler_cron(expression)
        self._clock = clock
        self._run = run
        self._timer: Timer | None = None
        self.next_at: int | None = None

    def arm(self) -> None:
        """Schedule the next matching instant after now."""
        self.next_at = next_fire_at(self.spec, self._clock.now_ms())
        self._timer = self._clock.call_at(self.next_at, self._fire)

    def _fire(self) -> None:
        scheduled_at = self.next_at if self.next_at is not None else self._clock.now_ms()
        self._clock.spawn(self._guarded(scheduled_at), name=f"cron {self.expression}")
        self.arm()

    async def _guarded(self, scheduled_at: int) -> None:
        try:
            await self._run(self.expression, scheduled_at)
        except Exception as exc:
            _log.info("cron %r failed: %r", self.expression, exc)

    def cancel(self) -> None:
        """Stop firing."""
        if self._timer is not None:
            self._timer.cancel()
