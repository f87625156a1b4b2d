"""Schedules as people type them: code definitions (snake_case) and REST / RPC bodies (camelCase).

Both become a `ScheduleSpec` through `spec_from_fields`, so a code-defined and a run-time schedule obey the
same rules (`tsumugi_core.schedule_spec.validate_schedule`). Errors name the field as it was spelled:
``every_ms`` in code, ``everyMs`` in a request body.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final, cast

import msgspec

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.flow_spec import FlowSpec
from tsumugi_core.options import Backoff
from tsumugi_core.schedule_spec import (
    ALLOWED_JOB_OPTIONS,
    FORBIDDEN_JOB_OPTIONS,
    InvalidScheduleError,
    Overlap,
    ScheduleSpec,
    validate_schedule,
    validate_schedule_name,
)
from tsumugi_core.schedule_timing import UTC_NAME, Timing
from tsumugi_core.time_values import with_milliseconds
from tsumugi_scheduler.run_input import RunInputError, run_input_json
from tsumugi_scheduler.wire import integral

__all__ = [
    "CAMEL",
    "SCHEDULE_KEYS",
    "camel_error",
    "merge_patch",
    "spec_fields",
    "spec_from_camel",
    "spec_from_fields",
]

SCHEDULE_KEYS: Final = (
    "binding",
    "flow",
    "input",
    "deadline_ms",
    "payload",
    "every_ms",
    "cron",
    "timezone",
    "overlap",
    *ALLOWED_JOB_OPTIONS,
)
CAMEL: Final = {
    "every_ms": "everyMs",
    "partition_key": "partitionKey",
    "max_attempts": "maxAttempts",
    "timeout_ms": "timeoutMs",
    "concurrency_key": "concurrencyKey",
    "unique_key": "uniqueKey",
    "unique_for_ms": "uniqueForMs",
    "delay_ms": "delayMs",
    "run_at": "runAt",
    "expires_at": "expiresAt",
    "expires_in_ms": "expiresInMs",
    "run_id": "runId",
    "node_id": "nodeId",
    "deadline_ms": "deadlineMs",
}
_SNAKE: Final = {camel: snake for snake, camel in CAMEL.items()}
_TIMING_KEYS: Final = ("every_ms", "cron", "timezone")


def _backoff(value: object) -> Backoff | None:
    if value is None or isinstance(value, Backoff):
        return value
    try:
        return msgspec.convert(value, Backoff)
    except msgspec.ValidationError as exc:
        raise InvalidScheduleError("backoff", f"is invalid: {exc}") from None


def _string(field: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidScheduleError(field, f"must be a string, got {value!r}")
    return value


def _cron_text(value: object) -> str | None:
    # Its fields one space apart, as the parser reads them: " 0 9 * * *\n" is stored, shown and compared (a
    # PATCH that changes nothing, a code schedule against its stored copy) as "0 9 * * *".
    text = _string("cron", value)
    return None if text is None else " ".join(text.split())


def spec_from_fields(
    name: str,
    fields: Mapping[str, Any],
    *,
    registered: Collection[str],
    shards: Mapping[str, int],
    payload_from_code: bool = False,
    flows: Collection[str] | None = None,
) -> ScheduleSpec:
    """A validated spec from snake_case ``fields`` (the keys of `SCHEDULE_KEYS`).

    ``flows`` names the registered flows; given as their specs by name, a flow schedule's input is held to
    every rule of a run's input there (`run_input_json`: its size and the flow's input type), as each
    occurrence's start would be.

    Raises:
        InvalidScheduleError: an unknown or forbidden key, a missing binding or payload, a value of the wrong
            type, or any rule of `validate_schedule`.
    """
    try:
        fields = with_milliseconds(fields, ("every_ms", "timeout_ms", "deadline_ms"))
    except InvalidFieldError as exc:
        raise InvalidScheduleError(exc.field, exc.rule) from None
    for key in fields:
        if key in FORBIDDEN_JOB_OPTIONS:
            raise InvalidScheduleError(
                key, "is not allowed in a schedule: the occurrence sets the job's id and time"
            )
        if key not in SCHEDULE_KEYS:
            raise InvalidScheduleError(key, "is not a schedule option")
    flow = _target(fields)
    value_key = "payload" if flow is None else "input"
    if value_key not in fields and not payload_from_code:
        raise InvalidScheduleError(value_key, "is required")
    overlap = fields.get("overlap")
    overlap = Overlap.SKIP.value if overlap is None else overlap
    if not isinstance(overlap, str) or overlap not in (Overlap.SKIP.value, Overlap.OVERLAP.value):
        raise InvalidScheduleError("overlap", f"must be 'skip' or 'overlap', got {overlap!r}")
    timing = Timing(
        every_ms=fields.get("every_ms"),
        cron=_cron_text(fields.get("cron")),
        timezone=_string("timezone", fields.get("timezone")) or UTC_NAME,
    )
    options = {k: fields.get(k) for k in ALLOWED_JOB_OPTIONS if k != "backoff"}
    spec = ScheduleSpec(
        name=name,
        binding=fields.get("binding", ""),
        flow=flow,
        deadline_ms=fields.get("deadline_ms"),
        payload=None if payload_from_code else fields.get(value_key),
        timing=timing,
        overlap=Overlap(overlap),
        backoff=_backoff(fields.get("backoff")),
        payload_from_code=payload_from_code,
        **options,
    )
    spec = validate_schedule(spec, registered=registered, shards=shards, flows=flows)
    if spec.flow is not None and not spec.payload_from_code and isinstance(flows, Mapping):
        flow_spec: object = cast("Mapping[str, object]", flows)[spec.flow]
        if isinstance(flow_spec, FlowSpec):
            try:
                run_input_json(flow_spec, spec.payload)
            except RunInputError as exc:
                raise InvalidScheduleError(exc.field, exc.rule) from None
    return spec


def _target(fields: Mapping[str, Any]) -> str | None:
    """The flow of a flow schedule, None for a job schedule; exactly one of binding and flow."""
    if "flow" in fields and "binding" in fields:
        raise InvalidScheduleError(
            "flow", "cannot be set with binding: a schedule targets exactly one of them"
        )
    if "flow" not in fields:
        if "binding" not in fields:
            raise InvalidScheduleError(
                "binding", "or flow is required: a schedule targets exactly one of them"
            )
        for key in ("input", "deadline_ms"):
            if key in fields:
                raise InvalidScheduleError(key, "is allowed only with a flow")
        return None
    if "payload" in fields:
        raise InvalidScheduleError("payload", "is not allowed with a flow: send the run's input as input")
    for key in ALLOWED_JOB_OPTIONS:
        if key in fields:
            raise InvalidScheduleError(key, "is not allowed with a flow: the flow's nodes set their options")
    flow = fields["flow"]
    if not isinstance(flow, str) or not flow:
        raise InvalidScheduleError("flow", f"must be a flow name, got {flow!r}")
    return flow


def camel_error(error: InvalidScheduleError) -> InvalidScheduleError:
    """``error`` with its field spelled as a request body spells it (``every_ms`` -> ``everyMs``)."""
    head, dot, rest = error.field.partition(".")
    return InvalidScheduleError(CAMEL.get(head, head) + dot + rest, error.rule)


def _snake_keys(raw: Mapping[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for key, value in raw.items():
        if key in CAMEL:  # a snake_case spelling of a camelCase field is not the body's field
            raise InvalidScheduleError(key, "is not a schedule option")
        # An integral float (``2.0``) is an integer, as in enqueue bodies (ADR-0059); the payload stays as sent.
        fields[_SNAKE.get(key, key)] = value if key in ("payload", "input") else integral(value)
    return fields


def spec_from_camel(
    raw: object,
    *,
    registered: Collection[str],
    shards: Mapping[str, int],
    flows: Collection[str] | None = None,
) -> ScheduleSpec:
    """A run-time schedule from a request body ``{name, binding, payload, everyMs | cron, ...}``.

    Raises:
        InvalidScheduleError: naming the body's field.
    """
    if not isinstance(raw, Mapping):
        raise InvalidScheduleError("body", "must be an object")
    body: Mapping[str, Any] = raw  # pyright: ignore[reportUnknownVariableType]
    try:
        fields = _snake_keys(body)
        name = fields.pop("name", None)
        if name is None:
            raise InvalidScheduleError("name", "is required")
        return spec_from_fields(
            validate_schedule_name(name), fields, registered=registered, shards=shards, flows=flows
        )
    except InvalidScheduleError as exc:
        raise camel_error(exc) from None


def spec_fields(spec: ScheduleSpec) -> dict[str, Any]:
    """The snake_case fields of ``spec`` (only those set), as `spec_from_fields` takes them."""
    fields: dict[str, Any] = {"overlap": spec.overlap.value}
    if spec.flow is None:
        fields.update(binding=spec.binding, payload=spec.payload)
    else:
        fields.update(flow=spec.flow, input=spec.payload)
        if spec.deadline_ms is not None:
            fields["deadline_ms"] = spec.deadline_ms
    if spec.timing.every_ms is not None:
        fields["every_ms"] = spec.timing.every_ms
    else:
        fields["cron"] = spec.timing.cron
        fields["timezone"] = spec.timing.timezone
    for key in ALLOWED_JOB_OPTIONS:
        value = getattr(spec, key)
        if value is not None:
            fields[key] = value
    return fields


_KEEP_WHEN_NULL: Final = ("binding", "flow", "every_ms", "cron", "timezone", "overlap")
"""Fields a PATCH leaves as they are when sent as null (a schedule always has them)."""


def _check_patch(patch: Mapping[str, Any], shards: Mapping[str, int]) -> None:
    if patch.get("every_ms") is not None and patch.get("cron") is not None:
        raise InvalidScheduleError("every_ms", "or cron: exactly one is required")
    if patch.get("timezone") is not None and patch.get("cron") is None:
        raise InvalidScheduleError(
            "timezone", "must come with cron in a change: send the cron expression too"
        )
    if "partition_key" in patch and patch["partition_key"] is None:
        raise InvalidScheduleError("partition_key", "must be a string in a change (omit it to keep it)")
    binding = patch.get("binding")
    if isinstance(binding, str) and shards.get(binding, 1) > 1 and patch.get("partition_key") is None:
        raise InvalidScheduleError(
            "partition_key", f"is required with binding {binding}: it is split into shards"
        )


def merge_patch(
    spec: ScheduleSpec,
    raw: object,
    *,
    registered: Collection[str],
    shards: Mapping[str, int],
    flows: Collection[str] | None = None,
) -> ScheduleSpec:
    """``spec`` with a PATCH body's fields over it.

    A new ``everyMs`` or ``cron`` replaces the timing (``timezone`` comes with ``cron``); ``null`` leaves
    binding, timing and overlap as they are and clears a job option; ``payload`` takes any value.

    Raises:
        InvalidScheduleError: naming the body's field (``name`` cannot change).
    """
    if not isinstance(raw, Mapping):
        raise InvalidScheduleError("body", "must be an object")
    body: Mapping[str, Any] = raw  # pyright: ignore[reportUnknownVariableType]
    try:
        patch = _snake_keys(body)
        if not patch:
            raise InvalidScheduleError("body", "must change at least one field")
        if "name" in patch and patch["name"] != spec.name:
            raise InvalidScheduleError("name", "cannot change: create a schedule of the new name instead")
        patch.pop("name", None)
        _check_patch(patch, shards)
        patch = {k: v for k, v in patch.items() if v is not None or k not in _KEEP_WHEN_NULL}
        fields = spec_fields(spec)
        if "every_ms" in patch or "cron" in patch:
            for key in _TIMING_KEYS:
                fields.pop(key, None)
        for key, value in patch.items():
            if value is None and key not in ("payload", "input"):
                fields.pop(key, None)
            else:
                fields[key] = value
        return spec_from_fields(spec.name, fields, registered=registered, shards=shards, flows=flows)
    except InvalidScheduleError as exc:
        raise camel_error(exc) from None
