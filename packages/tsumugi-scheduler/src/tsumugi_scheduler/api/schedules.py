"""Schedule routes (issue 12): list, create, read, change, delete, pause, resume, trigger.

Every route talks to the Scheduler shards (`ScheduleDirectory`); without a ``SCHEDULER`` binding they answer
the original's 501 ``schedules are not available``. Refusals carry ``{error}`` (``field`` and ``rule`` for
validation, the field spelled as the body spells it): 400 invalid, 404 unknown name, 409 a name that exists
or a code-defined schedule changed at run time.
"""

from __future__ import annotations

from typing import Any, Final

from starlette.requests import Request
from starlette.responses import Response

from tsumugi_core.json_path import InvalidValueError
from tsumugi_core.schedule_spec import ALLOWED_JOB_OPTIONS, SCHEDULE_NAME_RE
from tsumugi_scheduler.api.answers import ApiError, json_response
from tsumugi_scheduler.api.bodies import parse_object
from tsumugi_scheduler.api.context import api_of, env_of, first_values
from tsumugi_scheduler.api.enqueue_body import compatible_item
from tsumugi_scheduler.schedules.directory import ScheduleDirectory, SchedulesNotConfiguredError
from tsumugi_scheduler.schedules.fields import CAMEL
from tsumugi_scheduler.wire import integral

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


def _body(raw: bytes) -> dict[str, Any]:
    body = parse_object(raw)  # strict UTF-8, as every other body (it used to become U+FFFD)
    if body.get("backoff") is not None:
        # The enqueue body's backoff rules (each sent field obeys its range whatever the kind, ADR-0059).
        compatible_item({"binding": "_", "payload": None, "backoff": body["backoff"]})
    return body


async def _check_payload(request: Request, binding: Any, body: dict[str, Any], status: int = 400) -> None:
    """Refuse a job schedule's payload its performer's published type refuses, now rather than at each
    occurrence (a schedule whose every job fails; its trigger answered 502): the same check as an enqueue."""
    if not isinstance(binding, str) or "payload" not in body or "flow" in body:
        return
    try:
        # Integral floats read as ints, as the enqueue reads them: the payload crosses JavaScript on its way.
        await api_of(request).schemas.check(binding, integral(body["payload"]), env_of(request))
    except InvalidValueError as exc:
        field = exc.path("payload")
        raise ApiError(status, {"error": f"{field} {exc.rule}", "field": field, "rule": exc.rule}) from None


async def _check_change(
    request: Request, directory: ScheduleDirectory, name: str, body: dict[str, Any]
) -> None:
    """A change's payload against the schedule it changes. When the body names no binding, what it conflicts
    with is the stored schedule (a flow takes no payload; a binding's type), not the request alone: 409."""
    if "binding" in body and "flow" not in body:
        stored = await directory.get(name)
        if stored is not None and stored.get("binding") is None:
            rule = "cannot be set on a flow schedule: a schedule targets exactly one of them"
            raise ApiError(409, {"error": f"binding {rule}", "field": "binding", "rule": rule})
    options = [key for key in _JOB_OPTION_FIELDS if body.get(key) is not None]
    if options and "binding" not in body and "flow" not in body:
        stored = await directory.get(name)
        if stored is not None and stored.get("binding") is None:
            rule = "is not allowed with a flow: the flow's nodes set their options"
            raise ApiError(409, {"error": f"{options[0]} {rule}", "field": options[0], "rule": rule})
    if "payload" not in body:
        if isinstance(body.get("binding"), str):  # a new binding for the stored payload
            stored = await directory.get(name)
            if stored is not None and stored.get("binding") is not None:
                await _check_payload(request, body["binding"], {"payload": stored.get("payload")}, status=409)
        return
    if "binding" in body:
        await _check_payload(request, body["binding"], body)
        return
    stored = await directory.get(name)
    if stored is None:
        return  # the change itself answers 404
    if stored.get("binding") is None:
        rule = "is not allowed with a flow: send the run's input as input"
        raise ApiError(409, {"error": f"payload {rule}", "field": "payload", "rule": rule})
    await _check_payload(request, stored["binding"], body, status=409)


_JOB_OPTION_FIELDS: Final = tuple(CAMEL.get(option, option) for option in ALLOWED_JOB_OPTIONS)
"""A job schedule's options as a body spells them (``partitionKey`` ...)."""


def _answer(answer: dict[str, Any], status: int = 200) -> Response:
    if answer.get("ok") is not True:
        body = {k: v for k, v in answer.items() if k in ("error", "field", "rule") and v is not None}
        raise ApiError(int(answer.get("status", 400)), body)
    return json_response(status, answer)


MAX_PAGE: Final = 500
"""The most schedules one page holds."""


def _page_params(request: Request) -> tuple[str, int] | None:
    """``(after, limit)`` when the request asks for a page; None for every schedule (the original's list)."""
    params = first_values(request)
    if "limit" not in params and "after" not in params:
        return None
    text = params.get("limit", "100")
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= MAX_PAGE:
        rule = f"must be an integer from 1 to {MAX_PAGE}"
        raise ApiError(400, {"error": f"limit {rule}", "field": "limit", "rule": rule})
    return params.get("after", ""), int(text)


async def list_schedules(request: Request) -> Response:
    """``GET /api/schedules``: ``{"schedules": [...]}`` by name, with each one's next occurrences; with
    ``limit`` (1..500) and ``after`` (a name), one page and ``next``, the name to continue after (or null)."""
    directory = _directory(request)
    asked = _page_params(request)
    if asked is None:
        return json_response(200, {"schedules": await directory.list()})
    rows, after = await directory.page(*asked)
    return json_response(200, {"schedules": rows, "next": after})


async def create_schedule(request: Request) -> Response:
    """``POST /api/schedules``: 201 with the new schedule."""
    directory = _directory(request)
    body = _body(await request.body())
    await _check_payload(request, body.get("binding"), body)
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
    body = _body(await request.body())
    await _check_change(request, directory, name, body)
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
