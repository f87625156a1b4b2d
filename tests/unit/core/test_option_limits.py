"""Every enqueue limit on both sides of its boundary, written as a literal number (issue 17).

A test that builds its data from ``MAX_PAYLOAD_BYTES`` passes whatever the constant says; these pin the
documented limits themselves, and the exact limit is shown allowed, not only the one past it refused.
"""

from __future__ import annotations

from typing import Any

import pytest

from tsumugi_core.errors import truncate_error
from tsumugi_core.options import EnqueueItem, EnqueueValidationError, ExponentialBackoff, validate_enqueue
from tsumugi_core.queue_size import json_bytes


def item(**options: Any) -> EnqueueItem:
    options.setdefault("payload", {"n": 1})
    return EnqueueItem(binding="MAIL", **options)


def refusal(**options: Any) -> str:
    with pytest.raises(EnqueueValidationError) as caught:
        validate_enqueue(item(**options))
    return str(caught.value)


@pytest.mark.parametrize("field", ["concurrency_key", "unique_key", "partition_key", "run_id"])
def test_a_key_of_512_characters_is_taken_and_513_refused(field: str) -> None:
    validate_enqueue(item(**{field: "k" * 512}))
    assert refusal(**{field: "k" * 513}) == f"{field} must be at most 512 characters"


def test_a_payload_of_102_400_json_bytes_is_taken_and_102_401_refused() -> None:
    validate_enqueue(item(payload="x" * 102_398))  # two quotes make 102,400 bytes
    assert refusal(payload="x" * 102_399) == "payload must be at most 102400 bytes as JSON, got 102401"


def test_a_payload_of_120_000_queue_bytes_is_taken_and_120_001_refused() -> None:
    # JavaScript writes 1e20 as 100000000000000000000: 21 bytes of the queue message's JSON, 4 of msgspec's.
    exact, over = [1e20] * 5_454 + ["x" * 8], [1e20] * 5_454 + ["x" * 9]
    assert (json_bytes(exact), json_bytes(over)) == (120_000, 120_001)
    validate_enqueue(item(payload=exact))
    assert refusal(payload=over) == (
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
    assert refusal(timeout_ms=840_001).startswith("timeout_ms must be at most 840000 (14 minutes)")


@pytest.mark.parametrize(
    ("factor", "shown"), [(True, "True"), (False, "False"), ("2", "'2'"), (None, "None")]
)
def test_a_backoff_factor_that_is_not_a_number_is_a_validation_error(factor: object, shown: str) -> None:
    message = refusal(backoff=ExponentialBackoff(factor=factor))  # type: ignore[arg-type]
    assert message == f"backoff.factor must be a finite number, got {shown}"


def test_a_backoff_factor_of_exactly_1_is_taken() -> None:
    validate_enqueue(item(backoff=ExponentialBackoff(factor=1)))
    assert refusal(backoff=ExponentialBackoff(factor=0.999)) == "backoff.factor must be at least 1"


def test_an_error_text_is_kept_whole_up_to_2000_characters_and_cut_there() -> None:
    assert truncate_error("e" * 2000) == "e" * 2000
    assert truncate_error("e" * 2001) == "e" * 2000
