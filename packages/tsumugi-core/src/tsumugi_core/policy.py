"""Per-shard policy (throttling, aging, reaper grace, pause) and retention, plus runtime pins.

The code's settings arrive with every enqueue; an operator's runtime ``configure`` pins individual fields
over them. The effective settings are the code's, field by field overridden by the pins.

Example:
    >>> code = ShardSettings(policy=Policy(concurrency=10))
    >>> merge_settings(code, PolicyPatch(paused=True)).policy.concurrency
    10
    >>> merge_settings(code, PolicyPatch(concurrency=2)).policy.concurrency
    2
"""

from __future__ import annotations

from typing import Final

import msgspec
from msgspec import UNSET, UnsetType

from tsumugi_core.options import MAX_SAFE_INTEGER, RateLimit

__all__ = [
    "DEFAULT_SETTINGS",
    "Policy",
    "PolicyPatch",
    "PolicyValidationError",
    "Retention",
    "ShardSettings",
    "combine_patches",
    "merge_settings",
    "validate_settings",
]


class PolicyValidationError(ValueError):
    """A policy or retention field broke a rule; the message is ``<field> <rule>``.

    Attributes:
        field: The field's Python name.
        rule: What the value must satisfy.
    """

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field} {rule}")
        self.field = field
        self.rule = rule


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
    """Fields to pin over the code's settings; UNSET leaves a field to the code (None is a real value)."""

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


def combine_patches(pinned: PolicyPatch, patch: PolicyPatch) -> PolicyPatch:
    """Pins after a second ``configure``: fields set in ``patch`` replace earlier pins, others stay."""
    changes = {f: getattr(patch, f) for f in PolicyPatch.__struct_fields__ if getattr(patch, f) is not UNSET}
    return msgspec.structs.replace(pinned, **changes)


def merge_settings(code: ShardSettings | None, runtime_patch: PolicyPatch | None) -> ShardSettings:
    """The effective settings: the code's (or the defaults), with every pinned field taking precedence."""
    base = code if code is not None else DEFAULT_SETTINGS
    if runtime_patch is None:
        return base
    policy_changes = {
        f: getattr(runtime_patch, f) for f in _POLICY_FIELDS if getattr(runtime_patch, f) is not UNSET
    }
    retention_changes = {
        f: getattr(runtime_patch, f) for f in _RETENTION_FIELDS if getattr(runtime_patch, f) is not UNSET
    }
    if not policy_changes and not retention_changes:
        return base
    return ShardSettings(
        policy=msgspec.structs.replace(base.policy, **policy_changes),
        retention=msgspec.structs.replace(base.retention, **retention_changes),
    )
