"""``POST /api/events``: send an event to the jobs waiting for it (ADR-0146)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import Response

from tsumugi_core.events import EVENT_KEY_MAX
from tsumugi_core.options import EnqueueValidationError
from tsumugi_core.steps import STEP_NAME_MAX
from tsumugi_scheduler.api.answers import ApiError, json_response
from tsumugi_scheduler.api.bodies import parse_object
from tsumugi_scheduler.api.context import env_of
from tsumugi_scheduler.api.models import JsonValue
from tsumugi_scheduler.event_service import EVENT_ID_MAX, send_event

__all__ = ["EventBody", "post_event"]


class EventBody(BaseModel):
    """An event: ``name`` and ``key`` address the waiting jobs; ``id`` makes a resend harmless."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=STEP_NAME_MAX - 8, pattern=r"^[A-Za-z0-9_.:/\- ]+$")
    key: str = Field(min_length=1, max_length=EVENT_KEY_MAX)
    payload: JsonValue = Field(default=JsonValue(None), description="Any JSON value, null when absent.")
    id: str | None = Field(default=None, min_length=1, max_length=EVENT_ID_MAX)


_FIELDS = frozenset(EventBody.model_fields)


async def post_event(request: Request) -> Response:
    """Send the event; 202 with its id, the number of jobs it went to, and until when it is kept."""
    body: dict[str, Any] = parse_object(await request.body())
    unknown = sorted(set(body) - _FIELDS)
    if unknown:
        raise ApiError(
            400,
            {
                "error": f"{unknown[0]} is not a known field",
                "field": unknown[0],
                "rule": "is not a known field",
            },
        )
    for field in ("name", "key"):
        if field not in body:
            raise ApiError(400, {"error": f"{field} is required", "field": field, "rule": "is required"})
    try:
        answer = await send_event(
            env_of(request), body["name"], body["key"], body.get("payload"), body.get("id")
        )
    except EnqueueValidationError as exc:
        raise ApiError(
            400, {"error": f"{exc.field} {exc.rule}", "field": exc.field, "rule": exc.rule}
        ) from None
    return json_response(202, answer)
