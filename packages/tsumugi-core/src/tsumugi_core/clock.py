"""Ports for time, ids and entropy: the core never reads them itself, the shell passes them in."""

from __future__ import annotations

from typing import Protocol

__all__ = ["Clock", "IdSource", "RandomSource"]


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
