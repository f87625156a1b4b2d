"""``define_tsumugi(schedules=...)``: code-defined schedules, validated when the definition is made.

Each value is a mapping of snake_case options: ``binding``, ``payload`` (a value, or a function of
``scheduled_at`` called at each occurrence, possibly async) or ``flow`` and ``input`` (likewise) with an
optional ``deadline_ms``, ``every_ms`` or ``cron`` (with ``timezone``),
``overlap`` and the job options a schedule allows. Errors read ``schedules.<name>.<field> <rule>``.

A payload given as a value is checked against its performer's payload type when the definition knows it (the
performer listed as a class in ``performers``): ``schedules.<name>.payload.<path> <rule>``, as an enqueue
names it. A payload function's value is checked at each occurrence, by the enqueue (ADR-0135).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, cast

from tsumugi_core.json_path import InvalidValueError
from tsumugi_core.json_schema import SchemaError, compile_schema
from tsumugi_core.schedule_spec import InvalidScheduleError, ScheduleSpec, validate_schedule_name
from tsumugi_scheduler.schedules.fields import spec_from_fields
from tsumugi_scheduler.wire import integral

__all__ = ["CodeSchedules", "PayloadFunction", "code_schedules"]

PayloadFunction = Callable[[int], Any]
"""``payload(scheduled_at)`` -> the occurrence's payload (or an awaitable of it)."""


class CodeSchedules:
    """The code's schedules: their specs and the payload functions of those that have one."""

    def __init__(self, specs: Mapping[str, ScheduleSpec], payloads: Mapping[str, PayloadFunction]) -> None:
        """Hold validated specs."""
        self.specs = dict(specs)
        self.payloads = dict(payloads)


def code_schedules(
    schedules: object,
    *,
    registered: Collection[str],
    shards: Mapping[str, int],
    flows: Collection[str] | None = None,
    payload_types: Mapping[str, Any] | None = None,
) -> CodeSchedules:
    """Validate ``define_tsumugi``'s ``schedules`` option; ``payload_types`` maps a binding to the JSON Schema of
    its performer's payload, for the bindings whose type the definition knows.

    Raises:
        InvalidScheduleError: ``field`` is the option path (``schedules.nightly.every_ms``).
    """
    if schedules is None:
        return CodeSchedules({}, {})
    if not isinstance(schedules, Mapping):
        raise InvalidScheduleError("schedules", "must be a mapping of schedule name to options")
    specs: dict[str, ScheduleSpec] = {}
    payloads: dict[str, PayloadFunction] = {}
    for raw_name, raw in cast("Mapping[object, object]", schedules).items():
        try:
            name = validate_schedule_name(raw_name)
        except InvalidScheduleError as exc:
            raise InvalidScheduleError("schedules", f"key {exc.rule}") from None
        if not isinstance(raw, Mapping):
            raise InvalidScheduleError(f"schedules.{name}", "must be a mapping of options")
        fields = dict(cast("Mapping[str, Any]", raw))
        value_key = "input" if "flow" in fields else "payload"
        from_code = callable(fields.get(value_key))
        if from_code:
            payloads[name] = cast(PayloadFunction, fields.pop(value_key))
        try:
            specs[name] = spec_from_fields(
                name, fields, registered=registered, shards=shards, payload_from_code=from_code, flows=flows
            )
        except InvalidScheduleError as exc:
            raise InvalidScheduleError(f"schedules.{name}.{exc.field}", exc.rule) from None
        _check_payload(name, specs[name], payload_types or {})
    return CodeSchedules(specs, payloads)


def _check_payload(name: str, spec: ScheduleSpec, payload_types: Mapping[str, Any]) -> None:
    """Refuse a job schedule's payload value its performer's known type refuses (every occurrence would fail)."""
    schema = payload_types.get(spec.binding) if spec.flow is None and not spec.payload_from_code else None
    if schema is None:
        return
    try:
        check = compile_schema(schema)
    except SchemaError:  # a type this checker cannot read: not checked here, as at enqueue
        return
    try:
        check(integral(spec.payload))  # as the enqueue reads it: the payload crosses JavaScript on its way
    except InvalidValueError as exc:
        raise InvalidScheduleError(f"schedules.{name}.{exc.path('payload')}", exc.rule) from None
