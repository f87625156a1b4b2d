"""on_enqueue defaults: options a hook supplies for every enqueue, where the caller left them out.

docs/reference/additions.md A1: the caller always wins; only some options are defaultable (a default
unique_key or partition_key would silently merge or reroute unrelated jobs, so those are refused); None means
no defaults. The scheduler applies its own hook with the same function, so producers and the scheduler agree.

Example:
    >>> from tsumugi_core.options import EnqueueItem
    >>> item = EnqueueItem(binding="MAIL", payload=None, priority=7)
    >>> merged = apply_defaults(item, {"priority": 1, "max_attempts": 5})
    >>> (merged.priority, merged.max_attempts)
    (7, 5)
    >>> apply_defaults(item, {"unique_key": "k"})
    Traceback (most recent call last):
    ...
    tsumugi_core.options.EnqueueValidationError: unique_key is not defaultable: on_enqueue may only default traceparent, priority, max_attempts, backoff, timeout_ms, guarantee, delay_ms, run_at, expires_at, expires_in_ms, concurrency_key
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Final, TypeAlias

import msgspec

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.options import (
    OPTION_DURATIONS,
    OPTION_INSTANTS,
    EnqueueItem,
    EnqueueOptions,
    EnqueueValidationError,
)
from tsumugi_core.time_values import with_milliseconds

__all__ = [
    "DEFAULTABLE_OPTIONS",
    "NOT_DEFAULTABLE_OPTIONS",
    "EnqueueDefaultsLike",
    "OnEnqueue",
    "apply_defaults",
]

DEFAULTABLE_OPTIONS: Final = (
    "traceparent",
    "priority",
    "max_attempts",
    "backoff",
    "timeout_ms",
    "guarantee",
    "delay_ms",
    "run_at",
    "expires_at",
    "expires_in_ms",
    "concurrency_key",
)
"""Options an on_enqueue hook may supply (A1), in the reference's order."""

NOT_DEFAULTABLE_OPTIONS: Final = (
    "binding",
    "payload",
    "unique_key",
    "unique_for_ms",
    "partition_key",
    "id",
    "run_id",
    "node_id",
)
"""Item fields a hook may not supply: A1's list plus the internal routing fields (id, run_id, node_id)."""

# Each pair is one choice (when to run, when to expire): a caller who set either member made that choice, so a
# default for the other member must not combine with it into a "mutually exclusive" error.
_EXCLUSIVE_PAIRS: Final = (("run_at", "delay_ms"), ("expires_at", "expires_in_ms"))

EnqueueDefaultsLike: TypeAlias = Mapping[str, object] | EnqueueOptions | None
"""What a hook returns: a mapping of Python option names, an `EnqueueOptions` (unset = None), or None."""

OnEnqueue: TypeAlias = Callable[[EnqueueItem], EnqueueDefaultsLike | Awaitable[EnqueueDefaultsLike]]
"""The hook: receives each item as the caller wrote it and returns defaults (optionally awaitable)."""


def _as_mapping(defaults: Mapping[str, object] | EnqueueOptions) -> Mapping[str, object]:
    if isinstance(defaults, EnqueueOptions):
        return {f.name: getattr(defaults, f.name) for f in msgspec.structs.fields(defaults)}
    if not isinstance(defaults, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]  # hooks are user code
        raise EnqueueValidationError(
            "on_enqueue", f"must return a mapping, an EnqueueOptions or None, got {type(defaults).__name__}"
        )
    return defaults


def _chosen_defaults(defaults: Mapping[str, object]) -> dict[str, object]:
    chosen: dict[str, object] = {}
    for name, value in defaults.items():
        if name in NOT_DEFAULTABLE_OPTIONS:
            if value is None:
                continue  # an EnqueueOptions carries every field; None there means "not set"
            raise EnqueueValidationError(
                name, f"is not defaultable: on_enqueue may only default {', '.join(DEFAULTABLE_OPTIONS)}"
            )
        if name not in DEFAULTABLE_OPTIONS:
            raise EnqueueValidationError(str(name), "is not an enqueue option (returned by on_enqueue)")
        if value is not None:
            chosen[name] = value
    for first, second in _EXCLUSIVE_PAIRS:
        if first in chosen and second in chosen:
            raise EnqueueValidationError(
                first, f"and {second} are mutually exclusive (both returned by on_enqueue)"
            )
    try:  # a hook may answer timedelta / datetime values too (ADR-0161)
        return with_milliseconds(chosen, OPTION_DURATIONS, OPTION_INSTANTS)
    except InvalidFieldError as exc:
        raise EnqueueValidationError(exc.field, exc.rule) from None


def apply_defaults(item: EnqueueItem, defaults: EnqueueDefaultsLike) -> EnqueueItem:
    """Fill the options ``item`` left out (None) from ``defaults``; the caller's values always win.

    Args:
        item: The enqueue as the caller wrote it.
        defaults: The hook's answer: option names to values (None values are ignored), an `EnqueueOptions`, or
            None for no defaults.

    Returns:
        A new item; ``item`` itself when nothing applies. Values are not validated here:
        `tsumugi_core.options.validate_enqueue` checks the merged item.

    Raises:
        EnqueueValidationError: ``defaults`` names an option that is not defaultable or not an option at all, or
            holds both members of a mutually exclusive pair; the field is that option.
    """
    if defaults is None:
        return item
    chosen = _chosen_defaults(_as_mapping(defaults))
    for first, second in _EXCLUSIVE_PAIRS:
        if getattr(item, first) is not None or getattr(item, second) is not None:
            chosen.pop(first, None)
            chosen.pop(second, None)
    updates = {name: value for name, value in chosen.items() if getattr(item, name) is None}
    if not updates:
        return item
    return msgspec.structs.replace(item, **updates)
