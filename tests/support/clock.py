"""The tests' time: one instant to start at, a stepped clock, and a clock installed where the code reads time.

The scheduler library reads time from `tsumugi_scheduler.timing` and a performer from
`tsumugi_performer.entrypoint`, each installed with its ``use_time_source``. A test that runs either in
process installs its clock in both with `installed` (a `tsumugi_dev.clock.VirtualClock` when the local
runtime runs too, so retries, timeouts, heartbeats and a performer's sleeps wait on the same virtual time; a
`SteppedClock` otherwise) and gets back whatever was there before, also when the test fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

from tsumugi_core.clock import TimeSource
from tsumugi_core.testing import FixedClock
from tsumugi_performer import entrypoint as performer_time
from tsumugi_scheduler import timing as scheduler_time

START_MS = 1_767_225_600_000
"""2026-01-01T00:00:00Z, on a cron boundary: where the tests' clocks start."""

Clock = TypeVar("Clock", bound=TimeSource)


class SteppedClock(FixedClock):
    """`FixedClock` plus the ``sleep_ms`` a time source offers: a sleep moves the clock on at once."""

    async def sleep_ms(self, ms: int) -> None:
        self.advance(ms)


@contextmanager
def installed(clock: Clock) -> Iterator[Clock]:
    """``clock`` as the scheduler's and the performer's time source for the block; the previous ones after."""
    previous = scheduler_time.use_time_source(clock), performer_time.use_time_source(clock)
    try:
        yield clock
    finally:
        scheduler_time.use_time_source(previous[0])
        performer_time.use_time_source(previous[1])
