"""The runtime's two clocks: virtual time for tests, the wall clock for ``tsumugi dev``.

Everything in the local runtime that waits (alarms, queue delays and batch timeouts, cron) registers a timer
with ``call_at`` instead of sleeping, and every background task is started with ``spawn``. Code that must
wait inside a task (a performer that sleeps, a consumer's timeout timer) awaits ``sleep_ms``. That is what
lets ``VirtualClock.advance`` be deterministic: it fires due timers one instant at a time, in order, and after
each one lets the loop run until it has *settled*: every task the runtime started has finished, or nothing is
runnable any more and some task waits on a future virtual instant (then only moving time can change anything).

Both clocks satisfy the ``TimeSource`` protocols of ``tsumugi_scheduler.timing`` and
``tsumugi_performer.entrypoint`` (``now_ms`` and ``sleep_ms``), so a host or a test installs the runtime's
clock there with ``use_time_source(clock)``.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

__all__ = ["RealClock", "RuntimeClock", "Timer", "VirtualClock"]

_log = logging.getLogger("tsumugi_dev")


class Timer:
    """A callback registered for an instant; ``cancel()`` makes it never run."""

    def __init__(self, at_ms: int, callback: Callable[[], None]) -> None:
        self.at_ms = at_ms
        self.callback = callback
        self.cancelled = False
        self._handle: asyncio.TimerHandle | None = None

    def cancel(self) -> None:
        """Stop the timer from firing (no effect once it has fired)."""
        self.cancelled = True
        if self._handle is not None:
            self._handle.cancel()

    def attach(self, handle: asyncio.TimerHandle) -> None:
        """Remember the event-loop handle that fires this timer (real clock only)."""
        self._handle = handle


class RuntimeClock(Protocol):
    """What the runtime needs from time: read it, wake at an instant, run work in the background."""

    def now_ms(self) -> int:
        """The current instant in epoch milliseconds."""
        ...

    def call_at(self, at_ms: int, callback: Callable[[], None]) -> Timer:
        """Run ``callback`` (synchronously, on the event loop) once ``now_ms() >= at_ms``."""
        ...

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        """Run ``coro`` as a background task the clock keeps track of."""
        ...

    async def sleep_ms(self, ms: int) -> None:
        """Wait until ``ms`` milliseconds of this clock's time have passed."""
        ...

    async def aclose(self) -> None:
        """Cancel every timer and background task."""
        ...


