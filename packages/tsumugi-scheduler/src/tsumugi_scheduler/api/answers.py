"""JSON answers and the error bodies every route shares.

Source: docs/reference/original.md §4.1, docs/design/scheduler-rpc.md §3.1.

Handlers raise `ApiError` for a refusal; the app turns it into the response, so a handler reads as the
happy path. Texts are the original's where it fixed one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec
from starlette.responses import Response

from tsumugi_core.exceptions import TsumugiError
from tsumugi_core.options import EnqueueValidationError
from tsumugi_scheduler.producer_rpc import PinnedIdConflictError, ShardConflictError

__all__ = [
    "GONE_JOB",
    "INVALID_STATE",
    "ApiError",
    "bad_request",
    "json_response",
    "refusal",
    "text_not_found",
    "validation_error",
]

GONE_JOB: Final = "job is no longer available: removed from the coordinator after the retention period"
INVALID_STATE: Final = "not allowed in the current state"


def json_response(status: int, value: Any) -> Response:
    """``value`` (plain values or msgspec Structs) as a JSON response."""
    return Response(msgspec.json.encode(value), status_code=status, media_type="application/json")


def text_not_found() -> Response:
    """The plain-text 404 of paths outside the API, and of every path when auth is not configured."""
    return Response("not found", status_code=404, media_type="text/plain")


class ApiError(TsumugiError):
    """A refusal with its HTTP status and JSON body."""

    def __init__(self, status: int, body: Mapping[str, Any]) -> None:
        super().__init__(f"{status} {body.get('error', '')}")
        self.status = status
        self.body = dict(body)

    def response(self) -> Response:
        """The HTTP answer."""
        return json_response(self.status, self.body)


def bad_request(message: str) -> ApiError:
    """A 400 ``{"error": message}`` (the original's validation messages)."""
    return ApiError(400, {"error": message})


def validation_error(error: EnqueueValidationError, strip: str = "") -> ApiError:
    """A 400 naming the field and the rule; ``strip`` drops a field prefix.

    The body is docs/design/scheduler-rpc.md §3.1.

    A ``shard`` the caller computed from another bindings config is well-formed input that conflicts with
    this scheduler's configuration: 409, with the same body (ADR-0059).
    """
    field = error.field.removeprefix(strip) if strip else error.field
    status = 409 if isinstance(error, ShardConflictError | PinnedIdConflictError) else 400
    return ApiError(status, {"error": f"{field} {error.rule}", "field": field, "rule": error.rule})


def refusal(answer: Mapping[str, Any]) -> Response:
    """A shard's mutation answer as HTTP: 200 as is, 410 for ``gone``, 409 otherwise."""
    if answer.get("ok") is True:
        return json_response(200, dict(answer))
    if answer.get("reason") == "gone":
        raise ApiError(410, {"ok": False, "reason": "gone", "error": GONE_JOB})
    raise ApiError(
        409, {"ok": False, "reason": "invalid-state", "error": str(answer.get("error") or INVALID_STATE)}
    )
