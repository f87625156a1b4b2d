"""Schedule request bodies and answers for the OpenAPI document (issue 12).

The handler reads bodies with the scheduler's own rules (`tsumugi_scheduler.schedules.fields`); these models
describe the same bodies. ``cron`` is documented as a safe subset of the dialect (single values, ``*`` and
``*/step``; day of month 1-28, so every match exists), so any body the document allows is accepted; lists,
ranges and steps on ranges are accepted as well (docs/reference/original.md §3.12). ``timezone`` lists the
IANA zones this Python knows (tzdata), and ``everyMs`` and ``cron`` are exclusive (ADR-0080).
"""

from __future__ import annotations

import zoneinfo
from typing import Annotated, Any, Final, Literal, cast

import msgspec
from pydantic import BaseModel, ConfigDict, Field
from pydantic.config import JsonDict
from pydantic.json_schema import SkipJsonSchema

from tsumugi_core.flow_spec import MAX_DEADLINE_MS
from tsumugi_core.options import MAX_KEY_CHARS, MAX_TIMEOUT_MS
from tsumugi_core.schedule_spec import MAX_SCHEDULE_NAME_CHARS, SCHEDULE_NAME_RE
from tsumugi_core.schedule_timing import MAX_EVERY_MS, MIN_EVERY_MS
from tsumugi_scheduler.api.models import BackoffBody, JsonValue

__all__ = [
    "CRON_SUBSET",
    "ScheduleCreateBody",
    "ScheduleDeleted",
    "ScheduleList",
    "SchedulePatchBody",
    "ScheduleResult",
    "ScheduleTriggered",
    "ScheduleView",
    "name_schedule_bindings",
]

_SAFE = 2**53 - 1
CRON_SUBSET: Final = (
    r"^(\*|\*/([1-9]|[1-5][0-9])|[0-5]?[0-9]) (\*|\*/([1-9]|1[0-9]|2[0-3])|[01]?[0-9]|2[0-3]) "
    r"(\*|[1-9]|1[0-9]|2[0-8]) (\*|[1-9]|1[0-2]) (\*|[0-7])$"
)
_ZONES: Final = sorted({*zoneinfo.available_timezones(), "UTC"})
_Key = Annotated[str, Field(min_length=1, max_length=MAX_KEY_CHARS)]
_TIMING_RULES: Final[dict[str, Any]] = {
    "anyOf": [
        {
            "required": ["everyMs"],
            "properties": {
                "everyMs": {"type": "integer"},
                "cron": {"type": "null"},
                "timezone": {"enum": ["UTC", None]},
            },
        },
        {"required": ["cron"], "properties": {"cron": {"type": "string"}, "everyMs": {"type": "null"}}},
    ]
}
"""Exactly one of everyMs and cron; a time zone only with cron (UTC or null with everyMs)."""


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def _zone_enum(schema: dict[str, Any]) -> None:
    schema["enum"] = [*_ZONES, None]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _ScheduleFields(_Body):
    binding: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    payload: JsonValue = Field(
        description="Any JSON value, null included: each occurrence's job payload (integers within +-(2**53 - 1))."
    )
    everyMs: int | None = Field(
        default=None, ge=MIN_EVERY_MS, le=MAX_EVERY_MS, description="A period in real time."
    )
    cron: str | None = Field(
        default=None,
        pattern=CRON_SUBSET,
        description="Five fields in `timezone`; lists and ranges are accepted too.",
    )
    timezone: str | None = Field(
        default=None, description="An IANA zone (cron only); UTC by default.", json_schema_extra=_zone_enum
    )
    overlap: Literal["skip", "overlap"] | None = None
    partitionKey: _Key | None = None
    maxAttempts: int | None = Field(default=None, ge=1, le=_SAFE)
    backoff: BackoffBody | None = None
    timeoutMs: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_MS)
    priority: int | None = Field(default=None, ge=-_SAFE, le=_SAFE)
    guarantee: Literal["at-least-once", "at-most-once"] | None = None
    concurrencyKey: _Key | None = None


class ScheduleCreateBody(_ScheduleFields):
    """``POST /api/schedules``: a run-time schedule."""

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=cast("JsonDict", _TIMING_RULES))

    name: str = Field(pattern=f"^{SCHEDULE_NAME_RE.pattern}$", max_length=MAX_SCHEDULE_NAME_CHARS)


_PATCH_RULES: Final[dict[str, Any]] = {
    "minProperties": 1,
    "allOf": [
        {
            "anyOf": [
                {"properties": {"everyMs": {"type": "null"}}},
                {"properties": {"cron": {"type": "null"}}},
            ]
        },
        {
            "anyOf": [
                {"properties": {"timezone": {"type": "null"}}},
                {"required": ["cron"], "properties": {"cron": {"type": "string"}}},
            ]
        },
    ],
}
"""Not both everyMs and cron; a time zone only with a cron."""


