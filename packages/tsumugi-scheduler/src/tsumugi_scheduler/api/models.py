"""Request bodies people type, as pydantic models: the OpenAPI document's request schemas.

The handlers read bodies with `tsumugi_scheduler.api.bodies` (the original's exact messages, and enqueue
items through the scheduler's own validation); these models describe the same bodies for clients and for
the schemathesis run, which sends bodies generated from them.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, Union, cast

from pydantic import BaseModel, ConfigDict, Field, RootModel, WithJsonSchema
from pydantic.config import JsonDict
from pydantic.json_schema import SkipJsonSchema

from tsumugi_core.flow_spec import MAX_DEADLINE_MS
from tsumugi_core.options import MAX_KEY_CHARS, MAX_RESCHEDULE_DELAY_MS, MAX_TIMEOUT_MS

__all__ = [
    "BackoffBody",
    "BulkBody",
    "BulkCancelBody",
    "BulkEnqueueBody",
    "BulkRetryBody",
    "EnqueueBody",
    "JsonValue",
    "PolicyBody",
    "RateBody",
    "RescheduleBody",
    "StartRunBody",
]

_SAFE = 2**53 - 1
_TRACEPARENT = "[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}"


_SafeInteger = Annotated[int, Field(ge=-_SAFE, le=_SAFE)]
_Fraction = Annotated[float, WithJsonSchema({"type": "number", "not": {"type": "integer"}})]


class JsonValue(
    RootModel[Union[bool, _SafeInteger, _Fraction, str, list["JsonValue"], dict[str, "JsonValue"], None]]  # noqa: UP007
):
    """A payload: any JSON value that crosses a queue and JavaScript intact (integers within +-(2**53 - 1)),
    nested at most 64 levels (tsumugi_core.portable, ADR-0077)."""


JsonValue.model_rebuild()


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _no_default(schema: dict[str, Any]) -> None:
    # An omitted field keeps its value; the document must not suggest that null is a value to send.
    schema.pop("default", None)


def _pin() -> Any:
    return Field(default=None, json_schema_extra=_no_default)


class BackoffBody(_Body):
    """``{"kind": "fixed", "delayMs"}`` or ``{"kind": "exponential", "baseMs", "factor", "maxMs"}``."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={
            "anyOf": [
                {"properties": {"kind": {"const": "exponential"}}},
                {
                    "required": ["delayMs"],
                    "properties": {"delayMs": {"type": "integer"}},
                },  # a fixed backoff needs it
            ]
        },
    )

    kind: Literal["fixed", "exponential"]
    # Each field is a number (jitter a boolean) when sent; null is refused, so the document has no null.
    delayMs: Annotated[int, Field(ge=0, le=_SAFE)] | SkipJsonSchema[None] = _pin()
    baseMs: Annotated[int, Field(ge=0, le=_SAFE)] | SkipJsonSchema[None] = _pin()
    factor: Annotated[float, Field(ge=1)] | SkipJsonSchema[None] = _pin()
    maxMs: Annotated[int, Field(ge=0, le=_SAFE)] | SkipJsonSchema[None] = _pin()
    jitter: bool | SkipJsonSchema[None] = _pin()


def _not_both(first: str, second: str) -> dict[str, Any]:
    """Refuse a value (an integer: the fields' only non-null type) on both sides of a pair."""
    return {
        "not": {
            "required": [first, second],
            "properties": {first: {"type": "integer"}, second: {"type": "integer"}},
        }
    }


_ENQUEUE_RULES: Final[dict[str, Any]] = {
    "allOf": [
        _not_both("runAt", "delayMs"),
        _not_both("expiresAt", "expiresInMs"),
    ],
}
"""Rules across fields (tsumugi_core.options): a value on both sides of a pair is refused. ``runId`` and
``nodeId`` are not a caller's to set: only a run ties a job to itself (ADR-0115).

Each is a ``not`` rather than an ``anyOf`` of the allowed cases: alternatives multiply, and with one more per
binding (its payload type) the body became a schema no generator could expand (issue 25 item 11)."""
_Key = Annotated[str, Field(min_length=1, max_length=MAX_KEY_CHARS)]
_DroppedKey = Annotated[
    str, Field(max_length=MAX_KEY_CHARS, description="An empty string is dropped (the original's rule).")
]


