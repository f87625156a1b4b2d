"""Enqueue options: defaults, limits and validation, and the normalised job they produce.

Python names are snake_case; the wire form (RPC bodies, stored JSON) is the original's camelCase, which
``rename="camel"`` gives for free (``max_attempts`` <-> ``maxAttempts``).

Example:
    >>> job = normalize_enqueue(EnqueueItem(binding="MAIL", payload={"to": "a"}, delay_ms=500), now=1_000)
    >>> (job.run_after, job.max_attempts, job.priority)
    (1500, 3, 0)
    >>> validate_enqueue(EnqueueItem(binding="MAIL", payload=None, max_attempts=0))
    Traceback (most recent call last):
    ...
    tsumugi_core.options.EnqueueValidationError: max_attempts must be at least 1
"""

from __future__ import annotations

import operator
import re
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Final, cast

import msgspec

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.ids import InvalidJobIdError, parse_job_id, validate_binding_name
from tsumugi_core.json_path import InvalidValueError
from tsumugi_core.portable import MAX_SAFE_INTEGER, check_portable, is_finite_number, shown_number
from tsumugi_core.queue_size import json_bound, json_bytes
from tsumugi_core.time_values import Duration, Instant, struct_in_milliseconds

__all__ = [
    "DEFAULTS",
    "DEFAULT_BACKOFF",
    "MAX_ERROR_CHARS",
    "MAX_KEY_CHARS",
    "MAX_PAYLOAD_BYTES",
    "MAX_PAYLOAD_QUEUE_BYTES",
    "MAX_RESCHEDULE_DELAY_MS",
    "MAX_RESULT_CHARS",
    "MAX_SAFE_INTEGER",
    "MAX_TIMEOUT_MS",
    "OPTION_DURATIONS",
    "OPTION_INSTANTS",
    "Backoff",
    "CheckedJob",
    "EnqueueDefaults",
    "EnqueueItem",
    "EnqueueOptions",
    "EnqueueValidationError",
    "ExponentialBackoff",
    "FixedBackoff",
    "Guarantee",
    "NewJob",
    "RateLimit",
    "admit_checked",
    "check_admissible",
    "check_enqueue",
    "check_instant",
    "check_priority",
    "later_instant",
    "normalize_enqueue",
    "validate_enqueue",
]

MAX_PAYLOAD_BYTES: Final = 100 * 1024
"""Largest payload as UTF-8 JSON. It rides in every queue message, and a Queues message is at most 128 KB."""
MAX_PAYLOAD_QUEUE_BYTES: Final = 120_000
"""Largest payload as a queue message carries it: UTF-8 JSON as JavaScript writes it (`tsumugi_core.queue_size`,
ADR-0106). With the dispatch's other fields (ids up to 512 characters each, a traceparent) and the ~100 bytes of
metadata Queues adds, it stays under the 128,000-byte message limit."""
MAX_TIMEOUT_MS: Final = 840_000
"""Longest ``timeout_ms``: an attempt runs inside one queue consumer invocation, which Cloudflare stops after 15
minutes of wall time (developers.cloudflare.com/queues/platform/limits/); 14 leave a minute to claim, report
and ack (ADR-0047)."""
MAX_RESCHEDULE_DELAY_MS: Final = 8_000_000_000_000_000
"""Longest ``delay_ms`` of a reschedule: ``now + delay_ms`` stays a safe integer for any ``now`` before the year
33,000 (a longer delay is refused, never clamped)."""
MAX_RESULT_CHARS: Final = 8192
"""Largest stored result as JSON text (the original's cap); bigger results are stored as null."""
MAX_ERROR_CHARS: Final = 2000
"""Attempt error texts are cut to this many characters."""
MAX_KEY_CHARS: Final = 512
"""Longest concurrency_key, unique_key, partition_key, id, run_id or node_id."""

_TRACEPARENT_RE: Final = re.compile(r"[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}")


class EnqueueValidationError(InvalidFieldError):
    """An enqueue option broke a rule; the message is ``<field> <rule>``.

    Attributes:
        field: The option's Python name (dotted for nested fields, e.g. ``backoff.delay_ms``).
        rule: What the value must satisfy.
    """


