"""Recurring schedule definitions: what fires, when, and the rules a definition must keep.

Source: docs/reference/original.md §2.9.

A `ScheduleSpec` names a job schedule: its target binding and payload, the job options the original allows
(partition_key, max_attempts, backoff, timeout_ms, priority, guarantee, concurrency_key), its `Timing` and
its overlap rule. Code-defined and run-time schedules obey the same `validate_schedule`; every refusal is an
`InvalidScheduleError` naming the field and the rule. Each occurrence's job id is derived from the schedule
name, the occurrence instant and the Scheduler object's id key (`occurrence_job_id`), so firing an occurrence
twice enqueues one job and no caller can enqueue that id first (ADR-0177). A flow schedule (``flow`` set,
``binding`` empty, ``payload`` the run's input, no job option) derives a run id the same way:
``<flow>:<name>-<occurrence>-<digest>``.

Example:
    >>> spec = ScheduleSpec(name="nightly", binding="Report", payload={"kind": "daily"},
    ...                     timing=Timing(cron="0 3 * * *", timezone="Asia/Tokyo"))
    >>> validate_schedule(spec, registered=("Report",), shards={}) is spec
    True
    >>> occurrence_job_id(spec, 1, 1_767_204_000_000, "k3y")
    'Report#0:nightly-1767204000000-e9bdb3b0dd3e'
    >>> validate_schedule(msgspec.structs.replace(spec, name="a b"), registered=(), shards={})
    Traceback (most recent call last):
    ...
    tsumugi_core.schedule_spec.InvalidScheduleError: name must match ^[A-Za-z0-9_-]+$ and be at most 64 characters, got 'a b'
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from enum import StrEnum
from typing import Any, Final

import msgspec

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.flow_spec import MAX_DEADLINE_MS
from tsumugi_core.id_digest import id_digest
from tsumugi_core.ids import InvalidJobIdError, InvalidRunIdError, format_job_id, format_run_id
from tsumugi_core.json_path import InvalidValueError
from tsumugi_core.options import (
    Backoff,
    EnqueueItem,
    EnqueueValidationError,
    Guarantee,
    validate_enqueue,
)
from tsumugi_core.portable import check_portable
from tsumugi_core.schedule_timing import InvalidTimingError, Timing, validate_timing
from tsumugi_core.sharding import resolve_shard

__all__ = [
    "ALLOWED_JOB_OPTIONS",
    "FORBIDDEN_JOB_OPTIONS",
    "MAX_SCHEDULE_NAME_CHARS",
    "OCCURRENCE_DIGEST_BYTES",
    "SCHEDULE_NAME_RE",
    "InvalidScheduleError",
    "Overlap",
    "ScheduleSource",
    "ScheduleSpec",
    "occurrence_item",
    "occurrence_job_id",
    "trigger_job_id",
    "validate_schedule",
    "validate_schedule_name",
]

SCHEDULE_NAME_RE: Final = re.compile(r"[A-Za-z0-9_-]+")
MAX_SCHEDULE_NAME_CHARS: Final = 64
ALLOWED_JOB_OPTIONS: Final = (
    "partition_key",
    "max_attempts",
    "backoff",
    "timeout_ms",
    "priority",
    "guarantee",
    "concurrency_key",
)
"""Enqueue options a job schedule may set (the original's list)."""
FORBIDDEN_JOB_OPTIONS: Final = (
    "unique_key",
    "unique_for_ms",
    "delay_ms",
    "run_at",
    "id",
    "expires_at",
    "expires_in_ms",
    "run_id",
    "node_id",
    "traceparent",
)
"""Enqueue options a schedule refuses: the occurrence decides the job's id and time (original: uniqueKey,
delayMs, runAt; the rest follow from the same reason)."""


class InvalidScheduleError(InvalidFieldError):
    """A schedule definition broke a rule; the message is ``<field> <rule>``.

    Attributes:
        field: The field's Python name (``every_ms``, ``backoff.delay_ms``, ``name``).
        rule: What the value must satisfy.
    """


class Overlap(StrEnum):
    """What happens when an occurrence is due while the previous one's job is still active."""

    SKIP = "skip"
    """Do not enqueue; count it as skipped (the default)."""
    OVERLAP = "overlap"
    """Enqueue anyway."""


class ScheduleSource(StrEnum):
    """Where a schedule is defined."""

    CODE = "code"
    """``define_tsumugi(schedules=...)``: read-only at run time, reconciled on each deploy."""
    RUNTIME = "runtime"
    """Created through the client, RPC or REST: created, changed and deleted at run time."""


class ScheduleSpec(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A job schedule: target, payload, job options, timing and overlap.

    ``payload_from_code`` marks a code schedule whose payload is a function of ``scheduled_at``: the stored
    spec then holds no payload and the scheduler asks the definition at each occurrence.
    """

    name: str
    binding: str = ""
    flow: str | None = None
    """A flow schedule starts a run of ``flow`` with ``payload`` as its input; ``binding`` is then empty."""
    payload: Any = None
    timing: Timing
    overlap: Overlap = Overlap.SKIP
    partition_key: str | None = None
    max_attempts: int | None = None
    backoff: Backoff | None = None
    timeout_ms: int | None = None
    priority: int | None = None
    guarantee: Guarantee | None = None
    concurrency_key: str | None = None
    payload_from_code: bool = False
    deadline_ms: int | None = None
    """A flow schedule's run deadline (the flow's own when None)."""


def validate_schedule_name(name: object) -> str:
    """``name`` when it is a schedule name: ``^[A-Za-z0-9_-]+$``, at most 64 characters.

    Raises:
        InvalidScheduleError: naming ``name``.
    """
    if (
        not isinstance(name, str)
        or len(name) > MAX_SCHEDULE_NAME_CHARS
        or not SCHEDULE_NAME_RE.fullmatch(name)
    ):
        raise InvalidScheduleError(
            "name",
            f"must match ^{SCHEDULE_NAME_RE.pattern}$ and be at most {MAX_SCHEDULE_NAME_CHARS} characters, "
            f"got {name!r}",
        )
    return name


def _item(spec: ScheduleSpec, payload: Any, job_id: str | None = None) -> EnqueueItem:
    # Each of ALLOWED_JOB_OPTIONS by name (tests/unit/core/test_schedule_spec.py holds the two lists equal):
    # a ** mapping costs three times these keywords, once per occurrence.
    return EnqueueItem(
        binding=spec.binding,
        payload=payload,
        id=job_id,
        partition_key=spec.partition_key,
        max_attempts=spec.max_attempts,
        backoff=spec.backoff,
        timeout_ms=spec.timeout_ms,
        priority=spec.priority,
        guarantee=spec.guarantee,
        concurrency_key=spec.concurrency_key,
    )


def _validate_flow_target(spec: ScheduleSpec, flows: Collection[str] | None) -> None:
    flow = spec.flow
    assert flow is not None
    if spec.binding:
        raise InvalidScheduleError(
            "flow", "cannot be set with binding: a schedule targets exactly one of them"
        )
    for option in ALLOWED_JOB_OPTIONS:
        if getattr(spec, option) is not None:
            raise InvalidScheduleError(
                option, "is not allowed with a flow: the flow's nodes set their options"
            )
    if not spec.payload_from_code:
        try:
            check_portable(spec.payload)  # each occurrence's run input, checked as at POST /api/runs
        except InvalidValueError as exc:
            raise InvalidScheduleError(exc.path("input"), exc.rule) from None
        except TypeError as exc:
            raise InvalidScheduleError("input", f"must be JSON-serialisable: {exc}") from None
    try:
        format_run_id(flow, f"{spec.name}-0")
    except InvalidRunIdError as exc:
        raise InvalidScheduleError("flow", f"is not a valid flow name: {exc}") from None
    if flows is not None and flow not in flows:
        raise InvalidScheduleError("flow", f"is not a registered flow: {flow}")
    deadline = spec.deadline_ms
    if deadline is not None and (isinstance(deadline, bool) or not isinstance(deadline, int) or deadline < 1):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise InvalidScheduleError("deadline_ms", f"must be a positive integer, got {deadline!r}")
    if deadline is not None and deadline > MAX_DEADLINE_MS:
        # The Run object refuses a longer deadline at each start (the live fuzz run's trigger answered 502).
        raise InvalidScheduleError("deadline_ms", f"must be at most {MAX_DEADLINE_MS}, got {deadline}")


def validate_schedule(
    spec: ScheduleSpec,
    *,
    registered: Collection[str],
    shards: Mapping[str, int],
    flows: Collection[str] | None = None,
) -> ScheduleSpec:
    """``spec`` when it keeps every rule of a schedule.

    Args:
        spec: The schedule.
        registered: The scheduler's performers; empty accepts any binding.
        shards: Shard counts of the bindings split into more than one.
        flows: The registered flows; None accepts any flow name.

    Raises:
        InvalidScheduleError: naming the field and the rule: the name, the timing (exactly one of every_ms
            and cron, every_ms at least 1000, a cron that parses and fires, a known time zone), overlap, an
            unregistered binding, a sharded binding without partition_key, or any job option's own rule.
    """
    validate_schedule_name(spec.name)
    try:
        validate_timing(spec.timing)
    except InvalidTimingError as exc:
        raise InvalidScheduleError(exc.field, exc.rule) from None
    if spec.overlap not in (Overlap.SKIP, Overlap.OVERLAP):
        raise InvalidScheduleError("overlap", f"must be 'skip' or 'overlap', got {spec.overlap!r}")
    if spec.flow is not None:
        _validate_flow_target(spec, flows)
        return spec
    if not spec.binding:
        raise InvalidScheduleError("binding", "or flow is required: a schedule targets exactly one of them")
    if spec.deadline_ms is not None:
        raise InvalidScheduleError("deadline_ms", "is allowed only with a flow")
    try:
        validate_enqueue(_item(spec, None if spec.payload_from_code else spec.payload))
    except EnqueueValidationError as exc:
        raise InvalidScheduleError(exc.field, exc.rule) from None
    if registered and spec.binding not in registered:
        raise InvalidScheduleError("binding", f"is not a registered performer: {spec.binding}")
    if shards.get(spec.binding, 1) > 1 and spec.partition_key is None:
        raise InvalidScheduleError(
            "partition_key", f"is required: {spec.binding} is split into {shards[spec.binding]} shards"
        )
    return spec


def _shard(spec: ScheduleSpec, shards: int) -> int:
    try:
        return resolve_shard(spec.binding, shards, spec.partition_key)
    except InvalidJobIdError as exc:
        raise InvalidScheduleError("partition_key", f"is required: {exc}") from None


OCCURRENCE_DIGEST_BYTES: Final = 6
"""Bytes of the digest ending an occurrence's or a run now's id (12 hex characters)."""


def occurrence_job_id(spec: ScheduleSpec, shards: int, occurrence: int, id_key: str) -> str:
    """The job id of the occurrence at ``occurrence``: ``<binding>#<shard>:<name>-<occurrence>-<digest>``.

    The digest covers ``id_key``, the Scheduler object's secret (ADR-0177): the same occurrence always gets
    the same id from its object, and no caller can compute it. A flow schedule's occurrence is a run instead:
    ``<flow>:<name>-<occurrence>-<digest>``.
    """
    local_id = f"{spec.name}-{occurrence}-{_digest(id_key, spec.name, str(occurrence))}"
    if spec.flow is not None:
        return format_run_id(spec.flow, local_id)
    return format_job_id(spec.binding, _shard(spec, shards), local_id)


def trigger_job_id(spec: ScheduleSpec, shards: int, at: int, id_key: str) -> str:
    """The job id of a "run now" at ``at``: ``<binding>#<shard>:<name>-now-<at>-<digest>``, apart from occurrences.

    A flow schedule's is a run id: ``<flow>:<name>-now-<at>-<digest>``.
    """
    local_id = f"{spec.name}-now-{at}-{_digest(id_key, spec.name, 'now', str(at))}"
    if spec.flow is not None:
        return format_run_id(spec.flow, local_id)
    return format_job_id(spec.binding, _shard(spec, shards), local_id)


def _digest(id_key: str, *parts: str) -> str:
    return id_digest((id_key, *parts), OCCURRENCE_DIGEST_BYTES)


def occurrence_item(spec: ScheduleSpec, payload: Any, job_id: str) -> EnqueueItem:
    """The enqueue item of one occurrence: the schedule's binding and options, ``payload`` and ``job_id``."""
    return _item(spec, payload, job_id)
