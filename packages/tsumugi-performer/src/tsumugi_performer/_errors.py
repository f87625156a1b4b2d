"""Errors a performer raises to steer retries (docs/reference/additions.md A8), and the payload error.

Raising anything else means "this attempt failed, retry with the binding's backoff". The shard still enforces
`max_attempts` and cancellation whatever the performer asks for.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import re
from typing import Final

from tsumugi_core.exceptions import InvalidFieldError, TsumugiError
from tsumugi_core.time_values import Duration, Instant, duration_ms, instant_ms

__all__ = ["InvalidPayloadError", "NonRetryableError", "RetryAfterError"]

_SECONDS_RE: Final = re.compile(r"[0-9]+")


class NonRetryableError(TsumugiError):
    """Do not retry: the job fails now, whatever attempts are left (e.g. the mailbox does not exist)."""


class InvalidPayloadError(NonRetryableError):
    """The payload does not decode into the performer's declared payload type; retrying cannot help.

    Attributes:
        performer: The performer class name.
        detail: msgspec's description, naming the field and the rule (e.g. ``Expected `int`, got `str` - at
            `$.count```).
    """

    def __init__(self, performer: str, detail: str) -> None:
        super().__init__(f"invalid payload for {performer}: {detail}")
        self.performer = performer
        self.detail = detail


def _check_instant(name: str, value: object) -> int:
    # bool is an int subclass, but True milliseconds is a caller bug.
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidFieldError(name, f"must be a non-negative integer (milliseconds), got {value!r}")
    return value


class RetryAfterError(TsumugiError):
    """Retry this job, but not before a given delay or instant (for example a 429's Retry-After).

    Give exactly one of `delay_ms` (from the end of this attempt; milliseconds or a `timedelta`) or `at` (epoch
    milliseconds or an aware `datetime`).

    Example:
        >>> RetryAfterError("rate limited", delay_ms=30_000).retry_at(1_000)
        31000
    """

    def __init__(
        self, message: str = "retry later", *, delay_ms: Duration | None = None, at: Instant | None = None
    ) -> None:
        """Build the error.

        Raises:
            ValueError: Neither or both of `delay_ms` and `at` were given, or one is not a non-negative integer.
        """
        if (delay_ms is None) == (at is None):
            raise InvalidFieldError(
                "delay_ms",
                "or at is required, not both",
                message="RetryAfterError needs exactly one of delay_ms and at",
            )
        super().__init__(message)
        self.delay_ms = (
            None if delay_ms is None else _check_instant("delay_ms", duration_ms("delay_ms", delay_ms))
        )
        self.at = None if at is None else _check_instant("at", instant_ms("at", at))

    def retry_at(self, now_ms: int) -> int:
        """The earliest instant (epoch ms) of the next attempt, for an attempt that ended at `now_ms`."""
        if self.at is not None:
            return self.at
        assert self.delay_ms is not None  # the constructor guarantees one of the two
        return now_ms + self.delay_ms

    @classmethod
    def from_retry_after(cls, header: str, message: str = "retry later") -> RetryAfterError:
        """Build the error from an HTTP ``Retry-After`` value: delay seconds or an HTTP date.

        Example:
            >>> RetryAfterError.from_retry_after("120").delay_ms
            120000
            >>> RetryAfterError.from_retry_after("Thu, 01 Jan 1970 00:01:00 GMT").at
            60000

        Raises:
            ValueError: The value is neither form.
        """
        text = header.strip()
        if _SECONDS_RE.fullmatch(text):
            return cls(message, delay_ms=int(text) * 1000)
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            raise InvalidFieldError(
                "Retry-After", f"must be delay seconds or an HTTP date, got {header!r}"
            ) from None
        # An HTTP date is always GMT; a date without a zone is read as UTC rather than local time.
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        return cls(message, at=max(0, int(when.timestamp() * 1000)))
