"""Time, ids and entropy for the scheduler Worker: the system's on Cloudflare, a virtual clock in tests.

The engine takes a `Clock`, an `IdSource` and a `RandomSource` (tsumugi_core.clock); the consumer also waits
(attempt timeouts). A Worker has no injection point for these, so the process holds one `TimeSource`, the
wall clock unless a host (the local runtime's tests) installs another with `use_time_source`, and one source
of ids and of jitter, the system's unless a host installs others with `use_entropy` (a seeded simulation
replays the same job ids and backoff jitter, tsumugi_simulation).
"""

from __future__ import annotations

import asyncio
import os
import random
import secrets
import time
from typing import Final

from tsumugi_core.clock import IdSource, RandomSource, TimeSource
from tsumugi_core.ids import LOCAL_ID_ENTROPY_BYTES, new_local_id

__all__ = [
    "IDS_PER_READ",
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


IDS_PER_READ: Final = 64
"""Ids drawn from one read of the operating system's entropy."""
_forks = [0]
"""How many times this process was forked into a child: a pool read before a fork is never used after it."""


def _forked() -> None:
    _forks[0] += 1


if hasattr(os, "register_at_fork"):  # absent on Pyodide, which never forks
    os.register_at_fork(after_in_child=_forked)


class SystemIds:
    """Fresh local job ids from the operating system's entropy, `IDS_PER_READ` ids per read.

    One read per id was a system call each, which also lets CPython's other threads take the GIL (1.7% of the
    local runtime's event-loop samples in bench/e2e.py, py-spy). Each id still has its own
    `LOCAL_ID_ENTROPY_BYTES` bytes, never reused; a forked child reads afresh instead of repeating the
    parent's pool.
    """

    def __init__(self) -> None:
        self._pool = b""
        self._at = 0
        self._forks = _forks[0]

    def new_local_id(self) -> str:
        """A 24-character id (tsumugi_core.ids.new_local_id)."""
        at, end = self._at, self._at + LOCAL_ID_ENTROPY_BYTES
        if end > len(self._pool) or self._forks != _forks[0]:
            self._pool = secrets.token_bytes(LOCAL_ID_ENTROPY_BYTES * IDS_PER_READ)
            self._forks = _forks[0]
            at, end = 0, LOCAL_ID_ENTROPY_BYTES
        self._at = end
        return new_local_id(self._pool[at:end])


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