def _in_milliseconds(
    struct: msgspec.Struct, durations: tuple[str, ...], instants: tuple[str, ...] = (), *, prefix: str = ""
) -> None:
    try:
        struct_in_milliseconds(struct, durations, instants, prefix=prefix)
    except InvalidFieldError as exc:
        raise EnqueueValidationError(exc.field, exc.rule) from None


class Guarantee(StrEnum):
    """Delivery guarantee of a job."""

    AT_LEAST_ONCE = "at-least-once"
    AT_MOST_ONCE = "at-most-once"


class FixedBackoff(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", tag="fixed", rename="camel"):
    """Wait ``delay_ms`` before every retry (halved-to-full when ``jitter``)."""

    delay_ms: int
    jitter: bool = True

    if TYPE_CHECKING:

        def __init__(self, *, delay_ms: Duration, jitter: bool = True) -> None:
            """``delay_ms``: milliseconds or a `timedelta` (ADR-0161)."""

    def __post_init__(self) -> None:
        if type(self.delay_ms) is not int:  # a decoded backoff holds an integer
            _in_milliseconds(self, ("delay_ms",), prefix="backoff.")


class ExponentialBackoff(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", tag="exponential", rename="camel"
):
    """Wait ``min(base_ms * factor ** (attempts - 1), max_ms)`` before a retry (halved-to-full when ``jitter``)."""

    base_ms: int = 1000
    factor: float = 2.0
    max_ms: int = 3_600_000
    jitter: bool = True

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            base_ms: Duration = 1000,
            factor: float = 2,
            max_ms: Duration = 3_600_000,
            jitter: bool = True,
        ) -> None:
            """``base_ms`` / ``max_ms``: milliseconds or a `timedelta` (ADR-0161)."""

    def __post_init__(self) -> None:
        if type(self.base_ms) is not int or type(self.max_ms) is not int:  # a decoded backoff holds integers
            _in_milliseconds(self, ("base_ms", "max_ms"), prefix="backoff.")


Backoff = FixedBackoff | ExponentialBackoff
"""How long to wait before a retry; tagged by ``kind``."""

DEFAULT_BACKOFF: Final = ExponentialBackoff()


class RateLimit(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A token bucket: at most ``tokens`` dispatches per ``interval_ms``, refilled continuously."""

    tokens: int
    interval_ms: int

    if TYPE_CHECKING:

        def __init__(self, *, tokens: int, interval_ms: Duration) -> None:
            """``interval_ms``: milliseconds or a `timedelta` (ADR-0161)."""

    def __post_init__(self) -> None:
        struct_in_milliseconds(self, ("interval_ms",))


class EnqueueDefaults(msgspec.Struct, frozen=True, kw_only=True):
    """The values an enqueue gets for options it leaves out."""

    priority: int = 0
    max_attempts: int = 3
    timeout_ms: int = 60_000
    backoff: Backoff = DEFAULT_BACKOFF
    guarantee: Guarantee = Guarantee.AT_LEAST_ONCE
    unique_for_ms: int = 86_400_000


DEFAULTS: Final = EnqueueDefaults()


class EnqueueOptions(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """Every option of an enqueue; None means "use the default"."""

    priority: int | None = None
    max_attempts: int | None = None
    backoff: Backoff | None = None
    timeout_ms: int | None = None
    delay_ms: int | None = None
    run_at: int | None = None
    guarantee: Guarantee | None = None
    concurrency_key: str | None = None
    unique_key: str | None = None
    unique_for_ms: int | None = None
    partition_key: str | None = None
    expires_at: int | None = None
    expires_in_ms: int | None = None
    traceparent: str | None = None
    id: str | None = None
    """A pinned job id (``<binding>#<shard>:<local>``); re-enqueueing an existing id returns it."""
    run_id: str | None = None
    node_id: str | None = None

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            priority: int | None = None,
            max_attempts: int | None = None,
            backoff: Backoff | None = None,
            timeout_ms: Duration | None = None,
            delay_ms: Duration | None = None,
            run_at: Instant | None = None,
            guarantee: Guarantee | None = None,
            concurrency_key: str | None = None,
            unique_key: str | None = None,
            unique_for_ms: Duration | None = None,
            partition_key: str | None = None,
            expires_at: Instant | None = None,
            expires_in_ms: Duration | None = None,
            traceparent: str | None = None,
            id: str | None = None,
            run_id: str | None = None,
            node_id: str | None = None,
        ) -> None:
            """Durations take milliseconds or a `timedelta`, instants epoch ms or an aware `datetime`."""

    def __post_init__(self) -> None:
        # Most options are None or already integers (every decoded item): one C call reads all six, and only
        # an item holding a time value takes the conversion's field-by-field walk.
        for value in _option_times(self):
            if value is not None and type(value) is not int:
                _in_milliseconds(self, OPTION_DURATIONS, OPTION_INSTANTS)
                return


OPTION_DURATIONS: Final = ("timeout_ms", "delay_ms", "unique_for_ms", "expires_in_ms")
"""The options that are durations: milliseconds on the wire, a `timedelta` accepted (ADR-0161)."""
OPTION_INSTANTS: Final = ("run_at", "expires_at")
"""The options that are instants: epoch milliseconds on the wire, an aware `datetime` accepted (ADR-0161)."""
_option_times: Final = operator.attrgetter(*OPTION_DURATIONS, *OPTION_INSTANTS)


class EnqueueItem(EnqueueOptions, frozen=True, kw_only=True, rename="camel"):
    """One job to enqueue: its binding, its payload (any JSON value) and its options."""

    binding: str
    payload: Any

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            binding: str,
            payload: Any,
            priority: int | None = None,
            max_attempts: int | None = None,
            backoff: Backoff | None = None,
            timeout_ms: Duration | None = None,
            delay_ms: Duration | None = None,
            run_at: Instant | None = None,
            guarantee: Guarantee | None = None,
            concurrency_key: str | None = None,
            unique_key: str | None = None,
            unique_for_ms: Duration | None = None,
            partition_key: str | None = None,
            expires_at: Instant | None = None,
            expires_in_ms: Duration | None = None,
            traceparent: str | None = None,
            id: str | None = None,
            run_id: str | None = None,
            node_id: str | None = None,
        ) -> None:
            """Durations take milliseconds or a `timedelta`, instants epoch ms or an aware `datetime`."""


