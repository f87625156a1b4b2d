"""The REST endpoints a newcomer needs first (scheduler-rpc.md §3), behind bearer-token auth.

Routes: ``POST /api/jobs``, ``POST /api/jobs/bulk-enqueue``, ``GET /api/jobs/{id}``, ``GET /api/jobs``,
``POST /api/jobs/{id}/cancel|retry|reschedule``. The token is the Worker's ``TSUMUGI_TOKEN``; when it is
unset every ``/api`` request is refused (fail-closed), and paths outside ``/api`` answer plain ``404``.

Requests and answers are plain values (`HttpRequest`, `HttpAnswer`); ``_runtime`` converts them from and to
the Workers SDK's ``Request`` and ``Response``.
"""

from __future__ import annotations

import hmac
import json
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import Any, Final

import msgspec

from tsumugi_core.ids import InvalidJobIdError, parse_job_id
from tsumugi_core.options import EnqueueValidationError
from tsumugi_scheduler.definition import TsumugiDefinition
from tsumugi_scheduler.job_view import detail_from_read_model
from tsumugi_scheduler.producer_rpc import SchedulerService
from tsumugi_scheduler.readmodel import RetryWindow, get_job, list_jobs, parse_job_query
from tsumugi_scheduler.timing import time_source

__all__ = ["HttpAnswer", "HttpRequest", "RestApi"]

_GONE: Final = "job is no longer available: removed from the coordinator after the retention period"
_INVALID_STATE: Final = "not allowed in the current state"


class HttpRequest(msgspec.Struct, frozen=True, kw_only=True):
    """An HTTP request: method, full URL, lower-cased headers, body text."""

    method: str
    url: str
    headers: dict[str, str]
    body: str = ""


class HttpAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """An HTTP response: status, body text, content type."""

    status: int
    body: str
    content_type: str = "application/json"


def _json(status: int, value: Any) -> HttpAnswer:
    return HttpAnswer(status=status, body=json.dumps(value))


def _validation(error: EnqueueValidationError, strip: str = "") -> HttpAnswer:
    field = error.field[len(strip) :] if strip and error.field.startswith(strip) else error.field
    return _json(400, {"error": f"{field} {error.rule}", "field": field, "rule": error.rule})


def _refusal(answer: dict[str, Any]) -> HttpAnswer:
    if answer.get("ok") is True:
        return _json(200, answer)
    if answer.get("reason") == "gone":
        return _json(410, {"ok": False, "reason": "gone", "error": _GONE})
    return _json(409, {"ok": False, "reason": "invalid-state", "error": _INVALID_STATE})


def _path_and_query(url: str) -> tuple[str, str]:
    # Not urlsplit: a front end that hands over the decoded path leaves a raw "#" of a job id in the URL,
    # which urlsplit would take for a fragment. A percent-encoded id reads the same either way.
    rest = url.split("://", 1)[-1]
    slash = rest.find("/")
    path, _, query = (rest[slash:] if slash >= 0 else "/").partition("?")
    return path, query


def _authorized(request: HttpRequest, token: str | None) -> bool:
    if not token:
        return False  # no secret configured: fail closed
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    # Constant-time comparison, length included.
    return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), token.encode())


Handler = Callable[[HttpRequest, str], Awaitable[HttpAnswer]]


