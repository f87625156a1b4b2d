"""Stats from the read model and diagnostics from the shards.

Source: docs/reference/original.md §4.4, docs/reference/additions.md A10.

Diagnostics ask every shard of every binding directly (current, not lagged) what it holds and what held
dispatch back in its last tick. The original's shape (``shard: 0`` and, per binding, shard 0's ``active``,
``outbox`` and ``blocked`` booleans) is kept; ``shards`` adds every shard with counts per axis.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import Response

from tsumugi_scheduler.api.answers import json_response
from tsumugi_scheduler.api.context import ApiContext, api_of, env_of, first_values
from tsumugi_scheduler.readmodel import parse_job_query
from tsumugi_scheduler.readmodel import stats as read_model_stats
from tsumugi_scheduler.timing import time_source

__all__ = ["AXES", "diagnostics", "shard_view", "stats"]

AXES: Final = ("paused", "capacity", "rate", "per_key_concurrency", "per_key_rate")
"""What can hold ready jobs back, in the order dispatch checks them."""
_ACTIVE: Final = ("SCHEDULED", "QUEUED", "RUNNING")


async def stats(request: Request) -> Response:
    """``GET /api/stats``: ``{"byState": {...}, "oldestScheduledMs": n | null}``.

    ``exclude_bindings`` (comma-separated, as the job list takes it) leaves bindings out of the counts.
    """
    excluded = parse_job_query(first_values(request)).exclude_bindings
    now = time_source().now_ms()
    found = await read_model_stats(env_of(request).TSUMUGI_DB, now, exclude_bindings=excluded)
    return json_response(200, found)


def shard_view(shard: int, raw: Any) -> dict[str, Any]:
    """One shard's diagnostics answer as the API shows it, with the axes that hold jobs back now."""
    counts = {str(k): int(v) for k, v in dict(raw["counts"]).items()}
    blocked = {axis: int(dict(raw["blocked"]).get(axis, 0)) for axis in AXES}
    settings = dict(raw["settings"])
    if settings.get("paused"):
        # Paused since the last tick: nothing dispatches, whatever that tick counted, so every waiting job is
        # held back by the pause. The count says so too: "paused" is never named beside a paused count of 0
        # (ADR-0074).
        blocked["paused"] = max(blocked["paused"], counts.get("SCHEDULED", 0))
    held = [axis for axis in AXES if blocked[axis] > 0]
    return {
        "shard": shard,
        "active": sum(counts.get(s, 0) for s in _ACTIVE),
        "outbox": int(raw["changes_pending"]),
        "counts": counts,
        "notices_pending": int(raw["notices_pending"]),
        "run_events_pending": int(raw["run_events_pending"]),
        "blocked": blocked,
        "held_back_by": held,
        "settings": settings,
        "pinned": bool(raw["pinned"]),
    }


async def _binding(api: ApiContext, env: Any, binding: str) -> dict[str, Any]:
    names = api.shard_names(binding)
    answers = await asyncio.gather(*(api.stub(env, name).diagnostics(name) for name in names))
    shards = [shard_view(i, a) for i, a in enumerate(answers)]
    first = shards[0]
    return {
        "active": first["active"],
        "outbox": first["outbox"],
        "blocked": {
            "capacity": first["blocked"]["capacity"] > 0,
            "tokens": first["blocked"]["rate"] > 0,
            "perKey": first["blocked"]["per_key_concurrency"] + first["blocked"]["per_key_rate"] > 0,
        },
        "held_back_by": sorted({axis for s in shards for axis in s["held_back_by"]}, key=AXES.index),
        "pinned": any(s["pinned"] for s in shards),
        "shards": shards,
    }


async def diagnostics(request: Request) -> Response:
    """``GET /api/diagnostics``: per binding and shard, what currently holds jobs back."""
    api, env = api_of(request), env_of(request)
    bindings = await api.bindings(env)
    views = await asyncio.gather(*(_binding(api, env, b) for b in bindings))
    return json_response(200, {"shard": 0, "bindings": dict(zip(bindings, views, strict=True))})
