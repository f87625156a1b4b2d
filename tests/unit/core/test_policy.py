"""Policy defaults, runtime pins over code settings field by field, and validation."""

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
    combine_patches,
    merge_settings,
    validate_settings,
)


def test_defaults() -> None:
    assert DEFAULT_SETTINGS.policy == Policy(
        concurrency=100, rate=None, per_key_concurrency=1, per_key_rate=None,
        aging_interval_ms=60_000, reaper_grace_ms=30_000, paused=False,
    )  # fmt: skip
    assert DEFAULT_SETTINGS.retention == Retention(sweep_after_ms=300_000, failed_retention_ms=604_800_000)


def test_pins_win_field_by_field_and_none_is_a_real_pin() -> None:
    code = ShardSettings(
        policy=Policy(concurrency=10, aging_interval_ms=5), retention=Retention(sweep_after_ms=1)
    )
    merged = merge_settings(code, PolicyPatch(paused=True, aging_interval_ms=None, failed_retention_ms=7))
    assert merged.policy == Policy(concurrency=10, aging_interval_ms=None, paused=True)
    assert merged.retention == Retention(sweep_after_ms=1, failed_retention_ms=7)
    assert merge_settings(code, None) is code
    assert merge_settings(None, PolicyPatch()) == DEFAULT_SETTINGS


def test_configure_twice_keeps_earlier_pins() -> None:
    pins = combine_patches(PolicyPatch(concurrency=2), PolicyPatch(paused=True))
    assert pins == PolicyPatch(concurrency=2, paused=True)
    assert combine_patches(pins, PolicyPatch(concurrency=3)).concurrency == 3


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