class RestApi:
    """The routes over one `SchedulerService` and the read model of ``env.TSUMUGI_DB``."""

    def __init__(self, env: Any, definition: TsumugiDefinition) -> None:
        """Serve with the bindings and vars of ``env``."""
        self._env = env
        self._definition = definition
        self._service = SchedulerService(env, definition)

    async def handle(self, request: HttpRequest) -> HttpAnswer:
        """Answer one request; never raises (a fault is a 500 with the error text)."""
        path, _ = _path_and_query(request.url)
        if not path.startswith("/api/"):
            return HttpAnswer(status=404, body="not found", content_type="text/plain")
        if not _authorized(request, getattr(self._env, "TSUMUGI_TOKEN", None)):
            return _json(401, {"error": "unauthorized"})
        try:
            return await self._route(request, path)
        except EnqueueValidationError as exc:
            return _validation(exc)
        except Exception as exc:
            return _json(500, {"error": f"{type(exc).__name__}: {exc}"})

    async def _route(self, request: HttpRequest, path: str) -> HttpAnswer:
        parts = path.split("/")[2:]  # after "/api/"
        if parts == ["jobs"]:
            return await (self._create(request) if request.method == "POST" else self._list(request))
        if parts == ["jobs", "bulk-enqueue"] and request.method == "POST":
            return await self._bulk(request)
        if len(parts) == 2 and parts[0] == "jobs" and request.method == "GET":
            return await self._get(urllib.parse.unquote(parts[1]))
        if len(parts) == 3 and parts[0] == "jobs" and request.method == "POST":
            return await self._mutate(request, urllib.parse.unquote(parts[1]), parts[2])
        return _json(404, {"error": "not found"})

    @staticmethod
    def _body(request: HttpRequest) -> Any:
        try:
            return json.loads(request.body or "null")
        except ValueError:
            raise _BadJson from None

    async def _create(self, request: HttpRequest) -> HttpAnswer:
        try:
            body = self._body(request)
            (job_id,) = await self._service.enqueue_many([body])
        except _BadJson:
            return _json(400, {"error": "body must be valid JSON"})
        except EnqueueValidationError as exc:
            return _validation(exc, "items[0].")
        return _json(201, {"id": job_id})

    async def _bulk(self, request: HttpRequest) -> HttpAnswer:
        try:
            body = self._body(request)
        except _BadJson:
            return _json(400, {"error": "body must be valid JSON"})
        if not isinstance(body, dict) or "items" not in body:
            return _json(400, {"error": "items is required", "field": "items", "rule": "is required"})
        ids = await self._service.enqueue_many(body["items"])  # pyright: ignore[reportUnknownArgumentType]
        return _json(201, {"ids": ids})

    async def _get(self, job_id: str) -> HttpAnswer:
        try:
            parse_job_id(job_id)
        except InvalidJobIdError:
            return _json(400, {"error": "invalid job id"})
        detail = await self._service.get(job_id)
        if detail is None:
            row = await get_job(self._env.TSUMUGI_DB, job_id, retry_window=self._window())
            detail = None if row is None else detail_from_read_model(row)
        if detail is None:
            return _json(404, {"error": "not found"})
        return _json(200, {"job": detail})

    def _window(self) -> RetryWindow:
        by_binding: dict[str, int] = {}
        for binding in self._definition.performers:
            settings = self._definition.settings_of(binding)
            if settings is not None:
                by_binding[binding] = settings.retention.failed_retention_ms
        return RetryWindow(now=time_source().now_ms(), by_binding=by_binding)

    async def _list(self, request: HttpRequest) -> HttpAnswer:
        if request.method != "GET":
            return _json(404, {"error": "not found"})
        params = dict(urllib.parse.parse_qsl(_path_and_query(request.url)[1]))
        listing = await list_jobs(self._env.TSUMUGI_DB, parse_job_query(params), retry_window=self._window())
        return _json(200, msgspec.to_builtins(listing))

    async def _mutate(self, request: HttpRequest, job_id: str, action: str) -> HttpAnswer:
        try:
            parse_job_id(job_id)
        except InvalidJobIdError:
            return _json(400, {"error": "invalid job id"})
        if action == "cancel":
            return _refusal(await self._service.cancel(job_id))
        if action == "retry":
            return _refusal(await self._service.retry(job_id))
        if action == "reschedule":
            try:
                body = self._body(request)
            except _BadJson:
                return _json(400, {"error": "body must be valid JSON"})
            return _refusal(await self._service.reschedule(job_id, body))
        return _json(404, {"error": "not found"})


class _BadJson(Exception):
    """The request body is not JSON."""
