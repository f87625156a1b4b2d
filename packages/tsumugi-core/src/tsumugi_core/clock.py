"""Ports for time, ids and entropy: the core never reads them itself, the shell passes them in.

`TimeSource` is the clock protocol the scheduler and the performer package share (each has its own slot and
its own wall-clock implementation, since the core reads no clock).
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Clock", "IdSource", "RandomSource", "TimeSource"]


class Clock(Protocol):
    """A source of the current instant."""

    def now_ms(self) -> int:
        """Return the current instant in epoch milliseconds."""
        ...


class IdSource(Protocol):
    """A source of fresh local job ids (24 chars of ``[a-z0-9]``, starting with a letter)."""

    def new_local_id(self) -> str:
        """Return an id that has not been returned before."""
        ...


class RandomSource(Protocol):
    """A source of uniform random numbers, used for backoff jitter."""

    def random(self) -> float:
        """Return a number in ``[0, 1)``."""
        ...


class TimeSource(Protocol):
    """Where a Worker reads time and sleeps: the wall clock on Cloudflare, a virtual clock in tests."""

    def now_ms(self) -> int:
        """The current instant in epoch milliseconds."""
        ...

    async def sleep_ms(self, ms: int) -> None:
        """Wait ``ms`` milliseconds."""
        ...