class NewJob(msgspec.Struct, frozen=True):
    """A validated enqueue with every default applied, ready to be stored.

    Built by position in `admit_checked` alone (msgspec matches keyword arguments one name at a time: on
    every job stored, that cost more than the checks); elsewhere, name the fields.
    """

    binding: str
    payload_json: str
    priority: int
    max_attempts: int
    backoff: Backoff
    timeout_ms: int
    guarantee: Guarantee
    concurrency_key: str | None
    unique_key: str | None
    unique_for_ms: int
    run_after: int
    expires_at: int | None
    traceparent: str | None
    id: str | None
    run_id: str | None
    node_id: str | None
    created_at: int


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_int(field: str, value: object, minimum: int | None = None) -> int:
    if not _is_int(value):
        raise EnqueueValidationError(field, f"must be an integer, got {value!r}")
    number: int = value  # type: ignore[assignment]  # narrowed by _is_int
    if abs(number) > MAX_SAFE_INTEGER:
        low = -MAX_SAFE_INTEGER if minimum is None else minimum
        raise EnqueueValidationError(field, f"must be between {low} and {MAX_SAFE_INTEGER}")
    if minimum == 1 and number < 1:
        raise EnqueueValidationError(field, "must be at least 1")
    if minimum == 0 and number < 0:
        raise EnqueueValidationError(field, "must not be negative")
    return number


def check_instant(field: str, value: object) -> int:
    """An epoch-ms instant as enqueue takes it (``run_at``, ``expires_at``): an integer in 0..MAX_SAFE_INTEGER.

    Raises:
        EnqueueValidationError: naming ``field`` and the broken rule.
    """
    return _check_int(field, value, 0)


def check_priority(value: object, field: str = "priority") -> int:
    """A priority as enqueue takes it: an integer in -MAX_SAFE_INTEGER..MAX_SAFE_INTEGER.

    Raises:
        EnqueueValidationError: naming ``field`` and the broken rule.
    """
    return _check_int(field, value)


def later_instant(now: int, wait_ms: int) -> int:
    """``now + wait_ms``, capped at MAX_SAFE_INTEGER so a computed instant stays storable and JS-safe."""
    return min(MAX_SAFE_INTEGER, now + wait_ms)


