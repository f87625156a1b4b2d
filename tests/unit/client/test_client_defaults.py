"""on_enqueue defaults: the caller wins, only defaultable options, None = nothing.

Source: docs/reference/additions.md A1.
"""

from __future__ import annotations

from typing import Any

import pytest

from tsumugi_client import DEFAULTABLE_OPTIONS, NOT_DEFAULTABLE_OPTIONS, apply_defaults
from tsumugi_core.options import (
    EnqueueItem,
    EnqueueOptions,
    EnqueueValidationError,
    FixedBackoff,
    Guarantee,
)

ITEM = EnqueueItem(binding="MAIL", payload={"to": "a"})


def test_none_means_no_defaults_and_returns_the_item_unchanged() -> None:
    assert apply_defaults(ITEM, None) is ITEM


def test_defaults_fill_options_the_caller_left_out() -> None:
    backoff = FixedBackoff(delay_ms=250)
    merged = apply_defaults(
        ITEM, {"priority": 3, "max_attempts": 7, "backoff": backoff, "guarantee": Guarantee.AT_MOST_ONCE}
    )
    assert (merged.priority, merged.max_attempts, merged.backoff, merged.guarantee) == (
        3,
        7,
        backoff,
        Guarantee.AT_MOST_ONCE,
    )
    assert (merged.binding, merged.payload) == ("MAIL", {"to": "a"})


def test_the_caller_always_wins() -> None:
    item = EnqueueItem(binding="MAIL", payload=None, priority=9, concurrency_key="mine", timeout_ms=5)
    merged = apply_defaults(
        item, {"priority": 1, "concurrency_key": "theirs", "timeout_ms": 99, "max_attempts": 2}
    )
    assert (merged.priority, merged.concurrency_key, merged.timeout_ms) == (9, "mine", 5)
    assert merged.max_attempts == 2


def test_a_caller_value_of_zero_still_wins() -> None:
    # 0 is a real choice (priority 0, delay 0), not "left out".
    item = EnqueueItem(binding="MAIL", payload=None, priority=0, delay_ms=0)
    merged = apply_defaults(item, {"priority": 5, "delay_ms": 1000})
    assert (merged.priority, merged.delay_ms) == (0, 0)


@pytest.mark.parametrize(
    ("caller", "defaults", "expected"),
    [
        ({"delay_ms": 10}, {"run_at": 5_000}, {"delay_ms": 10, "run_at": None}),
        ({"run_at": 5_000}, {"delay_ms": 10}, {"run_at": 5_000, "delay_ms": None}),
        ({"expires_at": 9_000}, {"expires_in_ms": 60}, {"expires_at": 9_000, "expires_in_ms": None}),
        ({"expires_in_ms": 60}, {"expires_at": 9_000}, {"expires_in_ms": 60, "expires_at": None}),
        ({}, {"run_at": 5_000}, {"run_at": 5_000, "delay_ms": None}),
    ],
)
def test_a_caller_choice_of_when_blocks_the_other_member_of_the_pair(
    caller: dict[str, Any], defaults: dict[str, int], expected: dict[str, int | None]
) -> None:
    merged = apply_defaults(EnqueueItem(binding="MAIL", payload=None, **caller), defaults)
    assert {name: getattr(merged, name) for name in expected} == expected


@pytest.mark.parametrize(
    "option",
    ["binding", "payload", "unique_key", "unique_for_ms", "partition_key", "id", "run_id", "node_id"],
)
def test_not_defaultable_options_are_refused_by_name(option: str) -> None:
    with pytest.raises(EnqueueValidationError) as caught:
        apply_defaults(ITEM, {option: "x"})
    assert caught.value.field == option
    assert "is not defaultable" in caught.value.rule


def test_an_unknown_option_is_refused_by_name() -> None:
    with pytest.raises(EnqueueValidationError) as caught:
        apply_defaults(ITEM, {"max_attempt": 3})
    assert (caught.value.field, caught.value.rule) == (
        "max_attempt",
        "is not an enqueue option (returned by on_enqueue)",
    )


def test_both_members_of_an_exclusive_pair_in_the_defaults_are_refused() -> None:
    with pytest.raises(EnqueueValidationError, match="run_at and delay_ms are mutually exclusive"):
        apply_defaults(ITEM, {"run_at": 1, "delay_ms": 2})


def test_none_values_in_the_defaults_are_ignored() -> None:
    assert apply_defaults(ITEM, {"priority": None, "unique_key": None}) is ITEM


def test_an_enqueue_options_value_supplies_only_its_set_fields() -> None:
    merged = apply_defaults(
        ITEM, EnqueueOptions(priority=4, traceparent="00-" + "a" * 32 + "-" + "b" * 16 + "-01")
    )
    assert merged.priority == 4
    assert merged.traceparent is not None
    assert merged.max_attempts is None


def test_an_enqueue_options_value_with_a_not_defaultable_field_is_refused() -> None:
    with pytest.raises(EnqueueValidationError) as caught:
        apply_defaults(ITEM, EnqueueOptions(partition_key="p"))
    assert caught.value.field == "partition_key"


def test_a_hook_returning_something_else_is_refused() -> None:
    with pytest.raises(EnqueueValidationError, match="on_enqueue must return a mapping"):
        apply_defaults(ITEM, [("priority", 1)])  # type: ignore[arg-type]


def test_the_two_lists_cover_every_enqueue_field_exactly_once() -> None:
    fields = set(EnqueueItem.__struct_fields__)
    assert set(DEFAULTABLE_OPTIONS) | set(NOT_DEFAULTABLE_OPTIONS) == fields
    assert not set(DEFAULTABLE_OPTIONS) & set(NOT_DEFAULTABLE_OPTIONS)
