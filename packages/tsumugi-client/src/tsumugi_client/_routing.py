"""Routing: which shard each item goes to, and the per-shard batches the client sends.

The rule is the original's (docs/reference/original.md §1.11): a binding has the shard count the producer was
configured with (1 when not configured); with two or more shards every item needs a partition key and goes to
``fnv1a32(partition_key) % shards``. A pinned ``id`` names its shard itself. Items of a binding the client has
no shard count for are sent without a shard and the scheduler routes them
(docs/design/scheduler-rpc.md §2.1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, NotRequired, TypedDict

import msgspec

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.ids import InvalidJobIdError, parse_job_id, validate_binding_name
from tsumugi_core.options import EnqueueItem, EnqueueValidationError
from tsumugi_core.sharding import resolve_shard

__all__ = [
    "MAX_BATCH_ITEMS",
    "Batch",
    "BindingConfig",
    "Destination",
    "destination_of",
    "normalize_bindings",
    "plan_batches",
]

MAX_BATCH_ITEMS: Final = 500
"""Most items in one enqueue call (RPC or HTTP); bigger groups are sent in chunks.

Source: docs/design/scheduler-rpc.md §2.1.
"""

_BINDING_KEYS: Final = frozenset({"shards"})


class BindingConfig(TypedDict):
    """A producer's view of one binding: how many shards it is split into (default 1)."""

    shards: NotRequired[int]


class Destination(msgspec.Struct, frozen=True, kw_only=True):
    """Where an item goes: its binding and shard (None: the scheduler resolves it)."""

    binding: str
    shard: int | None


class Batch(msgspec.Struct, frozen=True, kw_only=True):
    """Items for one destination, at most `MAX_BATCH_ITEMS`, with their positions in the caller's list."""

    destination: Destination
    positions: tuple[int, ...]


def normalize_bindings(bindings: Mapping[str, BindingConfig] | None) -> dict[str, int]:
    """Check a ``bindings`` config and return each binding's shard count.

    Raises:
        ValueError: a binding name is invalid, a key is unknown, or ``shards`` is not an integer of at least 1;
            the message names the entry, e.g. ``bindings['MAIL'].shards``.
    """
    counts: dict[str, int] = {}
    for binding, config in (bindings or {}).items():
        where = f"bindings[{binding!r}]"
        try:
            validate_binding_name(binding)
        except InvalidJobIdError as exc:
            raise InvalidFieldError(where, str(exc)) from None
        if not isinstance(config, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]  # user config
            rule = f"must be a mapping like {{'shards': 4}}, got {type(config).__name__}"
            raise InvalidFieldError(where, rule)
        unknown = sorted(set(config) - _BINDING_KEYS)
        if unknown:
            raise InvalidFieldError(f"{where}.{unknown[0]}", "is not a binding option (allowed: shards)")
        shards = config.get("shards", 1)
        if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise InvalidFieldError(f"{where}.shards", f"must be an integer of at least 1, got {shards!r}")
        counts[binding] = shards
    return counts


def _pinned_destination(item: EnqueueItem, pinned_id: str, shard_counts: Mapping[str, int]) -> Destination:
    shard = parse_job_id(pinned_id).shard  # validate_enqueue already checked the id and its binding
    shards = shard_counts.get(item.binding)
    if shards is not None and shard >= shards:
        raise EnqueueValidationError("id", f"names shard {shard} but {item.binding} has shards={shards}")
    if shards is not None and shards > 1 and item.partition_key is not None:
        routed = resolve_shard(item.binding, shards, item.partition_key)
        if routed != shard:
            raise EnqueueValidationError(
                "id", f"is on shard {shard} but partition_key routes to shard {routed}"
            )
    return Destination(binding=item.binding, shard=shard)


def destination_of(item: EnqueueItem, shard_counts: Mapping[str, int]) -> Destination:
    """The destination of a validated item.

    Raises:
        EnqueueValidationError: ``partition_key`` is missing for a sharded binding, or a pinned ``id`` names a
            shard the binding does not have or that its ``partition_key`` does not route to.
    """
    if item.id is not None:
        return _pinned_destination(item, item.id, shard_counts)
    shards = shard_counts.get(item.binding)
    if shards is None:
        return Destination(binding=item.binding, shard=None)
    try:
        shard = resolve_shard(item.binding, shards, item.partition_key)
    except InvalidJobIdError as exc:
        raise EnqueueValidationError("partition_key", f"is required: {exc}") from None
    return Destination(binding=item.binding, shard=shard)


def plan_batches(destinations: Sequence[Destination], max_items: int = MAX_BATCH_ITEMS) -> list[Batch]:
    """Group positions by destination (first appearance first), in chunks of at most ``max_items``.

    Example:
        >>> a, b = Destination(binding="A", shard=0), Destination(binding="A", shard=1)
        >>> [batch.positions for batch in plan_batches([a, b, a], max_items=10)]
        [(0, 2), (1,)]
    """
    groups: dict[Destination, list[int]] = {}
    for position, destination in enumerate(destinations):
        groups.setdefault(destination, []).append(position)
    return [
        Batch(destination=destination, positions=tuple(positions[start : start + max_items]))
        for destination, positions in groups.items()
        for start in range(0, len(positions), max_items)
    ]