class SchedulePatchBody(_Body):
    """``PATCH /api/schedules/{name}``: the fields to change; a new timing replaces the old one.

    ``null`` (or leaving a field out) keeps binding, timing and overlap; ``null`` clears a job option.
    ``timezone`` comes with ``cron``; a sharded ``binding`` comes with ``partitionKey``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=cast("JsonDict", _PATCH_RULES))

    binding: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    payload: JsonValue = Field(
        default=JsonValue(None), description="Any JSON value; absent keeps the payload."
    )
    everyMs: int | None = Field(default=None, ge=MIN_EVERY_MS, le=MAX_EVERY_MS)
    cron: str | None = Field(default=None, pattern=CRON_SUBSET)
    timezone: str | None = Field(default=None, json_schema_extra=_zone_enum)
    overlap: Literal["skip", "overlap"] | None = None
    partitionKey: _Key | SkipJsonSchema[None] = Field(default=None, json_schema_extra=_no_default)
    maxAttempts: int | None = Field(default=None, ge=1, le=_SAFE)
    backoff: BackoffBody | None = None
    timeoutMs: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_MS)
    priority: int | None = Field(default=None, ge=-_SAFE, le=_SAFE)
    guarantee: Literal["at-least-once", "at-most-once"] | None = None
    concurrencyKey: _Key | None = None


class ScheduleView(msgspec.Struct, frozen=True, kw_only=True):
    """A schedule: the original's fields plus timezone, source, paused, description, next_occurrences,
    binding, payload and the job options (docs/reference/original.md §4.4)."""

    name: str
    kind: Literal["job", "flow"]
    target: str
    every_ms: int | None
    cron: str | None
    timezone: str
    overlap: Literal["skip", "overlap"]
    next_run_at: int
    last_run_at: int | None
    last_fired_at: int | None
    last_job_id: str | None
    last_run_id: str | None
    last_skipped_at: int | None
    skipped_count: int
    last_error: str | None
    source: Literal["code", "runtime"]
    paused: bool
    description: str
    next_occurrences: list[int]
    binding: str | None
    flow: str | None
    input: Any
    deadline_ms: int | None
    payload: Any
    payload_from_code: bool
    options: dict[str, Any]
    created_at: int
    updated_at: int


class ScheduleList(msgspec.Struct, frozen=True, kw_only=True):
    """``GET /api/schedules``: every schedule by name (empty when none), or one page of them and ``next``."""

    schedules: list[ScheduleView]
    next: str | msgspec.UnsetType | None = msgspec.UNSET
    """With ``limit``: the name to pass as ``after`` for the next page; null after the last."""


class ScheduleResult(msgspec.Struct, frozen=True, kw_only=True):
    """A changed or created schedule."""

    ok: bool
    schedule: ScheduleView


class ScheduleTriggered(msgspec.Struct, frozen=True, kw_only=True):
    """``POST /api/schedules/{name}/trigger``: the job enqueued now (``run_id``: the run a flow schedule started)."""

    ok: bool
    schedule: ScheduleView
    job_id: str | None = None
    run_id: str | None = None


class ScheduleDeleted(msgspec.Struct, frozen=True, kw_only=True):
    """``DELETE /api/schedules/{name}``."""

    ok: bool
    name: str


_JOB_ONLY: Final = (
    "binding",
    "payload",
    "partitionKey",
    "maxAttempts",
    "backoff",
    "timeoutMs",
    "priority",
    "guarantee",
    "concurrencyKey",
)
_FLOW_ONLY: Final = ("flow", "input", "deadlineMs")


def _allow_flow_targets(body: dict[str, Any], flows: list[str]) -> None:
    """A create body targets a binding (``binding`` + ``payload``) or a registered flow (``flow`` + ``input``,
    ``deadlineMs``, no job option): exactly one of them."""
    body["properties"].update(
        {
            "flow": {"enum": flows},
            "input": {"description": "Any JSON value, null included: each run's input."},
            "deadlineMs": {"type": "integer", "minimum": 1, "maximum": MAX_DEADLINE_MS},
        }
    )
    body["required"] = [k for k in body.get("required", []) if k not in ("binding", "payload")]
    body.setdefault("allOf", []).append(
        {
            "anyOf": [
                {
                    "required": ["binding", "payload"],
                    "not": {"anyOf": [{"required": [k]} for k in _FLOW_ONLY]},
                },
                {"required": ["flow", "input"], "not": {"anyOf": [{"required": [k]} for k in _JOB_ONLY]}},
            ]
        }
    )


def name_schedule_bindings(
    components: dict[str, Any], bindings: dict[str, int], flows: list[str] | None = None
) -> None:
    """A schedule body's ``binding`` lists the registered performers; a sharded one requires partitionKey; with
    registered ``flows``, a create body may target a flow instead."""
    for component in ("ScheduleCreateBody", "SchedulePatchBody"):
        body = components.get(component)
        if body is None or not bindings:
            continue
        body["properties"]["binding"] = (
            {"enum": sorted(bindings)}
            if component == "ScheduleCreateBody"
            else {"anyOf": [{"enum": sorted(bindings)}, {"type": "null"}]}
        )
        sharded = sorted(b for b, n in bindings.items() if n > 1)
        if sharded:
            body.setdefault("allOf", []).append(
                {
                    "if": {"required": ["binding"], "properties": {"binding": {"enum": sharded}}},
                    "then": {
                        "required": ["partitionKey"],
                        "properties": {"partitionKey": {"type": "string"}},
                    },
                }
            )
    create = components.get("ScheduleCreateBody")
    if create is not None and flows:
        _allow_flow_targets(create, sorted(flows))