class _TaskTracker:
    """Keeps references to background tasks (so they are not collected) and reports their crashes."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[Any]] = set()
        self.crashes: list[BaseException] = []

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self.tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self.tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            # A runtime task should never raise: handler errors are caught where Cloudflare catches them.
            self.crashes.append(exc)
            _log.error("background task %s crashed", task.get_name(), exc_info=exc)

    async def cancel_all(self) -> None:
        tasks = list(self.tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _loop_is_idle(loop: asyncio.AbstractEventLoop) -> bool:
    """True when no callback is ready to run: every task waits on a future, a timer or outside I/O."""
    # asyncio has no public way to ask this. Every stdlib loop derives from BaseEventLoop, which keeps its
    # runnable callbacks in ``_ready``; other loops (uvloop) are refused with a clear error instead.
    ready: Any = getattr(loop, "_ready", None)
    if ready is None:
        raise RuntimeError(
            f"VirtualClock needs a stdlib asyncio event loop (got {type(loop).__name__}): it cannot see "
            "whether any task is runnable on that loop"
        )
    return len(ready) == 0


class VirtualClock:
    """Time that moves only when a test says so.

    Example:
        clock = VirtualClock(start_ms=1_700_000_000_000)
        await clock.advance(5_000)   # fires every timer due in the next 5 s, in order
        await clock.sleep_ms(100)    # inside a task: resumes when a later advance reaches that instant
    """

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self._now = start_ms
        self._heap: list[tuple[int, int, Timer]] = []
        self._seq = itertools.count()
        self._tracker = _TaskTracker()
        self._sleepers = 0
        self._sleeper_started: asyncio.Future[None] | None = None

    @property
    def crashes(self) -> list[BaseException]:
        """Exceptions that escaped background tasks (a runtime bug when not empty)."""
        return self._tracker.crashes

    @property
    def sleepers(self) -> int:
        """How many coroutines are waiting in ``sleep_ms`` right now."""
        return self._sleepers

    def now_ms(self) -> int:
        """The current virtual instant."""
        return self._now

    def call_at(self, at_ms: int, callback: Callable[[], None]) -> Timer:
        """Register ``callback`` for ``at_ms``; timers for the same instant fire in registration order."""
        timer = Timer(at_ms, callback)
        heapq.heappush(self._heap, (at_ms, next(self._seq), timer))
        return timer

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        """Start a tracked background task; ``settle`` waits for it."""
        return self._tracker.spawn(coro, name)

    async def sleep_ms(self, ms: int) -> None:
        """Wait until virtual time has moved ``ms`` forward (``ms <= 0`` only yields to the loop).

        A task waiting here counts as settled: ``advance`` moves time on rather than waiting for it.
        """
        if ms <= 0:
            await asyncio.sleep(0)
            return
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not woken.done():
                woken.set_result(None)

        timer = self.call_at(self._now + ms, wake)
        self._sleepers += 1
        if self._sleeper_started is not None and not self._sleeper_started.done():
            self._sleeper_started.set_result(None)
        try:
            await woken
        finally:
            self._sleepers -= 1
            timer.cancel()

    def next_timer_at(self) -> int | None:
        """The instant of the earliest pending timer, or None."""
        while self._heap and self._heap[0][2].cancelled:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    async def settle(self) -> None:
        """Let the loop run until nothing more can happen without moving time.

        That is: nothing is runnable and either every tracked task has finished or some coroutine waits in
        ``sleep_ms``. While tracked tasks wait on something else (outside I/O) and nobody sleeps, it waits for
        a task to finish or to start sleeping.
        """
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(0)
            if not _loop_is_idle(loop):
                continue
            pending = [t for t in self._tracker.tasks if not t.done()]
            if not pending or self._sleepers:
                return
            await self._wait_for_progress(loop, pending)

    async def _wait_for_progress(
        self, loop: asyncio.AbstractEventLoop, pending: list[asyncio.Task[Any]]
    ) -> None:
        started = self._sleeper_started = loop.create_future()
        try:
            await asyncio.wait([*pending, started], return_when=asyncio.FIRST_COMPLETED)
        finally:
            started.cancel()
            self._sleeper_started = None

    async def advance(self, ms: int) -> None:
        """Move time forward by ``ms``, firing due timers one instant at a time."""
        if ms < 0:
            raise ValueError(f"ms must be >= 0 (got {ms})")
        await self.advance_to(self._now + ms)

    async def advance_to(self, at_ms: int) -> None:
        """Move time forward to ``at_ms`` (never backwards), firing due timers in order."""
        await self.settle()
        while (due := self.next_timer_at()) is not None and due <= at_ms:
            _, _, timer = heapq.heappop(self._heap)
            self._now = max(self._now, due)
            timer.callback()
            await self.settle()
        self._now = max(self._now, at_ms)
        await self.settle()

    async def aclose(self) -> None:
        """Drop every timer and cancel every background task."""
        self._heap.clear()
        await self._tracker.cancel_all()


class RealClock:
    """The wall clock, for ``tsumugi dev``."""

    def __init__(self) -> None:
        self._tracker = _TaskTracker()
        self._timers: set[Timer] = set()

    def now_ms(self) -> int:
        """Milliseconds since the epoch, from the system clock."""
        return int(time.time() * 1000)

    def call_at(self, at_ms: int, callback: Callable[[], None]) -> Timer:
        """Schedule ``callback`` on the running loop for ``at_ms`` (at once when it is past)."""
        timer = Timer(at_ms, callback)

        def fire() -> None:
            self._timers.discard(timer)
            if not timer.cancelled:
                callback()

        delay_s = max(0.0, (at_ms - self.now_ms()) / 1000)
        timer.attach(asyncio.get_running_loop().call_later(delay_s, fire))
        self._timers.add(timer)
        return timer

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        """Start a tracked background task."""
        return self._tracker.spawn(coro, name)

    async def sleep_ms(self, ms: int) -> None:
        """Sleep on the event loop."""
        await asyncio.sleep(max(0, ms) / 1000)

    async def aclose(self) -> None:
        """Cancel pending timers and background tasks."""
        for timer in list(self._timers):
            timer.cancel()
        self._timers.clear()
        await self._tracker.cancel_all()
