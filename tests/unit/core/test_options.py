"""Enqueue defaults and every validation rule, with the message naming the field and the rule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from tsumugi_core.errors import truncate_error
from tsumugi_core.options import (
    DEFAULTS,
    MAX_KEY_CHARS,
    MAX_PAYLOAD_BYTES,
    MAX_PAYLOAD_QUEUE_BYTES,
    MAX_SAFE_INTEGER,
    MAX_TIMEOUT_MS,
    CheckedJob,
    EnqueueItem,
    EnqueueValidationError,
    ExponentialBackoff,
    FixedBackoff,
    Guarantee,
    NewJob,
    admit_checked,
    check_enqueue,
    check_instant,
    check_priority,
    later_instant,
    normalize_enqueue,
    validate_enqueue,
)
from tsumugi_core.queue_size import json_bytes


def item(**options: Any) -> EnqueueItem:
    options.setdefault("payload", {"n": 1})
    return EnqueueItem(binding=options.pop("binding", "MAIL"), **options)


def test_defaults_are_the_originals() -> None:
    job = normalize_enqueue(item(), now=1000)
    assert (job.priority, job.max_attempts, job.timeout_ms, job.guarantee, job.unique_for_ms) == (
        0,
        3,
        60_000,
        Guarantee.AT_LEAST_ONCE,
        86_400_000,
    )
    assert job.backoff == ExponentialBackoff(base_ms=1000, factor=2, max_ms=3_600_000, jitter=True)
    assert DEFAULTS.backoff == job.backoff
    assert (job.run_after, job.created_at, job.expires_at) == (1000, 1000, None)
    assert job.payload_json == '{"n":1}'


def test_computed_instants_are_capped_at_max_safe_integer() -> None:
    job = normalize_enqueue(item(delay_ms=MAX_SAFE_INTEGER, expires_in_ms=MAX_SAFE_INTEGER), now=1000)
    assert (job.run_after, job.expires_at) == (MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    assert later_instant(1000, 5) == 1005


def _run_after(value: object) -> int:
    return check_instant("run_after", value)


@pytest.mark.parametrize(
    ("check", "value", "message"),
    [
        (_run_after, -1, "run_after must not be negative"),
        (
            _run_after,
            2**64,
            f"run_after must be between 0 and {MAX_SAFE_INTEGER}",
        ),
        (_run_after, 1.0, "run_after must be an integer, got 1.0"),
        (check_priority, 2**64, f"priority must be between -{MAX_SAFE_INTEGER} and {MAX_SAFE_INTEGER}"),
        (check_priority, "1", "priority must be an integer, got '1'"),
    ],
)
def test_the_shared_instant_and_priority_checks_name_the_field(
    check: Callable[[object], int], value: object, message: str
) -> None:
    with pytest.raises(EnqueueValidationError) as caught:
        check(value)
    assert str(caught.value) == message


def test_the_shared_checks_return_valid_values() -> None:
    assert (check_instant("run_after", MAX_SAFE_INTEGER), check_priority(-MAX_SAFE_INTEGER)) == (
        MAX_SAFE_INTEGER,
        -MAX_SAFE_INTEGER,
    )


def test_run_after_and_expiry_are_resolved_against_now() -> None:
    assert normalize_enqueue(item(delay_ms=500), now=1000).run_after == 1500
    assert normalize_enqueue(item(run_at=7), now=1000).run_after == 7
    assert normalize_enqueue(item(expires_in_ms=50), now=1000).expires_at == 1050
    assert normalize_enqueue(item(expires_at=9), now=1000).expires_at == 9
    assert normalize_enqueue(item(guarantee="at-most-once"), now=0).guarantee is Guarantee.AT_MOST_ONCE


BAD = [
    ({"priority": 1.5}, "priority must be an integer, got 1.5"),
    ({"priority": True}, "priority must be an integer, got True"),
    ({"priority": 2**60}, "priority must be between"),
    ({"max_attempts": 0}, "max_attempts must be at least 1"),
    ({"timeout_ms": 0}, "timeout_ms must be at least 1"),
    (
        {"timeout_ms": MAX_TIMEOUT_MS + 1},
        f"timeout_ms must be at most {MAX_TIMEOUT_MS} (14 minutes): a job runs",
    ),
    (
        {"payload": [1e20] * 6_000},
        f"payload must be at most {MAX_PAYLOAD_QUEUE_BYTES} bytes as a queue message",
    ),
    ({"delay_ms": -1}, "delay_ms must not be negative"),
    ({"run_at": -5}, "run_at must not be negative"),
    ({"run_at": 2**53}, f"run_at must be between 0 and {MAX_SAFE_INTEGER}"),
    ({"delay_ms": 2**53}, f"delay_ms must be between 0 and {MAX_SAFE_INTEGER}"),
    ({"max_attempts": 2**53}, f"max_attempts must be between 1 and {MAX_SAFE_INTEGER}"),
    ({"run_at": 5, "delay_ms": 1}, "run_at and delay_ms are mutually exclusive"),
    ({"expires_at": 5, "expires_in_ms": 1}, "expires_at and expires_in_ms are mutually exclusive"),
    ({"expires_in_ms": 0}, "expires_in_ms must be at least 1"),
    ({"unique_for_ms": 0}, "unique_for_ms must be at least 1"),
    ({"backoff": FixedBackoff(delay_ms=-1)}, "backoff.delay_ms must not be negative"),
    ({"backoff": ExponentialBackoff(base_ms=-1)}, "backoff.base_ms must not be negative"),
    ({"backoff": ExponentialBackoff(max_ms=-1)}, "backoff.max_ms must not be negative"),
    ({"backoff": ExponentialBackoff(factor=0.5)}, "backoff.factor must be at least 1"),
    ({"backoff": ExponentialBackoff(factor=float("nan"))}, "backoff.factor must be a finite number"),
    ({"backoff": FixedBackoff(delay_ms=1, jitter=1)}, "backoff.jitter must be a boolean"),  # type: ignore[arg-type]
    ({"backoff": {"kind": "fixed"}}, "backoff must be a FixedBackoff or an ExponentialBackoff"),
    ({"guarantee": "exactly-once"}, "guarantee must be 'at-least-once' or 'at-most-once'"),
    ({"concurrency_key": ""}, "concurrency_key must not be empty"),
    ({"unique_key": "k" * (MAX_KEY_CHARS + 1)}, f"unique_key must be at most {MAX_KEY_CHARS} characters"),
    ({"partition_key": 3}, "partition_key must be a string, got int"),
    ({"node_id": "n"}, "node_id requires run_id"),
    ({"traceparent": "nope"}, "traceparent must be a W3C traceparent"),
    ({"binding": "9MAIL"}, "binding is invalid: invalid binding name"),
    ({"id": "MAIL:abc"}, 'id is invalid: missing "#"'),
    ({"id": "OTHER#0:abc"}, "id must belong to binding MAIL: OTHER#0:abc"),
    ({"payload": object()}, "payload must be JSON-serialisable"),
    ({"payload": {"n": complex(1, 2)}}, "payload must be JSON-serialisable"),
    ({"payload": "x" * MAX_PAYLOAD_BYTES}, f"payload must be at most {MAX_PAYLOAD_BYTES} bytes as JSON"),
]


@pytest.mark.parametrize(("options", "message"), BAD)
def test_each_rule_has_a_message_naming_the_field(options: dict[str, Any], message: str) -> None:
    with pytest.raises(EnqueueValidationError) as info:
        validate_enqueue(item(**options))
    assert str(info.value).startswith(message)
    assert str(info.value).startswith(info.value.field)
    with pytest.raises(EnqueueValidationError):
        normalize_enqueue(item(**options), now=0)


def test_valid_edge_values_pass() -> None:
    validate_enqueue(
        item(
            priority=-3,
            max_attempts=1,
            timeout_ms=1,
            delay_ms=0,
            unique_for_ms=1,
            expires_in_ms=1,
            backoff=ExponentialBackoff(base_ms=0, factor=1),
            traceparent="00-" + "a" * 32 + "-" + "b" * 16 + "-01",
            id="MAIL#2:abc",
            run_id="flow:r",
            node_id="n",
            payload="x" * (MAX_PAYLOAD_BYTES - 2),
        )
    )


def test_wire_form_is_camel_case_and_round_trips() -> None:
    original = item(max_attempts=2, backoff=FixedBackoff(delay_ms=3), concurrency_key="k")
    wire = msgspec.json.encode(original)
    assert b'"maxAttempts":2' in wire
    assert b'"backoff":{"kind":"fixed","delayMs":3,"jitter":true}' in wire
    assert b"priority" not in wire  # unset options stay off the wire
    assert msgspec.json.decode(wire, type=EnqueueItem) == original


# Every option given to an enqueue reaches the new job, and each refusal names its field: the explicit values
# of ``normalize_enqueue`` (not only the defaults), a valid ``FixedBackoff``, ``expires_at``'s name, the
# explicit ``at-least-once``, and the attributes of the validation error.


TRACEPARENT = "00-" + "a" * 32 + "-" + "b" * 16 + "-01"


def refusal(item: EnqueueItem) -> EnqueueValidationError:
    with pytest.raises(EnqueueValidationError) as caught:
        validate_enqueue(item)
    return caught.value


def test_every_given_option_reaches_the_new_job() -> None:
    backoff = FixedBackoff(delay_ms=250, jitter=False)
    given = EnqueueItem(
        binding="MAIL",
        payload={"n": 1},
        priority=7,
        max_attempts=9,
        backoff=backoff,
        timeout_ms=5_000,
        guarantee=Guarantee.AT_MOST_ONCE,
        concurrency_key="ck",
        unique_key="uk",
        unique_for_ms=60_000,
        run_at=2_000,
        expires_at=9_000,
        traceparent=TRACEPARENT,
        id="MAIL#3:given",
        run_id="flow:r1",
        node_id="n1",
    )
    assert normalize_enqueue(given, now=1_000) == NewJob(
        binding="MAIL",
        payload_json='{"n":1}',
        priority=7,
        max_attempts=9,
        backoff=backoff,
        timeout_ms=5_000,
        guarantee=Guarantee.AT_MOST_ONCE,
        concurrency_key="ck",
        unique_key="uk",
        unique_for_ms=60_000,
        run_after=2_000,
        expires_at=9_000,
        traceparent=TRACEPARENT,
        id="MAIL#3:given",
        run_id="flow:r1",
        node_id="n1",
        created_at=1_000,
    )


def test_a_checked_job_carries_every_option_in_its_place_and_crosses_as_an_array() -> None:
    backoff = FixedBackoff(delay_ms=250, jitter=False)
    given = EnqueueItem(
        binding="MAIL",
        payload={"n": 1},
        priority=7,
        max_attempts=9,
        backoff=backoff,
        timeout_ms=5_000,
        guarantee=Guarantee.AT_MOST_ONCE,
        concurrency_key="ck",
        unique_key="uk",
        unique_for_ms=60_000,
        delay_ms=1_500,
        expires_in_ms=8_000,
        traceparent=TRACEPARENT,
        id="MAIL#3:given",
        run_id="flow:r1",
        node_id="n1",
    )
    by_name = CheckedJob(
        binding="MAIL",
        payload_json='{"n":1}',
        priority=7,
        max_attempts=9,
        backoff=backoff,
        timeout_ms=5_000,
        guarantee=Guarantee.AT_MOST_ONCE,
        concurrency_key="ck",
        unique_key="uk",
        unique_for_ms=60_000,
        run_at=None,
        delay_ms=1_500,
        expires_at=None,
        expires_in_ms=8_000,
        traceparent=TRACEPARENT,
        id="MAIL#3:given",
        run_id="flow:r1",
        node_id="n1",
    )
    checked = check_enqueue(given)
    assert checked == by_name
    wire = msgspec.json.encode(checked)
    assert wire.startswith(b'["MAIL","{\\"n\\":1}",7,9,')  # an array: no field names cross
    assert msgspec.json.decode(wire, type=CheckedJob) == checked
    # The times follow from the instant the shard stores it.
    job = admit_checked(checked, 1_000)
    assert (job.run_after, job.expires_at, job.created_at) == (2_500, 9_000, 1_000)
    assert admit_checked(checked, 2_000).run_after == 3_500


def test_a_checked_job_takes_the_defaults_and_its_given_instants() -> None:
    checked = check_enqueue(EnqueueItem(binding="MAIL", payload=None, run_at=4_000, expires_at=7_000))
    assert (checked.priority, checked.max_attempts, checked.backoff, checked.timeout_ms) == (
        DEFAULTS.priority,
        DEFAULTS.max_attempts,
        DEFAULTS.backoff,
        DEFAULTS.timeout_ms,
    )
    assert (checked.guarantee, checked.unique_for_ms, checked.payload_json) == (
        DEFAULTS.guarantee,
        DEFAULTS.unique_for_ms,
        "null",
    )
    job = admit_checked(checked, 1_000)
    assert (job.run_after, job.expires_at) == (4_000, 7_000)
    assert admit_checked(check_enqueue(EnqueueItem(binding="MAIL", payload=1)), 1_000).run_after == 1_000


def test_check_enqueue_refuses_what_validate_enqueue_refuses() -> None:
    with pytest.raises(EnqueueValidationError, match="max_attempts must be at least 1"):
        check_enqueue(EnqueueItem(binding="MAIL", payload=None, max_attempts=0))
    with pytest.raises(EnqueueValidationError, match="payload must be at most 102400 bytes"):
        check_enqueue(EnqueueItem(binding="MAIL", payload="x" * 102_399))


def test_a_fixed_backoff_and_an_explicit_at_least_once_are_taken() -> None:
    validate_enqueue(EnqueueItem(binding="MAIL", payload=1, backoff=FixedBackoff(delay_ms=0, jitter=True)))
    validate_enqueue(EnqueueItem(binding="MAIL", payload=1, guarantee=Guarantee.AT_LEAST_ONCE))
    bad: Any = "yes"
    error = refusal(EnqueueItem(binding="MAIL", payload=1, backoff=FixedBackoff(delay_ms=0, jitter=bad)))
    assert (error.field, error.rule) == ("backoff.jitter", "must be a boolean")


def test_the_error_carries_the_field_and_the_rule_apart() -> None:
    error = refusal(EnqueueItem(binding="MAIL", payload=1, expires_at=-1))
    assert (error.field, error.rule, str(error)) == (
        "expires_at",
        "must not be negative",
        "expires_at must not be negative",
    )


def test_a_binding_that_is_not_a_string_is_refused_on_binding() -> None:
    not_a_string: Any = 5
    error = refusal(EnqueueItem(binding=not_a_string, payload=1))
    assert (error.field, error.rule) == ("binding", "must be a string")


def test_a_bad_binding_is_reported_on_binding_and_with_an_explicit_id_on_id() -> None:
    assert refusal(EnqueueItem(binding="bad name", payload=1)).field == "binding"
    # With an explicit id the binding is the id's binding part, so the id is what the caller must fix.
    assert refusal(EnqueueItem(binding="bad name", payload=1, id="MAIL#0:x")).field == "id"


# Every enqueue limit on both sides of its boundary, written as a literal number. A test that builds its data
# from ``MAX_PAYLOAD_BYTES`` passes whatever the constant says; these pin the documented limits themselves,
# and the exact limit is shown allowed, not only the one past it refused.


def refusal_words(**options: Any) -> str:
    with pytest.raises(EnqueueValidationError) as caught:
        validate_enqueue(item(**options))
    return str(caught.value)


@pytest.mark.parametrize("field", ["concurrency_key", "unique_key", "partition_key", "run_id"])
def test_a_key_of_512_characters_is_taken_and_513_refused(field: str) -> None:
    validate_enqueue(item(**{field: "k" * 512}))
    assert refusal_words(**{field: "k" * 513}) == f"{field} must be at most 512 characters"


def test_a_payload_of_102_400_json_bytes_is_taken_and_102_401_refused() -> None:
    validate_enqueue(item(payload="x" * 102_398))  # two quotes make 102,400 bytes
    assert refusal_words(payload="x" * 102_399) == "payload must be at most 102400 bytes as JSON, got 102401"


def test_a_payload_of_120_000_queue_bytes_is_taken_and_120_001_refused() -> None:
    # JavaScript writes 1e20 as 100000000000000000000: 21 bytes of the queue message's JSON, 4 of msgspec's.
    exact, over = [1e20] * 5_454 + ["x" * 8], [1e20] * 5_454 + ["x" * 9]
    assert (json_bytes(exact), json_bytes(over)) == (120_000, 120_001)
    validate_enqueue(item(payload=exact))
    assert refusal_words(payload=over) == (
        "payload must be at most 120000 bytes as a queue message carries it (UTF-8 JSON as JavaScript writes "
        "it, where a number such as 1e20 takes 21 digits), got 120001"
    )


def test_a_payload_json_cannot_write_is_refused_naming_the_field_and_msgspecs_reason() -> None:
    with pytest.raises(EnqueueValidationError) as caught:
        validate_enqueue(item(payload="\ud800"))  # a lone surrogate: portable, but not UTF-8
    assert (caught.value.field, caught.value.rule) == (
        "payload",
        "must be JSON-serialisable: 'utf-8' codec can't encode character '\\ud800' in position 0: "
        "surrogates not allowed",
    )


def test_a_payload_portable_refuses_names_the_path_and_the_rule() -> None:
    with pytest.raises(EnqueueValidationError) as caught:
        validate_enqueue(item(payload={"n": 2**64}))
    assert (caught.value.field, caught.value.rule) == (
        "payload.n",
        "must be an integer between -9007199254740991 and 9007199254740991 (JavaScript's safe integers), "
        "got 18446744073709551616",
    )


def test_a_payload_of_14_000_halves_is_taken() -> None:
    # 56,001 bytes of JSON; 126,002 as V8 would serialise it, which the V8 rule refused (issue 22, item 3).
    validate_enqueue(item(payload=[0.5] * 14_000))
    assert json_bytes([0.5] * 14_000) == 56_001


def test_a_timeout_of_840_000_ms_is_taken_and_840_001_refused() -> None:
    validate_enqueue(item(timeout_ms=840_000))
    assert refusal_words(timeout_ms=840_001).startswith("timeout_ms must be at most 840000 (14 minutes)")


@pytest.mark.parametrize(
    ("factor", "shown"), [(True, "True"), (False, "False"), ("2", "'2'"), (None, "None")]
)
def test_a_backoff_factor_that_is_not_a_number_is_a_validation_error(factor: object, shown: str) -> None:
    message = refusal_words(backoff=ExponentialBackoff(factor=factor))  # type: ignore[arg-type]
    assert message == f"backoff.factor must be a finite number, got {shown}"


def test_a_backoff_factor_past_a_floats_range_is_a_validation_error_not_an_overflow() -> None:
    # math.isfinite(10**400) raised OverflowError; such a factor could not be stored either.
    assert refusal_words(backoff=ExponentialBackoff(factor=10**400)) == (
        "backoff.factor must be a finite number, got an integer of about 401 digits"
    )


def test_a_payload_integer_of_thousands_of_digits_is_refused_by_its_rule() -> None:
    # str() of an integer of over 4,300 digits raises ValueError: the rule's message would have been lost.
    assert refusal_words(payload={"n": 10**5_000}).startswith(
        "payload.n must be an integer between -9007199254740991 and 9007199254740991"
    )


def test_a_backoff_factor_of_exactly_1_is_taken() -> None:
    validate_enqueue(item(backoff=ExponentialBackoff(factor=1)))
    assert refusal_words(backoff=ExponentialBackoff(factor=0.999)) == "backoff.factor must be at least 1"


def test_an_error_text_is_kept_whole_up_to_2000_characters_and_cut_there() -> None:
    assert truncate_error("e" * 2000) == "e" * 2000
    assert truncate_error("e" * 2001) == "e" * 2000
