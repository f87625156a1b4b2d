"""Time, ids and entropy for the scheduler Worker: the system's on Cloudflare, a virtual clock in tests.

The engine takes a `Clock`, an `IdSource` and a `RandomSource` (tsumugi_core.clock); the consumer also waits
(attempt timeouts). A Worker has no injection point for these, so the process holds one `TimeSource`, the
wall clock unless a host (the local runtime's tests) installs another with `use_time_source`, and one source
of ids and of jitter, the system's unless a host installs others with `use_entropy` (a seeded simulation
replays the same job ids and backoff jitter, tsumugi_simulation).
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time

from tsumugi_core.clock import IdSource, RandomSource, TimeSource
from tsumugi_core.ids import LOCAL_ID_ENTROPY_BYTES, new_local_id

__all__ = [
    "SystemIds",
    "SystemRandom",
    "SystemTime",
    "TimeSource",
    "entropy",
    "time_source",
    "use_entropy",
    "use_time_source",
]


class SystemTime:
    """The wall clock and `asyncio.sleep`."""

    def now_ms(self) -> int:
        """Milliseconds since the epoch."""
        return time.time_ns() // 1_000_000

    async def sleep_ms(self, ms: int) -> None:
        """Sleep on the event loop."""
        await asyncio.sleep(max(0, ms) / 1000)


class SystemIds:
    """Fresh local job ids from the operating system's entropy."""

    def new_local_id(self) -> str:
        """A 24-character id (tsumugi_core.ids.new_local_id)."""
        return new_local_id(secrets.token_bytes(LOCAL_ID_ENTROPY_BYTES))


class SystemRandom:
    """Uniform numbers in [0, 1) for backoff jitter (not security relevant)."""

    def random(self) -> float:
        """A number in [0, 1)."""
        return random.random()  # jitter only: not security relevant


# The scheduler's own slot, separate from the performer's (``tsumugi_performer.entrypoint.use_time_source``):
# hosts install and restore the two independently.
_current: list[TimeSource] = [SystemTime()]


def time_source() -> TimeSource:
    """The scheduler's time source in this process."""
    return _current[0]


def use_time_source(source: TimeSource) -> TimeSource:
    """Install ``source`` (a host's or a test's clock) for the scheduler; returns the previous one."""
    previous = _current[0]
    _current[0] = source
    return previous


_entropy: list[tuple[IdSource, RandomSource]] = [(SystemIds(), SystemRandom())]


def entropy() -> tuple[IdSource, RandomSource]:
    """The scheduler's id source and jitter source in this process."""
    return _entropy[0]


def use_entropy(ids: IdSource, rand: RandomSource) -> tuple[IdSource, RandomSource]:
    """Install an id source and a jitter source (a seeded host's); returns the previous pair."""
    previous = _entropy[0]
    _entropy[0] = (ids, rand)
    return previous
