"""Deterministic stand-ins for the clock, id and entropy ports, for tests and simulations.

Example:
    >>> clock = FixedClock(1_000)
    >>> clock.advance(500)
    >>> clock.now_ms()
    1500
    >>> SequentialIds("job").new_local_id()
    'job000000000000000000001'
"""

from __future__ import annotations

import re

from tsumugi_core.exceptions import InvalidFieldError

__all__ = ["FixedClock", "FixedRandom", "SequentialIds"]

_LOCAL_ID_LENGTH = 24
_PREFIX_RE = re.compile(r"^[a-z][a-z0-9]{0,15}$")


class FixedClock:
    """A clock that only moves when told to."""

    def __init__(self, start_ms: int = 0) -> None:
        """Start the clock at ``start_ms`` (epoch ms)."""
        self._now = start_ms

    def now_ms(self) -> int:
        """Return the current (fixed) instant."""
        return self._now

    def advance(self, ms: int) -> None:
        """Move the clock forward by ``ms`` milliseconds.

        Raises:
            ValueError: ``ms`` is negative (time never runs backwards here).
        """
        if ms < 0:
            raise InvalidFieldError("ms", f"must not be negative: {ms}")
        self._now += ms

    def set(self, ms: int) -> None:
        """Put the clock at the instant ``ms``."""
        self._now = ms


class SequentialIds:
    """Local ids ``<prefix>00..01``, ``<prefix>00..02`` and so on: valid, unique and sortable by creation."""

    def __init__(self, prefix: str = "job") -> None:
        """Use ``prefix`` (1-16 chars of ``[a-z0-9]``, starting with a letter).

        Raises:
            ValueError: the prefix breaks that rule.
        """
        if not _PREFIX_RE.match(prefix):
            raise InvalidFieldError(
                "prefix", f"must be 1-16 chars of [a-z0-9] starting with a letter: {prefix!r}"
            )
        self._prefix = prefix
        self._next = 0

    def new_local_id(self) -> str:
        """Return the next id in the sequence."""
        self._next += 1
        return f"{self._prefix}{self._next:0{_LOCAL_ID_LENGTH - len(self._prefix)}d}"


class FixedRandom:
    """A random source that always answers the same value."""

    def __init__(self, value: float = 0.5) -> None:
        """Answer ``value`` (in ``[0, 1)``) forever.

        Raises:
            ValueError: ``value`` is outside ``[0, 1)``.
        """
        if not 0.0 <= value < 1.0:
            raise InvalidFieldError("value", f"must be in [0, 1): {value}")
        self.value = value

    def random(self) -> float:
        """Return the fixed value."""
        return self.value