def _check_key(field: str, value: object) -> None:
    if not isinstance(value, str):
        raise EnqueueValidationError(field, f"must be a string, got {type(value).__name__}")
    if not value:
        raise EnqueueValidationError(field, "must not be empty")
    if len(value) > MAX_KEY_CHARS:
        raise EnqueueValidationError(field, f"must be at most {MAX_KEY_CHARS} characters")


def _check_backoff(backoff: object) -> None:
    if isinstance(backoff, FixedBackoff):
        _check_int("backoff.delay_ms", backoff.delay_ms, 0)
        jitter = backoff.jitter
    elif isinstance(backoff, ExponentialBackoff):
        _check_int("backoff.base_ms", backoff.base_ms, 0)
        _check_int("backoff.max_ms", backoff.max_ms, 0)
        factor = cast(object, backoff.factor)  # callers may bypass typing
        if not is_finite_number(factor) or (isinstance(factor, int) and abs(factor) > MAX_SAFE_INTEGER):
            shown = shown_number(factor) if is_finite_number(factor) else repr(factor)
            raise EnqueueValidationError("backoff.factor", f"must be a finite number, got {shown}")
        if factor < 1:
            raise EnqueueValidationError("backoff.factor", "must be at least 1")
        jitter = backoff.jitter
    else:
        raise EnqueueValidationError("backoff", "must be a FixedBackoff or an ExponentialBackoff")
    if not isinstance(jitter, bool):  # pyright: ignore[reportUnnecessaryIsInstance]  # callers may bypass typing
        raise EnqueueValidationError("backoff.jitter", "must be a boolean")


def _check_timeout(value: object) -> None:
    timeout = _check_int("timeout_ms", value, 1)
    if timeout > MAX_TIMEOUT_MS:
        raise EnqueueValidationError(
            "timeout_ms",
            f"must be at most {MAX_TIMEOUT_MS} (14 minutes): a job runs inside one queue consumer "
            f"invocation, which Cloudflare stops after 15 minutes, got {timeout}",
        )


def _check_numbers(item: EnqueueOptions) -> None:
    if item.priority is not None:
        check_priority(item.priority)
    if item.max_attempts is not None:
        _check_int("max_attempts", item.max_attempts, 1)
    if item.timeout_ms is not None:
        _check_timeout(item.timeout_ms)
    if item.delay_ms is not None:
        _check_int("delay_ms", item.delay_ms, 0)
    if item.run_at is not None:
        check_instant("run_at", item.run_at)
    if item.run_at is not None and item.delay_ms is not None:
        raise EnqueueValidationError("run_at", "and delay_ms are mutually exclusive")
    if item.expires_at is not None:
        check_instant("expires_at", item.expires_at)
    if item.expires_in_ms is not None:
        _check_int("expires_in_ms", item.expires_in_ms, 1)
    if item.expires_at is not None and item.expires_in_ms is not None:
        raise EnqueueValidationError("expires_at", "and expires_in_ms are mutually exclusive")
    if item.unique_for_ms is not None:
        _check_int("unique_for_ms", item.unique_for_ms, 1)
    if item.backoff is not None:
        _check_backoff(item.backoff)
    if item.guarantee is not None and item.guarantee not in ("at-least-once", "at-most-once"):
        raise EnqueueValidationError("guarantee", "must be 'at-least-once' or 'at-most-once'")


_KEY_FIELDS: Final = ("concurrency_key", "unique_key", "partition_key", "id", "run_id", "node_id")
_key_values: Final = operator.attrgetter(*_KEY_FIELDS)


