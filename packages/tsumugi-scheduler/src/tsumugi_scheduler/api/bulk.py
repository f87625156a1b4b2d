"""``POST /api/jobs/bulk-retry`` and ``/bulk-cancel``: by ids or by filter, 200 at most.

Source: docs/reference/original.md §4.3.

The read model only chooses targets (oldest first); each shard re-checks every job's state in one
``mutate_many`` transaction, shards in parallel. Refusals are listed per id and never fail the call.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from tsumugi_core.ids import parse_job_id, shard_name
from tsumugi_scheduler.api.answers import json_response
from tsumugi_scheduler.api.bodies import BulkAction, parse_bulk
from tsumugi_scheduler.api.context import ApiContext, api_of, env_of
from tsumugi_scheduler.readmodel import select_ids_for_bulk

__all__ = ["bulk_cancel", "bulk_retry", "mutate_by_shard"]


async def mutate_by_shard(
    api: ApiContext, env: Any, action: BulkAction, ids: list[str], states: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """``{"ok": [...], "failed": [{"id", "reason"}]}`` for ``ids``, in input order.

    Ids this scheduler cannot hold (malformed, or of a binding or shard it lacks) are ``invalid-id``. With
    ``states`` (a filter's), a job its shard holds in another state is ``invalid-state``: the read model that
    chose it can be behind the shard.
    """
    groups: dict[str, list[str]] = {}
    failed: list[dict[str, str]] = []
    for job_id in dict.fromkeys(ids):  # a repeated id is acted on once
        if not api.serves(job_id):  # malformed, or a binding / shard this scheduler lacks: no object is made
            failed.append({"id": job_id, "reason": "invalid-id"})
            continue
        parsed = parse_job_id(job_id)
        groups.setdefault(shard_name(parsed.binding, parsed.shard), []).append(job_id)

    async def one(name: str, members: list[str]) -> Any:
        return await api.stub(env, name).mutate_many(
            name, action, members, None if states is None else list(states)
        )

    answers = await asyncio.gather(*(one(name, members) for name, members in groups.items()))
    done: set[str] = set()
    for answer in answers:
        done.update(str(i) for i in answer["ok"])
        failed.extend({"id": str(f["id"]), "reason": str(f["reason"])} for f in answer["failed"])
    position = {job_id: i for i, job_id in enumerate(ids)}
    failed.sort(key=lambda f: position.get(f["id"], 0))
    return {"ok": [i for i in dict.fromkeys(ids) if i in done], "failed": failed}


async def _bulk(request: Request, action: BulkAction) -> Response:
    target = parse_bulk(await request.body(), action)
    api, env = api_of(request), env_of(request)
    remaining = 0
    ids = target.ids
    states = None
    if ids is None:
        assert target.filters is not None  # filter mode
        selection = await select_ids_for_bulk(env.TSUMUGI_DB, target.filters, target.limit)
        ids, remaining, states = selection.ids, selection.remaining, target.filters.states
    answer = await mutate_by_shard(api, env, action, ids, states)
    return json_response(200, {**answer, "remaining": remaining})


async def bulk_retry(request: Request) -> Response:
    """Retry FAILED / STALLED jobs (by ids, or by filter: state FAILED or STALLED, default both)."""
    return await _bulk(request, "retry")


async def bulk_cancel(request: Request) -> Response:
    """Cancel jobs (by ids, or by filter: state SCHEDULED)."""
    return await _bulk(request, "cancel")
