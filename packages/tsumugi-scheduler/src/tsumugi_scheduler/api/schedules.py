"""Schedule routes (issue 12): list, create, read, change, delete, pause, resume, trigger.

Every route talks to the Scheduler shards (`ScheduleDirectory`); without a ``SCHEDULER`` binding they answer
the original's 501 ``schedules are not available``. Refusals carry ``{error}`` (``field`` and ``rule`` for
validation, the field spelled as the body spells it): 400 invalid, 404 unknown name, 409 a name that exists
or a code-defined schedule changed at run time.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from tsumugi_core.schedule_spec import SCHEDULE_NAME_RE
from tsumugi_scheduler.api.answers import ApiError, json_response
from tsumugi_scheduler.api.bodies import parse_object
from tsumugi_scheduler.api.context import api_of, env_of
from tsumugi_scheduler.api.enqueue_body import compatible_item
from tsumugi_scheduler.schedules.directory import ScheduleDirectory, SchedulesNotConfiguredError

__all__ = [
    "create_schedule",
    "delete_schedule",
    "get_schedule",
    "list_schedules",
    "pause_schedule",
    "resume_schedule",
    "trigger_schedule",
    "update_schedule",
]


def _directory(request: Request) -> ScheduleDirectory:
    try:
        return ScheduleDirectory(env_of(request), api_of(request).definition)
    except SchedulesNotConfiguredError:
        raise ApiError(501, {"error": "schedules are not available"}) from None


def _name(request: Request) -> str:
    name = str(request.path_params["name"])
    if not SCHEDULE_NAME_RE.fullmatch(name) or len(name) > 64:
        raise ApiError(404, {"error": f"schedule not found: {name}"})
    return name


def _body(text: str) -> dict[str, Any]:
    body = parse_object(text)
    if body.get("backoff") is not None:
        # The enqueue body's backoff rules (each sent field obeys its range whatever the kind, ADR-0059).
        compatible_item({"binding": "_", "payload": None, "backoff": body["backoff"]})
    return body


def _answer(answer: dict[str, Any], status: int = 200) -> Response:
    if answer.get("ok") is not True:
        body = {k: v for k, v in answer.items() if k in ("error", "field", "rule") and v is not None}
        raise ApiError(int(answer.get("status", 400)), body)
    return json_response(status, answer)


async def list_schedules(request: Request) -> Response:
    """``GET /api/schedules``: ``{"schedules": [...]}`` by name, with each one's next occurrences."""
    return json_response(200, {"schedules": await _directory(request).list()})


async def create_schedule(request: Request) -> Response:
    """``POST /api/schedules``: 201 with the new schedule."""
    directory = _directory(request)
    body = _body((await request.body()).decode(errors="replace"))
    return _answer(await directory.create(body), 201)


async def get_schedule(request: Request) -> Response:
    """``GET /api/schedules/{name}``."""
    name = _name(request)
    found = await _directory(request).get(name)
    if found is None:
        raise ApiError(404, {"error": f"schedule not found: {name}"})
    return json_response(200, found)


async def update_schedule(request: Request) -> Response:
    """``PATCH /api/schedules/{name}``: a run-time schedule's fields."""
    name = _name(request)
    directory = _directory(request)
    body = _body((await request.body()).decode(errors="replace"))
    return _answer(await directory.call("update", name, body))


async def delete_schedule(request: Request) -> Response:
    """``DELETE /api/schedules/{name}``: a run-time schedule."""
    return _answer(await _directory(request).call("delete", _name(request)))


async def pause_schedule(request: Request) -> Response:
    """``POST /api/schedules/{name}/pause``."""
    return _answer(await _directory(request).call("pause", _name(request)))


async def resume_schedule(request: Request) -> Response:
    """``POST /api/schedules/{name}/resume``."""
    return _answer(await _directory(request).call("resume", _name(request)))


async def trigger_schedule(request: Request) -> Response:
    """``POST /api/schedules/{name}/trigger``: one job now."""
    return _answer(await _directory(request).call("trigger", _name(request)))