def _check_strings(item: EnqueueItem) -> None:
    for value in _key_values(item):
        if value is not None and (type(value) is not str or not value or len(value) > MAX_KEY_CHARS):
            # One is wrong: name the first field at fault (the loop above is the common case, without a call).
            for field, each in zip(_KEY_FIELDS, _key_values(item), strict=True):
                if each is not None:
                    _check_key(field, each)
    if item.node_id is not None and item.run_id is None:
        raise EnqueueValidationError("node_id", "requires run_id")
    if item.traceparent is not None and (
        not isinstance(item.traceparent, str) or not _TRACEPARENT_RE.fullmatch(item.traceparent)  # pyright: ignore[reportUnnecessaryIsInstance]
    ):
        raise EnqueueValidationError(
            "traceparent", "must be a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)"
        )
    if not isinstance(item.binding, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise EnqueueValidationError("binding", "must be a string")
    try:
        validate_binding_name(item.binding)
        if item.id is not None and parse_job_id(item.id).binding != item.binding:
            raise EnqueueValidationError("id", f"must belong to binding {item.binding}: {item.id}")
    except InvalidJobIdError as exc:
        field = "binding" if str(exc).startswith("invalid binding name") and item.id is None else "id"
        raise EnqueueValidationError(field, f"is invalid: {exc}") from None


def _encode_payload(payload: Any) -> str:
    try:
        check_portable(payload)  # ADR-0077: what cannot cross a queue, an RPC and JavaScript is refused here
    except InvalidValueError as exc:
        raise EnqueueValidationError(exc.path("payload"), exc.rule) from None
    except TypeError as exc:
        raise EnqueueValidationError("payload", f"must be JSON-serialisable: {exc}") from None
    try:
        encoded = msgspec.json.encode(payload)
    except (TypeError, ValueError, OverflowError) as exc:
        raise EnqueueValidationError("payload", f"must be JSON-serialisable: {exc}") from None
    if len(encoded) > MAX_PAYLOAD_BYTES:
        raise EnqueueValidationError(
            "payload", f"must be at most {MAX_PAYLOAD_BYTES} bytes as JSON, got {len(encoded)}"
        )
    if json_bound(len(encoded)) > MAX_PAYLOAD_QUEUE_BYTES:  # only a big payload is measured
        size = json_bytes(msgspec.json.decode(encoded))
        if size > MAX_PAYLOAD_QUEUE_BYTES:
            raise EnqueueValidationError(
                "payload",
                f"must be at most {MAX_PAYLOAD_QUEUE_BYTES} bytes as a queue message carries it (UTF-8 JSON as "
                f"JavaScript writes it, where a number such as 1e20 takes 21 digits), got {size}",
            )
    return encoded.decode()


def validate_enqueue(item: EnqueueItem) -> None:
    """Check every option of ``item``.

    Raises:
        EnqueueValidationError: the first broken rule, naming the field.
    """
    _check_strings(item)
    _check_numbers(item)
    _encode_payload(item.payload)


_Signed = Annotated[int, msgspec.Meta(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER)]
_NotNegative = Annotated[int, msgspec.Meta(ge=0, le=MAX_SAFE_INTEGER)]
_Positive = Annotated[int, msgspec.Meta(ge=1, le=MAX_SAFE_INTEGER)]
_Timeout = Annotated[int, msgspec.Meta(ge=1, le=MAX_TIMEOUT_MS)]
_Key = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_KEY_CHARS)]
_Traceparent = Annotated[str, msgspec.Meta(pattern=f"^{_TRACEPARENT_RE.pattern}$")]


class CheckedJob(msgspec.Struct, frozen=True, array_like=True):
    """An enqueue checked, its defaults applied and its payload encoded (ADR-0172).

    All of a `NewJob` but the instant it is stored, from which its times follow. What the scheduler's service
    sends a JobShard. Built by position in `check_enqueue` alone; an array on the wire (its field order is the
    wire form). The field types carry `check_enqueue`'s ranges, so decoding one refuses what the checks refuse
    (ADR-0173); `check_admissible` adds the rules a type cannot hold.
    """

    binding: str
    payload_json: str
    priority: _Signed
    max_attempts: _Positive
    backoff: Backoff
    timeout_ms: _Timeout
    guarantee: Guarantee
    concurrency_key: _Key | None
    unique_key: _Key | None
    unique_for_ms: _Positive
    run_at: _NotNegative | None
    delay_ms: _NotNegative | None
    expires_at: _NotNegative | None
    expires_in_ms: _Positive | None
    traceparent: _Traceparent | None
    id: _Key | None
    run_id: _Key | None
    node_id: _Key | None


_RAW: Final = msgspec.json.Decoder(msgspec.Raw)


