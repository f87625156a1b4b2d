"""Per-shard policy (throttling, aging, reaper grace, pause) and retention, and runtime pins.

The code's settings arrive with every enqueue. A runtime change (REST policy, ``configure``) pins the whole
settings of the shard, every field as in force at that moment with the change applied; from then on the code's
settings do not apply at all until the pin is reset (ADR-0058).

Example:
    >>> code = ShardSettings(policy=Policy(concurrency=10))
    >>> pinned = apply_patch(code, PolicyPatch(paused=True))
    >>> (pinned.policy.concurrency, pinned.policy.paused)
    (10, True)
    >>> effective_settings(ShardSettings(policy=Policy(concurrency=50)), pinned).policy.concurrency
    10
    >>> effective_settings(None, None) == DEFAULT_SETTINGS
    True
"""

from __future__ import annotations

from typing import Final

import msgspec
from msgspec import UNSET, UnsetType

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.options import MAX_SAFE_INTEGER, RateLimit

__all__ = [
    "DEFAULT_SETTINGS",
    "Policy",
    "PolicyPatch",
    "PolicyValidationError",
    "Retention",
    "ShardSettings",
    "apply_patch",
    "effective_settings",
    "validate_settings",
]


class PolicyValidationError(InvalidFieldError):
    """A policy or retention field broke a rule; the message is ``<field> <rule>``.

    Attributes:
        field: The field's Python name.
        rule: What the value must satisfy.
    """


class Policy(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """How a shard dispatches: throttles on four axes, aging, reaper grace and pause."""

    concurrency: int = 100
    rate: RateLimit | None = None
    per_key_concurrency: int = 1
    per_key_rate: RateLimit | None = None
    aging_interval_ms: int | None = 60_000
    """None disables aging."""
    reaper_grace_ms: int = 30_000
    paused: bool = False


class Retention(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """How long finished jobs stay in the shard."""

    sweep_after_ms: int = 300_000
    """COMPLETED and CANCELLED jobs."""
    failed_retention_ms: int = 604_800_000
    """FAILED and STALLED jobs: the manual-retry window."""


class ShardSettings(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Everything a shard is configured with."""

    policy: Policy = Policy()
    retention: Retention = Retention()


DEFAULT_SETTINGS: Final = ShardSettings()


class PolicyPatch(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """A runtime change: the fields to set; UNSET keeps a field's current value (None is a real value)."""

    concurrency: int | UnsetType = UNSET
    rate: RateLimit | UnsetType | None = UNSET
    per_key_concurrency: int | UnsetType = UNSET
    per_key_rate: RateLimit | UnsetType | None = UNSET
    aging_interval_ms: int | UnsetType | None = UNSET
    reaper_grace_ms: int | UnsetType = UNSET
    paused: bool | UnsetType = UNSET
    sweep_after_ms: int | UnsetType = UNSET
    failed_retention_ms: int | UnsetType = UNSET


_POLICY_FIELDS: Final = Policy.__struct_fields__
_RETENTION_FIELDS: Final = Retention.__struct_fields__


def _check_int(field: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PolicyValidationError(field, f"must be an integer, got {value!r}")
    if value < minimum:
        raise PolicyValidationError(field, f"must be at least {minimum}")
    if value > MAX_SAFE_INTEGER:
        raise PolicyValidationError(field, f"must be at most {MAX_SAFE_INTEGER}")


def _check_rate(field: str, rate: object) -> None:
    if rate is None:
        return
    if not isinstance(rate, RateLimit):
        raise PolicyValidationError(field, "must be a RateLimit or None")
    _check_int(f"{field}.tokens", rate.tokens, 1)
    _check_int(f"{field}.interval_ms", rate.interval_ms, 1)


def _check_field(field: str, value: object) -> None:
    if field in ("rate", "per_key_rate"):
        _check_rate(field, value)
    elif field == "paused":
        if not isinstance(value, bool):
            raise PolicyValidationError(field, "must be a boolean")
    elif field == "aging_interval_ms":
        if value is not None:
            _check_int(field, value, 1)
    elif field == "per_key_concurrency":
        _check_int(field, value, 1)
    else:
        # concurrency 0 is a legal (original) way to hold dispatch; grace and retention may be zero.
        _check_int(field, value, 0)


def validate_settings(settings: ShardSettings | PolicyPatch) -> None:
    """Check every field that is set.

    Raises:
        PolicyValidationError: the first broken rule, naming the field.
    """
    if isinstance(settings, PolicyPatch):
        for field in PolicyPatch.__struct_fields__:
            value = getattr(settings, field)
            if value is not UNSET:
                _check_field(field, value)
        return
    for field in _POLICY_FIELDS:
        _check_field(field, getattr(settings.policy, field))
    for field in _RETENTION_FIELDS:
        _check_field(field, getattr(settings.retention, field))


def apply_patch(settings: ShardSettings, patch: PolicyPatch) -> ShardSettings:
    """``settings`` with every field set in ``patch`` replaced; the settings a runtime change pins.

    Policy and retention fields are applied alike, so a patch of retention fields alone changes retention.
    """
    policy_changes = {f: getattr(patch, f) for f in _POLICY_FIELDS if getattr(patch, f) is not UNSET}
    retention_changes = {f: getattr(patch, f) for f in _RETENTION_FIELDS if getattr(patch, f) is not UNSET}
    return ShardSettings(
        policy=msgspec.structs.replace(settings.policy, **policy_changes),
        retention=msgspec.structs.replace(settings.retention, **retention_changes),
    )


def effective_settings(code: ShardSettings | None, pinned: ShardSettings | None) -> ShardSettings:
    """The settings in force: the pinned ones whole when a runtime change pinned them, else the code's.

    None for ``code`` means the code configures nothing (the defaults).
    """
    if pinned is not None:
        return pinned
    return code if code is not None else DEFAULT_SETTINGS
