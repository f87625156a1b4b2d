"""The cron handler's work: sweep old finished jobs (and runs) out of the D1 read model."""

from __future__ import annotations

import logging
from typing import Any

from tsumugi_scheduler.definition import TsumugiDefinition
from tsumugi_scheduler.readmodel import SweepResult, sweep
from tsumugi_scheduler.timing import time_source

__all__ = ["sweep_read_model"]

_log = logging.getLogger("tsumugi_scheduler")


async def sweep_read_model(env: Any, definition: TsumugiDefinition) -> SweepResult:
    """Delete terminal rows older than the definition's retention, at most its limit per run."""
    options = definition.sweep
    result = await sweep(
        env.TSUMUGI_DB, time_source().now_ms(), older_than_ms=options.older_than_ms, limit=options.limit
    )
    _log.info("read-model sweep: %d jobs, %d runs, %d nodes deleted", result.jobs, result.runs, result.nodes)
    return result
