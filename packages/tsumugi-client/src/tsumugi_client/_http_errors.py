"""What a REST answer means: the JSON body, and the typed error a non-2xx status stands for.

Shared by every HTTP client (the Worker client's HTTP transport, `TsumugiClient`, `AsyncTsumugiClient`), so a
status maps to the same error everywhere (docs/design/scheduler-rpc.md §4.3):

| status | error |
| --- | --- |
| 400 with ``field`` / ``rule`` | `EnqueueValidationError` (field as the request spelled it) |
| 401, 403 | `AuthError` |
| 404 (JSON) / 410 on a job route | `JobNotFoundError` |
| 409 | `ConflictError` (``field`` when the scheduler named one) |
| 502, 503, 504 | `UnavailableError` |
| anything else | `TsumugiClientError` |
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, cast

import msgspec

from tsumugi_client._errors import (
    INVALID_STATE_MESSAGE,
    AuthError,
    ConflictError,
    JobNotFoundError,
    TsumugiClientError,
    UnavailableError,
)
from tsumugi_core.options import EnqueueValidationError

if TYPE_CHECKING:
    import httpx  # annotations only: the HTTP clients import it (ADR-0107)

__all__ = ["RETRYABLE_STATUSES", "decode_body", "error_of", "item_error"]

RETRYABLE_STATUSES: Final = frozenset({502, 503, 504})
"""Answers that say "not now" (a proxy or the platform), worth another try after a pause."""

_MAX_ERROR_TEXT: Final = 500


def decode_body(response: httpx.Response) -> dict[str, Any] | None:
    """The body when it is a JSON object (every JSON answer of the API is), else None."""
    try:
        body = msgspec.json.decode(response.content)
    except msgspec.DecodeError:
        return None
    return cast("dict[str, Any]", body) if isinstance(body, dict) else None


def _message(response: httpx.Response, body: dict[str, Any] | None) -> str:
    if body is not None and isinstance(body.get("error"), str):
        return str(body["error"])
    return response.text[:_MAX_ERROR_TEXT] or response.reason_phrase


def error_of(response: httpx.Response, job_id: str | None = None) -> Exception:
    """The error a non-2xx answer stands for; ``job_id`` when the route addresses one job."""
    status = response.status_code
    body = decode_body(response)
    message = _message(response, body)
    field = body.get("field") if body is not None else None
    if status == 400 and body is not None and isinstance(field, str) and isinstance(body.get("rule"), str):
        return EnqueueValidationError(field, str(body["rule"]))
    if status in (401, 403):
        return AuthError(status, f"{message} (check the token given to the client)")
    if status == 409:
        # The server's words when it gave any (a proxy's text too); the documented text for a bare refusal.
        said = (body is not None and "error" in body) or (body is None and bool(response.text.strip()))
        text = message if said else INVALID_STATE_MESSAGE
        reason = None if isinstance(field, str) else "invalid-state"
        return ConflictError(text, reason=reason, field=field if isinstance(field, str) else None)
    if job_id is not None and (status == 410 or (status == 404 and body is not None)):
        return JobNotFoundError(job_id, status, message)
    if status == 404 and body is None:
        # The scheduler answers plain-text 404 on every path when it has no auth configured (fail-closed).
        return TsumugiClientError(
            404, f"{message} (plain-text 404: is auth configured on the scheduler, and is base_url right?)"
        )
    if status in RETRYABLE_STATUSES:
        return UnavailableError(status, message)
    return TsumugiClientError(status, message)


def item_error(error: Exception) -> Exception:
    """Name a single-item route's field as item 0 of the call, as the bulk route and RPC do."""
    if isinstance(error, EnqueueValidationError) and not error.field.startswith("items["):
        return EnqueueValidationError(f"items[0].{error.field}", error.rule)
    return error