def check_admissible(job: CheckedJob) -> None:
    """The rules of `check_enqueue` that a decoded `CheckedJob`'s types do not hold (ADR-0173).

    Its payload is one JSON value within `MAX_PAYLOAD_BYTES`; the options that exclude or need each other; the
    backoff's ranges.

    Raises:
        EnqueueValidationError: naming the field and the rule.
    """
    payload = job.payload_json
    if len(payload) > MAX_PAYLOAD_BYTES or (
        not payload.isascii() and len(payload.encode()) > MAX_PAYLOAD_BYTES
    ):
        raise EnqueueValidationError("payload", f"must be at most {MAX_PAYLOAD_BYTES} bytes as JSON")
    try:
        _RAW.decode(payload)
    except msgspec.DecodeError as exc:
        raise EnqueueValidationError("payload", f"must be one JSON value: {exc}") from None
    if job.run_at is not None and job.delay_ms is not None:
        raise EnqueueValidationError("run_at", "and delay_ms are mutually exclusive")
    if job.expires_at is not None and job.expires_in_ms is not None:
        raise EnqueueValidationError("expires_at", "and expires_in_ms are mutually exclusive")
    if job.node_id is not None and job.run_id is None:
        raise EnqueueValidationError("node_id", "requires run_id")
    _check_backoff(job.backoff)


def check_enqueue(item: EnqueueItem) -> CheckedJob:
    """Check every option of ``item`` and apply the defaults; the times wait for `admit_checked`.

    Raises:
        EnqueueValidationError: the first broken rule, naming the field.
    """
    _check_strings(item)
    _check_numbers(item)
    payload_json = _encode_payload(item.payload)
    # Positional, in CheckedJob's field order (tests/unit/core/test_options.py compares it with one built by name).
    return CheckedJob(
        item.binding,  # binding
        payload_json,  # payload_json
        DEFAULTS.priority if item.priority is None else item.priority,  # priority
        DEFAULTS.max_attempts if item.max_attempts is None else item.max_attempts,  # max_attempts
        DEFAULTS.backoff if item.backoff is None else item.backoff,  # backoff
        DEFAULTS.timeout_ms if item.timeout_ms is None else item.timeout_ms,  # timeout_ms
        DEFAULTS.guarantee if item.guarantee is None else Guarantee(item.guarantee),  # guarantee
        item.concurrency_key,  # concurrency_key
        item.unique_key,  # unique_key
        DEFAULTS.unique_for_ms if item.unique_for_ms is None else item.unique_for_ms,  # unique_for_ms
        item.run_at,  # run_at
        item.delay_ms,  # delay_ms
        item.expires_at,  # expires_at
        item.expires_in_ms,  # expires_in_ms
        item.traceparent,  # traceparent
        item.id,  # id
        item.run_id,  # run_id
        item.node_id,  # node_id
    )


def admit_checked(job: CheckedJob, now: int) -> NewJob:
    """The `NewJob` of a checked enqueue stored at the instant ``now``.

    ``run_after`` is ``run_at``, else ``now + delay_ms``, else ``now``; ``expires_at`` is the given instant
    or ``now + expires_in_ms``. Computed instants are capped at MAX_SAFE_INTEGER.
    """
    run_after = job.run_at if job.run_at is not None else later_instant(now, job.delay_ms or 0)
    expires_at = job.expires_at if job.expires_in_ms is None else later_instant(now, job.expires_in_ms)
    # Positional, in NewJob's field order (tests/unit/core/test_options.py compares it with one built by name).
    return NewJob(
        job.binding,  # binding
        job.payload_json,  # payload_json
        job.priority,  # priority
        job.max_attempts,  # max_attempts
        job.backoff,  # backoff
        job.timeout_ms,  # timeout_ms
        job.guarantee,  # guarantee
        job.concurrency_key,  # concurrency_key
        job.unique_key,  # unique_key
        job.unique_for_ms,  # unique_for_ms
        run_after,  # run_after
        expires_at,  # expires_at
        job.traceparent,  # traceparent
        job.id,  # id
        job.run_id,  # run_id
        job.node_id,  # node_id
        now,  # created_at
    )


def normalize_enqueue(item: EnqueueItem, now: int) -> NewJob:
    """Validate ``item`` and apply the defaults, as of the instant ``now`` (`check_enqueue`, `admit_checked`).

    Raises:
        EnqueueValidationError: the first broken rule, naming the field.
    """
    return admit_checked(check_enqueue(item), now)
