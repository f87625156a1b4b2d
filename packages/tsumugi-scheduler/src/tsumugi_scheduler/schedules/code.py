"""``define_tsumugi(schedules=...)``: code-defined schedules, validated when the definition is made.

Each value is a mapping of snake_case options: ``binding``, ``payload`` (a value, or a function of
``scheduled_at`` called at each occurrence, possibly async) or ``flow`` and ``input`` (likewise) with an
optional ``deadline_ms``, ``every_ms`` or ``cron`` (with ``timezone``),
``overlap`` and the job options a schedule allows. Errors read ``schedules.<name>.<field> <rule>``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, cast

from tsumugi_core.schedule_spec import InvalidScheduleError, ScheduleSpec, validate_schedule_name
from tsumugi_scheduler.schedules.fields import spec_from_fields

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
) -> CodeSchedules:
    """Validate ``define_tsumugi``'s ``schedules`` option.

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
            specs[name] = spec_from_fields(name, fields, registered=registered, shards=shards,
                                           payload_from_code=from_code, flows=flows)  # fmt: skip
        except InvalidScheduleError as exc:
            raise InvalidScheduleError(f"schedules.{name}.{exc.field}", exc.rule) from None
    return CodeSchedules(specs, payloads)
