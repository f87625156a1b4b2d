"""``POST /api/runs``, ``/api/runs/{id}/retry`` and ``/cancel``: straight to the Run object.

Source: docs/reference/original.md §4.5.
"""

from __future__ import annotations

from typing import Any, Final

from starlette.requests import Request
from starlette.responses import Response

from tsumugi_core.ids import InvalidRunIdError
from tsumugi_scheduler.api.answers import INVALID_STATE, ApiError, bad_request, json_response
from tsumugi_scheduler.api.bodies import parse_object
from tsumugi_scheduler.api.context import api_of, env_of
from tsumugi_scheduler.run_service import (
    RunInputError,
    RunStartError,
    RunUnavailableError,
    cancel_run,
    retry_run,
    start_run,
)

__all__ = ["GONE_RUN", "cancel", "retry", "start"]

GONE_RUN: Final = "run not found (deleted after its retention, or never started)"


async def start(request: Request) -> Response:
    """Start a run: 201 ``{"id"}``; 400 with the original's messages; 501 without flows."""
    definition = api_of(request).definition
    if not definition.flows:
        raise ApiError(501, {"error": "run creation is not available"})
    body = parse_object(await request.body())  # bytes: a body that is not UTF-8 is refused, not repaired
    try:
        run_id = await start_run(env_of(request), definition, body)
    except RunInputError as exc:  # the shape of a job payload's refusal (ADR-0075)
        raise ApiError(400, {"error": str(exc), "field": exc.field, "rule": exc.rule}) from None
    except RunStartError as exc:
        raise bad_request(str(exc)) from None
    except RunUnavailableError:
        raise ApiError(501, {"error": "run creation is not available"}) from None
    return json_response(201, {"id": run_id})


def _answer(answer: dict[str, Any]) -> Response:
    if answer.get("ok") is True:
        return json_response(200, {"ok": True})
    if answer.get("reason") == "gone":
        raise ApiError(410, {"ok": False, "reason": "gone", "error": GONE_RUN})
    raise ApiError(
        409, {"ok": False, "reason": "invalid-state", "error": str(answer.get("error") or INVALID_STATE)}
    )


async def _control(request: Request, action: str) -> Response:
    definition = api_of(request).definition
    run_id = str(request.path_params["id"])
    try:
        call = retry_run if action == "retry" else cancel_run
        return _answer(await call(env_of(request), definition, run_id))
    except RunUnavailableError:
        raise ApiError(501, {"error": "run control is not available"}) from None
    except InvalidRunIdError:
        raise bad_request("invalid run id") from None


async def retry(request: Request) -> Response:
    """Resume a FAILED run: 200 / 400 / 409 / 410 / 501."""
    return await _control(request, "retry")


async def cancel(request: Request) -> Response:
    """Cancel a RUNNING run: 200 / 400 / 409 / 410 / 501."""
    return await _control(request, "cancel")
