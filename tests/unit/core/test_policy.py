"""Policy defaults, runtime changes that pin the whole settings (ADR-0058), and validation."""

from __future__ import annotations

from typing import Any

import pytest

from tsumugi_core.options import RateLimit
from tsumugi_core.policy import (
    DEFAULT_SETTINGS,
    Policy,
    PolicyPatch,
    PolicyValidationError,
    Retention,
    ShardSettings,
    apply_patch,
    effective_settings,
    validate_settings,
)


def test_defaults() -> None:
    assert DEFAULT_SETTINGS.policy == Policy(
        concurrency=100,
        rate=None,
        per_key_concurrency=1,
        per_key_rate=None,
        aging_interval_ms=60_000,
        reaper_grace_ms=30_000,
        paused=False,
    )
    assert DEFAULT_SETTINGS.retention == Retention(sweep_after_ms=300_000, failed_retention_ms=604_800_000)


CODE = ShardSettings(
    policy=Policy(concurrency=10, aging_interval_ms=5), retention=Retention(sweep_after_ms=1)
)


def test_a_patch_replaces_the_fields_it_sets_and_none_is_a_real_value() -> None:
    changed = apply_patch(CODE, PolicyPatch(paused=True, aging_interval_ms=None, failed_retention_ms=7))
    assert changed.policy == Policy(concurrency=10, aging_interval_ms=None, paused=True)
    assert changed.retention == Retention(sweep_after_ms=1, failed_retention_ms=7)
    assert apply_patch(CODE, PolicyPatch()) == CODE


def test_a_patch_of_retention_fields_alone_changes_retention() -> None:
    # Issue 17 item 1: a retention-only patch must not be ignored.
    assert apply_patch(CODE, PolicyPatch(sweep_after_ms=2)) == ShardSettings(
        policy=CODE.policy, retention=Retention(sweep_after_ms=2)
    )
    assert apply_patch(CODE, PolicyPatch(failed_retention_ms=3)).retention == Retention(
        sweep_after_ms=1, failed_retention_ms=3
    )


def test_a_patch_of_policy_fields_alone_keeps_retention() -> None:
    assert apply_patch(CODE, PolicyPatch(concurrency=2)) == ShardSettings(
        policy=Policy(concurrency=2, aging_interval_ms=5), retention=CODE.retention
    )


def test_pinned_settings_win_whole_over_the_code() -> None:
    pinned = ShardSettings(policy=Policy(concurrency=3))
    assert effective_settings(CODE, pinned) is pinned
    assert effective_settings(None, pinned) is pinned
    assert effective_settings(CODE, None) is CODE
    assert effective_settings(None, None) is DEFAULT_SETTINGS


BAD: list[tuple[dict[str, Any], str]] = [
    ({"concurrency": -1}, "concurrency must be at least 0"),
    ({"concurrency": 1.5}, "concurrency must be an integer"),
    ({"per_key_concurrency": 0}, "per_key_concurrency must be at least 1"),
    ({"rate": RateLimit(tokens=0, interval_ms=1)}, "rate.tokens must be at least 1"),
    ({"per_key_rate": RateLimit(tokens=1, interval_ms=0)}, "per_key_rate.interval_ms must be at least 1"),
    ({"rate": 5}, "rate must be a RateLimit or None"),
    ({"aging_interval_ms": 0}, "aging_interval_ms must be at least 1"),
    ({"reaper_grace_ms": -1}, "reaper_grace_ms must be at least 0"),
    ({"paused": "yes"}, "paused must be a boolean"),
    ({"sweep_after_ms": -1}, "sweep_after_ms must be at least 0"),
    ({"failed_retention_ms": True}, "failed_retention_ms must be an integer"),
]


@pytest.mark.parametrize(("fields", "message"), BAD)
def test_patch_validation_names_the_field(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyValidationError, match=message):
        validate_settings(PolicyPatch(**fields))


def test_full_settings_are_validated_too() -> None:
    validate_settings(DEFAULT_SETTINGS)
    with pytest.raises(PolicyValidationError, match="concurrency must be at least 0"):
        validate_settings(ShardSettings(policy=Policy(concurrency=-5)))
    with pytest.raises(PolicyValidationError, match="sweep_after_ms must be at least 0"):
        validate_settings(ShardSettings(retention=Retention(sweep_after_ms=-5)))


# Policy numbers up to 2^53 - 1 and not one more, and the error's field and rule apart.


def test_the_largest_safe_integer_is_taken_and_one_more_is_refused_naming_the_field() -> None:
    validate_settings(PolicyPatch(concurrency=9_007_199_254_740_991, reaper_grace_ms=9_007_199_254_740_991))
    with pytest.raises(PolicyValidationError) as caught:
        validate_settings(PolicyPatch(reaper_grace_ms=9_007_199_254_740_992))
    assert (caught.value.field, caught.value.rule, str(caught.value)) == (
        "reaper_grace_ms",
        "must be at most 9007199254740991",
        "reaper_grace_ms must be at most 9007199254740991",
    )
