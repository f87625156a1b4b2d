"""Job routes: create, bulk-enqueue, list, detail, retry, cancel, reschedule, explain.

Source: docs/reference/original.md §4.3, C4.

Reads of lists come from the read model; a job's detail, mutations and explain go to the job's shard (the
source of truth), the detail falling back to the read model only for jobs the shard has swept.
"""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from tsumugi_core.options import EnqueueValidationError
from tsumugi_scheduler.api.action_log import actions_for
from tsumugi_scheduler.api.answers import GONE_JOB, ApiError, json_response, refusal, validation_error
from tsumugi_scheduler.api.bodies import parse_object, parse_reschedule
from tsumugi_scheduler.api.context import api_of, env_of, first_values
from tsumugi_scheduler.api.enqueue_body import item_error, spelled_item
from tsumugi_scheduler.api.job_list import list_page
from tsumugi_scheduler.api.spelling import Spelling
from tsumugi_scheduler.job_view import detail_from_read_model
from tsumugi_scheduler.readmodel import get_job as read_model_job
from tsumugi_scheduler.readmodel import parse_job_query

__all__ = [
    "bulk_enqueue",
    "cancel_job",
    "create_job",
    "explain_job",
    "get_job",
    "list_jobs",
    "reschedule_job",
    "retry_job",
]


def _job_id(request: Request) -> tuple[str, str]:
    job_id = str(request.path_params["id"])
    return job_id, api_of(request).served_shard(job_id)


def _not_found(job_id: str) -> ApiError:
    """404 ``not found`` (the original's text) with a ``detail`` that helps: an id cut at an unencoded ``#``
    reads as what it is, a well-formed id that no job has says so (issue 26)."""
    if "#" not in job_id or ":" not in job_id:
        detail = (
            f"{job_id!r} is not a whole job id (<binding>#<shard>:<local>): percent-encode the id in the URL "
            "(Hello%230%3Ak3v...), since a bare # starts the URL's fragment and the server never sees the "
            "rest"
        )
    else:
        detail = f"no job has the id {job_id!r}"
    return ApiError(404, {"error": "not found", "detail": detail})


def _read_job_id(request: Request) -> tuple[str, str]:
    """A read's job id: a malformed one names no job, so it is 404 (the original's getJob), not 400."""
    try:
        return _job_id(request)
    except ApiError as exc:
        if exc.status not in (400, 404):
            raise
        raise _not_found(str(request.path_params["id"])) from None


async def _mutation(request: Request, job_id: str, answer: dict[str, Any]) -> Response:
    """A shard's answer to a mutation; "gone" from the shard is 410 only when the read model still holds the
    job (it ended and was swept), else 404: an id no job ever had is not "removed after retention"."""
    if answer.get("reason") == "gone" and await read_model_job(env_of(request).TSUMUGI_DB, job_id) is None:
        raise _not_found(job_id)
    return refusal(answer)


async def create_job(request: Request) -> Response:
    """``POST /api/jobs``: one enqueue item (every option); 201 ``{"id"}``, also for a dedup hit."""
    body, spelling = spelled_item(parse_object(await request.body()))
    try:
        (job_id,) = await api_of(request).service(env_of(request)).enqueue_many([body])
    except EnqueueValidationError as exc:
        raise item_error(exc, [spelling], "items[0].") from None
    return json_response(201, {"id": job_id})


async def bulk_enqueue(request: Request) -> Response:
    """``POST /api/jobs/bulk-enqueue``: ``{"items": [...]}`` (1..500); 201 ``{"ids"}`` in input order."""
    body = parse_object(await request.body())
    for key in body:
        if key != "items":
            raise ApiError(
                400,
                {
                    "error": f"{key} is not a field (only items)",
                    "field": key,
                    "rule": "is not a field (only items)",
                },
            )
    if "items" not in body:
        raise ApiError(400, {"error": "items is required", "field": "items", "rule": "is required"})
    items: object = body["items"]
    spellings: list[Spelling] = []
    if isinstance(items, list):
        spelled = [spelled_item(raw, f"items[{i}].") for i, raw in enumerate(items)]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        items, spellings = [item for item, _ in spelled], [spelling for _, spelling in spelled]
    try:
        ids = await api_of(request).service(env_of(request)).enqueue_many(items)
    except EnqueueValidationError as exc:
        raise item_error(exc, spellings) from None
    return json_response(201, {"ids": ids})


async def list_jobs(request: Request) -> Response:
    """``GET /api/jobs``: filters, sort and paging with the original's lenient parsing; the total is capped."""
    api = api_of(request)
    listing = await list_page(
        env_of(request).TSUMUGI_DB, parse_job_query(first_values(request)), retry_window=api.retry_window()
    )
    return json_response(200, listing)


async def get_job(request: Request) -> Response:
    """``GET /api/jobs/{id}``: the shard's detail, else the read model's; 404 when neither holds it.

    ``actions`` lists who changed the job through the API, and its binding's policy, newest first.
    """
    job_id, _ = _read_job_id(request)
    api, env = api_of(request), env_of(request)
    detail = await api.service(env).get(job_id)
    if detail is None:
        row = await read_model_job(env.TSUMUGI_DB, job_id, retry_window=api.retry_window())
        detail = None if row is None else detail_from_read_model(row)
    if detail is None:
        raise _not_found(job_id)
    # Who cancelled, retried or rescheduled it, and who changed its binding's policy (ADR-0151).
    binding = job_id.split("#", 1)[0]
    actions = [
        *await actions_for(env.TSUMUGI_DB, job_id),
        *await actions_for(env.TSUMUGI_DB, f"binding:{binding}"),
    ]
    actions.sort(key=lambda a: a["at"], reverse=True)
    return json_response(200, {"job": detail, "actions": actions})


async def retry_job(request: Request) -> Response:
    """``POST /api/jobs/{id}/retry``: FAILED / STALLED -> SCHEDULED now."""
    job_id, _ = _job_id(request)
    return await _mutation(request, job_id, await api_of(request).service(env_of(request)).retry(job_id))


async def cancel_job(request: Request) -> Response:
    """``POST /api/jobs/{id}/cancel``: cancel, or ask a dispatched job to stop (``requested: true``)."""
    job_id, _ = _job_id(request)
    answer: dict[str, Any] = await api_of(request).service(env_of(request)).cancel(job_id)
    if answer.get("ok") is True:
        requested = bool(answer.get("requested"))
        # "cancelled" says what "requested: false" means: the job is CANCELLED already (issue 26 item 8).
        answer = {"ok": True, "requested": requested, "cancelled": not requested}
    return await _mutation(request, job_id, answer)


async def reschedule_job(request: Request) -> Response:
    """``POST /api/jobs/{id}/reschedule``: move a SCHEDULED job (runAt or delayMs, optional priority)."""
    job_id, _ = _job_id(request)
    body = parse_reschedule(await request.body())
    try:
        answer = await api_of(request).service(env_of(request)).reschedule(job_id, body.wire())
    except EnqueueValidationError as exc:
        raise validation_error(exc) from None
    return await _mutation(request, job_id, answer)


async def explain_job(request: Request) -> Response:
    """``GET /api/jobs/{id}/explain``: why the job is not running and when each blocker clears."""
    job_id, name = _read_job_id(request)
    api, env = api_of(request), env_of(request)
    found = await api.stub(env, name).explain(name, job_id)
    if found is None:
        if await read_model_job(env.TSUMUGI_DB, job_id) is not None:
            raise ApiError(410, {"ok": False, "reason": "gone", "error": GONE_JOB})
        raise _not_found(job_id)
    return json_response(200, {"explain": msgspec.to_builtins(found)})