class EnqueueBody(_Body):
    """One enqueue item (docs/design/scheduler-rpc.md §4.1): ``binding`` and ``payload`` are required."""

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=cast("JsonDict", _ENQUEUE_RULES))

    binding: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    payload: JsonValue = Field(
        description="Any JSON value, null included, that the performer's published payload "
        "type accepts; integers within +-(2**53 - 1), nesting at most 64 levels."
    )
    priority: int | None = Field(default=None, ge=-_SAFE, le=_SAFE)
    maxAttempts: int | None = Field(default=None, ge=1, le=_SAFE)
    backoff: BackoffBody | None = None
    timeoutMs: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_MS)
    delayMs: int | None = Field(default=None, ge=0, le=_SAFE)
    runAt: int | None = Field(default=None, ge=0, le=_SAFE)
    guarantee: Literal["at-least-once", "at-most-once"] | None = None
    concurrencyKey: _DroppedKey | None = None
    uniqueKey: _DroppedKey | None = None
    uniqueForMs: int | None = Field(default=None, ge=1, le=_SAFE)
    partitionKey: _Key | None = None
    expiresAt: int | None = Field(default=None, ge=0, le=_SAFE)
    expiresInMs: int | None = Field(default=None, ge=1, le=_SAFE)
    traceparent: str | None = Field(default=None, pattern=f"^{_TRACEPARENT}$")
    id: _Key | None = Field(default=None, description="A pinned job id <binding>#<shard>:<local>.")
    shard: int | None = Field(
        default=None, ge=0, le=_SAFE, description="The caller's routing, checked by the scheduler."
    )


class BulkEnqueueBody(_Body):
    """1..500 enqueue items; all-or-nothing per shard."""

    items: list[EnqueueBody] = Field(min_length=1, max_length=500)


_DELAY_MAX = MAX_RESCHEDULE_DELAY_MS


class RescheduleBody(_Body):
    """Exactly one of ``runAt`` (absolute, past allowed) and ``delayMs`` (from now), optional ``priority``."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={"oneOf": [{"required": ["runAt"]}, {"required": ["delayMs"]}]},
    )

    runAt: Annotated[float, Field(ge=0, le=_SAFE)] | SkipJsonSchema[None] = _pin()
    delayMs: Annotated[float, Field(ge=0, le=_DELAY_MAX)] | SkipJsonSchema[None] = _pin()
    priority: Annotated[float, Field(ge=-_SAFE, le=_SAFE)] | None = None


class BulkBody(_Body):
    """Either ``ids`` (other fields ignored) or filters with ``limit`` (default and most 200)."""

    ids: list[Annotated[str, Field(min_length=1)]] | None = Field(default=None, min_length=1, max_length=200)
    binding: str | None = None
    unique_key: str | None = None
    concurrency_key: str | None = None
    created_from: float | None = None
    created_to: float | None = None
    limit: float | None = Field(default=None, ge=1)


class BulkRetryBody(BulkBody):
    """``POST /api/jobs/bulk-retry``: ``state`` filters FAILED or STALLED jobs (both when omitted)."""

    state: Literal["FAILED", "STALLED"] | None = None


class BulkCancelBody(BulkBody):
    """``POST /api/jobs/bulk-cancel``: ``state`` can only be SCHEDULED (the default)."""

    state: Literal["SCHEDULED"] | None = None


class RateBody(_Body):
    """A token bucket: ``tokens`` per ``interval_ms``."""

    tokens: int = Field(ge=1, le=_SAFE)
    interval_ms: int = Field(ge=1, le=_SAFE)


_AtLeast0 = Annotated[int, Field(ge=0, le=_SAFE)]
_AtLeast1 = Annotated[int, Field(ge=1, le=_SAFE)]


class PolicyBody(_Body):
    """Fields to change on every shard, which then keeps its whole settings pinned until reset; at least one.

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


class StartRunBody(_Body):
    """``POST /api/runs``: a registered ``flow``, its ``input`` (any JSON that crosses JavaScript intact,
    required), an optional ``id`` pinning the run id's local part (a repeated id answers the existing run) and
    ``deadlineMs``."""

    model_config = ConfigDict(extra="allow", frozen=True, json_schema_extra={"required": ["flow", "input"]})

    flow: Annotated[str, Field(min_length=1, pattern="^[A-Za-z0-9_-]+$")]
    input: JsonValue
    id: Annotated[str, Field(pattern="^[A-Za-z0-9_-]+$", max_length=200)] | SkipJsonSchema[None] = _pin()
    deadlineMs: Annotated[int, Field(ge=1, le=MAX_DEADLINE_MS)] | SkipJsonSchema[None] = _pin()
