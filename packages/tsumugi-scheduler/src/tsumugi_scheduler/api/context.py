"""What every route reads: the Worker's env of this request and the scheduler's definition.

The ASGI scope carries ``env`` (``workers.asgi.fetch(app, request, env)`` puts it there); the app state carries
the `ApiContext` made once per isolate.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from starlette.requests import Request

from tsumugi_core.ids import InvalidJobIdError, parse_job_id, shard_name
from tsumugi_scheduler.api.answers import ApiError, bad_request
from tsumugi_scheduler.api.plain_calls import PlainStub, shard_env
from tsumugi_scheduler.definition import TsumugiDefinition
from tsumugi_scheduler.payload_schemas import PayloadSchemas
from tsumugi_scheduler.producer_rpc import SchedulerService
from tsumugi_scheduler.readmodel import RetryWindow, distinct_bindings
from tsumugi_scheduler.timing import time_source

__all__ = ["ApiContext", "api_of", "env_of", "first_values", "job_shard_of"]


def first_values(request: Request) -> dict[str, str]:
    """The query string's parameters, the first value of a repeated name winning (as Hono's ``c.req.query``)."""
    values: dict[str, str] = {}
    for name, value in urllib.parse.parse_qsl(request.url.query, keep_blank_values=True):
        values.setdefault(name, value)
    return values


def env_of(request: Request) -> Any:
    """The Worker's env for this request."""
    return request.scope["env"]


def job_shard_of(job_id: str) -> str:
    """The shard name of a path's job id (its syntax only; see `ApiContext.served_shard`).

    Raises:
        ApiError: 400 ``invalid job id``.
    """
    try:
        parsed = parse_job_id(job_id)
    except InvalidJobIdError:
        raise bad_request("invalid job id") from None
    return shard_name(parsed.binding, parsed.shard)


class ApiContext:
    """The scheduler's definition plus the helpers routes share."""

    def __init__(self, definition: TsumugiDefinition) -> None:
        """Serve ``definition``'s bindings."""
        self.definition = definition
        self.schemas = PayloadSchemas()
        """The performers' payload schemas, cached for the isolate (ADR-0075)."""

    def service(self, env: Any) -> SchedulerService:
        """The producer surface (enqueue, get, mutations) over ``env``, with plain JobShard results."""
        return SchedulerService(shard_env(env), self.definition, self.schemas)

    def stub(self, env: Any, name: str) -> PlainStub:
        """The JobShard object ``name`` (``<binding>#<shard>``); awaited results are plain values."""
        return PlainStub(env.JOB_SHARD.getByName(name))

    def serves(self, job_id: str) -> bool:
        """True when ``job_id`` is well formed and names a shard this scheduler has.

        A registered binding (any binding when none is registered) and a shard number below its shard
        count. Anything else must not reach the namespace: ``getByName`` would create a Durable Object.
        """
        try:
            parsed = parse_job_id(job_id)
        except InvalidJobIdError:
            return False
        return self.definition.is_registered(parsed.binding) and parsed.shard < self.definition.shards_of(
            parsed.binding
        )

    def served_shard(self, job_id: str) -> str:
        """The shard name of a path's job id.

        Raises:
            ApiError: 400 ``invalid job id``; 404 ``not found`` for a binding or shard this scheduler lacks.
        """
        name = job_shard_of(job_id)
        if not self.serves(job_id):
            raise ApiError(404, {"error": "not found"})
        return name

    def retry_window(self) -> RetryWindow:
        """The request instant and each configured binding's failed retention, for ``retryable``."""
        by_binding: dict[str, int] = {}
        for binding in self.definition.performers:
            settings = self.definition.settings_of(binding)
            if settings is not None:
                by_binding[binding] = settings.retention.failed_retention_ms
        return RetryWindow(now=time_source().now_ms(), by_binding=by_binding)

    async def bindings(self, env: Any) -> list[str]:
        """Registered performers, sorted; the read model's bindings when none are registered."""
        if self.definition.performers:
            return sorted(self.definition.performers)
        return await distinct_bindings(env.TSUMUGI_DB)

    def shard_names(self, binding: str) -> list[str]:
        """Every shard of ``binding``."""
        return [shard_name(binding, shard) for shard in range(self.definition.shards_of(binding))]

    async def known_binding(self, env: Any, binding: str) -> str:
        """``binding`` when the scheduler serves it.

        Raises:
            ApiError: 404 ``unknown binding: X``.
        """
        if binding not in await self.bindings(env):
            raise ApiError(404, {"error": f"unknown binding: {binding}"})
        return binding


def api_of(request: Request) -> ApiContext:
    """The app's `ApiContext`."""
    context: ApiContext = request.app.state.api
    return context
