"""Request bodies people type, as pydantic models: the OpenAPI document's request schemas.

The handlers read bodies with `tsumugi_scheduler.api.bodies` (the original's exact messages, and enqueue
items through the scheduler's own validation); these models describe the same bodies for clients and for
the schemathesis run, which sends bodies generated from them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

__all__ = [
    "BackoffBody",
    "BulkBody",
    "BulkEnqueueBody",
    "EnqueueBody",
    "PolicyBody",
    "RateBody",
    "RescheduleBody",
]

_SAFE = 2**53 - 1


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BackoffBody(_Body):
    """``{"kind": "fixed", "delayMs"}`` or ``{"kind": "exponential", "baseMs", "factor", "maxMs"}``."""

    kind: Literal["fixed", "exponential"]
    delayMs: int | None = Field(default=None, ge=0, le=_SAFE)
    baseMs: int | None = Field(default=None, ge=0, le=_SAFE)
    factor: float | None = Field(default=None, ge=1)
    maxMs: int | None = Field(default=None, ge=0, le=_SAFE)
    jitter: bool | None = None


class EnqueueBody(_Body):
    """One enqueue item (scheduler-rpc.md §2.1): only ``binding`` and ``payload`` are required."""

    binding: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    payload: Any = Field(description="Any JSON value, null included.")
    priority: int | None = Field(default=None, ge=-_SAFE, le=_SAFE)
    maxAttempts: int | None = Field(default=None, ge=1, le=_SAFE)
    backoff: BackoffBody | None = None
    timeoutMs: int | None = Field(default=None, ge=1, le=_SAFE)
    delayMs: int | None = Field(default=None, ge=0, le=_SAFE)
    runAt: int | None = Field(default=None, ge=0, le=_SAFE)
    guarantee: Literal["at-least-once", "at-most-once"] | None = None
    concurrencyKey: str | None = None
    uniqueKey: str | None = None
    uniqueForMs: int | None = Field(default=None, ge=1, le=_SAFE)
    partitionKey: str | None = None
    expiresAt: int | None = Field(default=None, ge=0, le=_SAFE)
    expiresInMs: int | None = Field(default=None, ge=1, le=_SAFE)
    traceparent: str | None = None
    id: str | None = Field(default=None, description="A pinned job id <binding>#<shard>:<local>.")
    runId: str | None = None
    nodeId: str | None = None
    shard: int | None = Field(default=None, ge=0, description="The caller's routing, checked by the scheduler.")


class BulkEnqueueBody(_Body):
    """1..500 enqueue items; all-or-nothing per shard."""

    items: list[EnqueueBody] = Field(min_length=1, max_length=500)


def _no_default(schema: dict[str, Any]) -> None:
    # An omitted field is "not pinned"; the document must not suggest that null is a value to send.
    schema.pop("default", None)


def _pin() -> Any:
    return Field(default=None, json_schema_extra=_no_default)


_DELAY_MAX = 8_000_000_000_000_000
"""run_after = now + delayMs stays a safe integer for any now before the year 250,000."""


class RescheduleBody(_Body):
    """Exactly one of ``runAt`` (absolute, past allowed) and ``delayMs`` (from now), optional ``priority``."""

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra={
        "oneOf": [{"required": ["runAt"]}, {"required": ["delayMs"]}]})  # fmt: skip

    runAt: Annotated[float, Field(ge=0, le=_SAFE)] | SkipJsonSchema[None] = _pin()
    delayMs: Annotated[float, Field(ge=0, le=_DELAY_MAX)] | SkipJsonSchema[None] = _pin()
    priority: float | None = None


class BulkBody(_Body):
    """Either ``ids`` (other fields ignored) or filters with ``limit`` (default and most 200)."""

    ids: list[str] | None = Field(default=None, min_length=1, max_length=200)
    binding: str | None = None
    state: str | None = None
    unique_key: str | None = None
    concurrency_key: str | None = None
    created_from: float | None = None
    created_to: float | None = None
    limit: float | None = Field(default=None, ge=1)


class RateBody(_Body):
    """A token bucket: ``tokens`` per ``interval_ms``."""

    tokens: int = Field(ge=1, le=_SAFE)
    interval_ms: int = Field(ge=1, le=_SAFE)


_AtLeast0 = Annotated[int, Field(ge=0, le=_SAFE)]
_AtLeast1 = Annotated[int, Field(ge=1, le=_SAFE)]


class PolicyBody(_Body):
    """Fields to pin over the code's settings on every shard; at least one.

    Only ``rate``, ``per_key_rate`` (unlimited) and ``aging_interval_ms`` (aging off) take ``null``; the
    other fields are omitted to leave them as they are, as the handler refuses ``null`` for them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra={"minProperties": 1})

    concurrency: _AtLeast0 | SkipJsonSchema[None] = _pin()
    rate: RateBody | None = None
    per_key_concurrency: _AtLeast1 | SkipJsonSchema[None] = _pin()
    per_key_rate: RateBody | None = None
    aging_interval_ms: int | None = Field(default=None, ge=1, le=_SAFE)
    reaper_grace_ms: _AtLeast0 | SkipJsonSchema[None] = _pin()
    paused: bool | SkipJsonSchema[None] = _pin()
    sweep_after_ms: _AtLeast0 | SkipJsonSchema[None] = _pin()
    failed_retention_ms: _AtLeast0 | SkipJsonSchema[None] = _pin()
