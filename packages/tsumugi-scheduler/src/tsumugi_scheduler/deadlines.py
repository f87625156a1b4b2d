"""One sleeping task watches the deadlines of every running attempt of an event loop (the consumer's timeouts).

A timer task per attempt costs a task, a sleep and a cancellation even when the performer answers at once;
here an attempt only registers its wake-up future, and its deadline is read again when it comes due, so a
heartbeat that moved it is honoured.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from typing import Final, Protocol

from tsumugi_scheduler.timing import TimeSource

__all__ = ["DeadlineWatch", "HasDeadline", "deadline_watch"]


class HasDeadline(Protocol):
    """Something with a deadline (epoch ms) that may move later while it waits."""

    @property
    def deadline(self) -> int:
        """When it times out."""
        ...


class DeadlineWatch:
    """The deadlines of the running attempts of one event loop and clock, watched by one sleeping task.

    A timer task per attempt costs a task, a sleep and a cancellation even when the performer answers at
    once. Here an attempt only registers; one task sleeps on the scheduler's `TimeSource` (so a virtual clock
    drives it exactly as it drove a timer per attempt: while any attempt runs, one coroutine waits in
    ``sleep_ms``) until the earliest deadline, re-reads the deadline of each attempt it woke for (a heartbeat
    may have moved it) and wakes those whose deadline has passed. When no attempt runs any more the task is
    cancelled, so an idle consumer leaves no sleeper behind.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, clock: TimeSource) -> None:
        self.loop = loop
        self.clock = clock
        self._heap: list[tuple[int, int, HasDeadline, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._live = 0
        self._stale = 0
        self._task: asyncio.Task[None] | None = None
        self._wake_at: int | None = None

    def add(self, attempt: HasDeadline, woken: asyncio.Future[None]) -> None:
        """Set ``woken`` once ``attempt``'s deadline has passed, unless it is done before; then call `done`."""
        self._live += 1
        heapq.heappush(self._heap, (attempt.deadline, next(self._order), attempt, woken))
        task = self._task
        if (
            task is not None
            and not task.done()
            and self._wake_at is not None
            and self._wake_at <= attempt.deadline
        ):
            return  # the watcher wakes before this deadline anyway
        if task is not None:
            task.cancel()
        self._wake_at = attempt.deadline
        self._task = self.loop.create_task(self._watch())

    def done(self) -> None:
        """An attempt stopped waiting (answered, timed out or cancelled): its ``woken`` must be done."""
        self._live -= 1
        self._stale += 1
        if self._live == 0:
            self._heap.clear()
            self._stale = 0
            if self._task is not None:
                self._task.cancel()
                self._task = self._wake_at = None
        elif self._stale > _STALE_LIMIT and self._stale > self._live:
            # Entries of finished attempts would otherwise stay until their deadline passes (and hold the
            # attempt, payload included): drop them now and then, in place (the watcher holds the list).
            self._heap[:] = [entry for entry in self._heap if not entry[3].done()]
            heapq.heapify(self._heap)
            self._stale = 0

    async def _watch(self) -> None:
        heap = self._heap
        while True:
            now = self.clock.now_ms()
            while heap and heap[0][0] <= now:
                _, _, attempt, woken = heapq.heappop(heap)
                if woken.done():
                    continue  # it answered meanwhile
                if attempt.deadline > now:  # a heartbeat moved it
                    heapq.heappush(heap, (attempt.deadline, next(self._order), attempt, woken))
                else:
                    woken.set_result(None)
            if not heap:  # every registered attempt has been woken
                if self._task is asyncio.current_task():
                    self._task = self._wake_at = None
                return
            self._wake_at = heap[0][0]
            await self.clock.sleep_ms(self._wake_at - now)


_STALE_LIMIT: Final = 256
"""Finished attempts' heap entries tolerated before `DeadlineWatch` drops them (when they outnumber the live)."""
_current: list[DeadlineWatch | None] = [None]


def deadline_watch(clock: TimeSource) -> DeadlineWatch:
    """The watch of the running event loop and ``clock`` (made on first use)."""
    loop = asyncio.get_running_loop()
    current = _current[0]
    if current is None or current.loop is not loop or current.clock is not clock:
        current = _current[0] = DeadlineWatch(loop, clock)
    return current
