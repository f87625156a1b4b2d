"""The HTTP transport: the scheduler's REST API over httpx, with a bearer token.

Source: docs/design/scheduler-rpc.md §3.

Job ids travel percent-encoded as one path segment (``MAIL#0:abc`` -> ``MAIL%230%3Aabc``); without it the ``#``
would end the path. Statuses map to the same errors as the RPC transport (docs/design/scheduler-rpc.md §4.3).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
import msgspec

from tsumugi_client._errors import TsumugiClientError, UnavailableError, refusal_error
from tsumugi_client._http_errors import decode_body as _decode
from tsumugi_client._http_errors import error_of as _error
from tsumugi_client._http_errors import item_error as _item_error
from tsumugi_client._views import CancelResult, JobDetail, decode_job_detail

__all__ = ["HttpTransport"]


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
        # Each segment is encoded whole: a job id's "#" would otherwise end the path
        # (docs/design/scheduler-rpc.md §3).
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
            raise UnavailableError(
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

    async def send_event(self, env: object, body: dict[str, Any]) -> object:
        """``POST /api/events`` (ADR-0146)."""
        response = await self._send("POST", f"{self._base_url}/api/events", body)
        if not response.is_success:
            raise _error(response)
        return _decode(response)

    async def aclose(self) -> None:
        """Close the connection pool if this transport created it."""
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None


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
