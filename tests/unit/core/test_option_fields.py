"""Every option given to an enqueue reaches the new job, and each refusal names its field (issue 17).

Mutation testing showed options that were dropped or renamed with no test noticing: the explicit values of
``normalize_enqueue`` (only defaults were checked), a valid ``FixedBackoff``, ``expires_at``'s name, the
explicit ``at-least-once``, and the attributes of the validation error.
"""

from __future__ import annotations

from typing import Any

import pytest

from tsumugi_core.options import (
    EnqueueItem,
    EnqueueValidationError,
    FixedBackoff,
    Guarantee,
    NewJob,
    normalize_enqueue,
    validate_enqueue,
)

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
