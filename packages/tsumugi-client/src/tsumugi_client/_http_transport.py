"""The HTTP transport: the scheduler's REST API over httpx, with a bearer token (scheduler-rpc.md §3).

Job ids travel percent-encoded as one path segment (``MAIL#0:abc`` -> ``MAIL%230%3Aabc``); without it the ``#``
would end the path. Statuses map to the same errors as the RPC transport (§4.3).
"""

from __future__ import annotations

from typing import Any, Final, cast
from urllib.parse import quote

import httpx
import msgspec

from tsumugi_client._errors import (
    INVALID_STATE_MESSAGE,
    JobNotFoundError,
    TsumugiClientError,
    refusal_error,
)
from tsumugi_client._views import CancelResult, JobDetail, decode_job_detail
from tsumugi_core.options import EnqueueValidationError

__all__ = ["HttpTransport"]

_MAX_ERROR_TEXT: Final = 500


def _decode(response: httpx.Response) -> dict[str, Any] | None:
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


def _error(response: httpx.Response, job_id: str | None = None) -> Exception:
    """The error a non-2xx answer stands for; ``job_id`` when the route addresses one job."""
    status = response.status_code
    body = _decode(response)
    is_json_object = body is not None
    message = _message(response, body)
    if status == 400 and body is not None:
        field, rule = body.get("field"), body.get("rule")
        if isinstance(field, str) and isinstance(rule, str):
            return EnqueueValidationError(field, rule)
    if status == 401:
        return TsumugiClientError(401, f"{message} (check the token given to create_client)")
    if status == 409:
        return TsumugiClientError(
            409, message if body and "error" in body else INVALID_STATE_MESSAGE, reason="invalid-state"
        )
    if job_id is not None and (status == 410 or (status == 404 and is_json_object)):
        return JobNotFoundError(job_id, status, message)
    if status == 404 and not is_json_object:
        # The scheduler answers plain-text 404 on every path when it has no auth configured (fail-closed).
        return TsumugiClientError(
            404, f"{message} (plain-text 404: is auth configured on the scheduler, and is base_url right?)"
        )
    return TsumugiClientError(status, message)


class HttpTransport:
    """Calls the scheduler's REST API at ``base_url`` with an ``httpx.AsyncClient``."""

    def __init__(self, base_url: str, token: str | None, http_client: httpx.AsyncClient | None) -> None:
        """Use ``http_client`` when given (the caller closes it), else a client of our own (see `aclose`)."""
        self._base_url = base_url.rstrip("/")
        self._headers = {"authorization": f"Bearer {token}"} if token is not None else {}
        self._owns_client = http_client is None
        self._client = http_client

    def _http(self) -> httpx.AsyncClient:
        # Made on first use, so creating a client (e.g. at module import in a Worker) opens nothing.
        if self._client is None:
            self._client = httpx.AsyncClient()
        return self._client

    def _url(self, *segments: str) -> str:
        # Each segment is encoded whole: a job id's "#" would otherwise end the path (scheduler-rpc.md §3).
        return "/".join([f"{self._base_url}/api/jobs", *(quote(segment, safe="") for segment in segments)])

    async def _send(self, method: str, url: str, body: Any = None) -> httpx.Response:
        headers = dict(self._headers)
        content: bytes | None = None
        if body is not None:
            content = msgspec.json.encode(body)
            headers["content-type"] = "application/json"
        try:
            return await self._http().request(method, url, content=content, headers=headers)
        except httpx.HTTPError as exc:
            raise TsumugiClientError(
                None, f"could not reach the scheduler at {self._base_url}: {exc!r}"
            ) from exc

    async def enqueue_many(self, env: object, items: list[dict[str, Any]]) -> list[str]:
        """One item: ``POST /api/jobs`` (the original's route); more: ``POST /api/jobs/bulk-enqueue``."""
        if len(items) == 1:
            response = await self._send("POST", self._url(), items[0])
            if not response.is_success:
                raise _item_error(_error(response))
            answer = _decode(response)
            ids: object = [answer.get("id")] if answer is not None else None
        else:
            response = await self._send("POST", self._url("bulk-enqueue"), {"items": items})
            if not response.is_success:
                raise _error(response)
            answer = _decode(response)
            ids = answer.get("ids") if answer is not None else None
        return _checked_ids(ids, len(items))

    async def get(self, env: object, job_id: str) -> JobDetail | None:
        """``GET /api/jobs/{id}``; a JSON 404 means the job is unknown (None)."""
        response = await self._send("GET", self._url(job_id))
        body = _decode(response)
        if response.status_code == 404 and body is not None:
            return None
        if not response.is_success:
            raise _error(response, job_id)
        if body is None or "job" not in body:
            raise TsumugiClientError(
                None, f"the scheduler answered GET {job_id} without a job: {response.text[:200]}"
            )
        return decode_job_detail(body["job"])

    async def _mutate(self, job_id: str, action: str, body: Any = None) -> dict[str, Any]:
        response = await self._send("POST", self._url(job_id, action), body)
        if not response.is_success:
            raise _error(response, job_id)
        answer = _decode(response) or {}
        if answer.get("ok") is False:
            raise refusal_error(job_id, answer.get("reason"))
        return answer

    async def cancel(self, env: object, job_id: str) -> CancelResult:
        """``POST /api/jobs/{id}/cancel``."""
        answer = await self._mutate(job_id, "cancel")
        return CancelResult(requested=answer.get("requested") is True)

    async def retry(self, env: object, job_id: str) -> None:
        """``POST /api/jobs/{id}/retry``."""
        await self._mutate(job_id, "retry")

    async def reschedule(self, env: object, job_id: str, body: dict[str, Any]) -> None:
        """``POST /api/jobs/{id}/reschedule``."""
        await self._mutate(job_id, "reschedule", body)

    async def aclose(self) -> None:
        """Close the connection pool if this transport created it."""
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None


def _item_error(error: Exception) -> Exception:
    """Name a single-item route's field as item 0 of the call, as the bulk route and RPC do."""
    if isinstance(error, EnqueueValidationError) and not error.field.startswith("items["):
        return EnqueueValidationError(f"items[0].{error.field}", error.rule)
    return error


def _checked_ids(ids: object, expected: int) -> list[str]:
    try:
        checked = msgspec.convert(ids, list[str])
    except msgspec.ValidationError:
        checked = None
    if checked is None or len(checked) != expected:
        raise TsumugiClientError(
            None, f"the scheduler answered an enqueue without {expected} job ids: {ids!r}"
        )
    return checked
