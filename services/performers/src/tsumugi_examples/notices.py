"""``NotifyFailure`` and ``NotifySettled``: receivers of the scheduler's failure and settled notices.

They only log and return a one-line summary (kept as the notice job's result); a real deployment would post
to a chat or an incident tool here.
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec

from tsumugi_performer import JobContext, Performer

__all__ = ["FailureNotice", "NotifyFailure", "NotifySettled", "SettledNotice"]

_log = logging.getLogger("tsumugi_examples")


class FailureNotice(msgspec.Struct, frozen=True, kw_only=True):
    """A job ended FAILED or STALLED (docs/reference/additions.md A2)."""

    job_id: str
    binding: str
    state: str
    attempts: int
    max_attempts: int
    error: str | None
    run_id: str | None
    node_id: str | None
    failed_at: int


class SettledNotice(msgspec.Struct, frozen=True, kw_only=True):
    """A job ended in one of the configured states (docs/reference/additions.md A3)."""

    job_id: str
    binding: str
    state: str
    attempts: int
    max_attempts: int
    error: str | None
    result: Any
    run_id: str | None
    node_id: str | None
    settled_at: int


def _first_line(text: str | None) -> str:
    return "no error recorded" if not text else text.splitlines()[0]


class NotifyFailure(Performer[FailureNotice, str]):
    """Logs the failure; returns ``<state> <job_id> (<attempts>/<max_attempts>): <error's first line>``."""

    async def perform(self, payload: FailureNotice, ctx: JobContext) -> str:
        """Summarise the failure."""
        summary = (
            f"{payload.state} {payload.job_id} ({payload.attempts}/{payload.max_attempts}): "
            f"{_first_line(payload.error)}"
        )
        _log.warning("job failed: %s", summary)
        return summary


class NotifySettled(Performer[SettledNotice, str]):
    """Logs the outcome; returns ``<state> <job_id>``."""

    async def perform(self, payload: SettledNotice, ctx: JobContext) -> str:
        """Summarise the outcome."""
        return f"{payload.state} {payload.job_id}"
