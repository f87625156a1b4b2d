"""Enqueue planning for the HTTP clients: ids made by the client, routing, and one call per shard batch.

Pure apart from the id source it is given. Every item gets a client-made job id on the shard the scheduler
routes it to, so a retried enqueue whose first try did arrive finds that job instead of making a second
(the shard answers an existing pinned id with that id, ADR-0063). The shard counts come from the client's
``bindings`` config, else from the scheduler (``GET /api/bindings``, asked once); a binding of unknown shard
count gets no client id and its enqueue is then repeated only when it cannot have arrived.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

import msgspec

from tsumugi_client._calls import Call, enqueue_batch
from tsumugi_client._enqueue_kwargs import item_from_fields
from tsumugi_client._routing import Destination, destination_of, plan_batches
from tsumugi_client._wire import wire_item
from tsumugi_core.clock import IdSource
from tsumugi_core.ids import format_job_id
from tsumugi_core.options import EnqueueItem, EnqueueValidationError, validate_enqueue
from tsumugi_core.sharding import resolve_shard

__all__ = ["EnqueuePlan", "Send", "item_of", "relocate", "unprefixed"]

_ITEM_FIELD_RE: Final = re.compile(r"items\[(?P<index>\d+)\]\.(?P<rest>.+)")
_FIRST_ITEM: Final = "items[0]."


def relocate(error: EnqueueValidationError, positions: Sequence[int]) -> EnqueueValidationError:
    """Rename ``items[k].x`` (k within one call) to ``items[p].x`` (p within the caller's list)."""
    match = _ITEM_FIELD_RE.fullmatch(error.field)
    if match is None or int(match["index"]) >= len(positions):
        return error
    return EnqueueValidationError(f"items[{positions[int(match['index'])]}].{match['rest']}", error.rule)


def unprefixed(error: EnqueueValidationError) -> EnqueueValidationError:
    """A single enqueue's error names the option itself (``priority``), not ``items[0].priority``."""
    if error.field.startswith(_FIRST_ITEM):
        return EnqueueValidationError(error.field[len(_FIRST_ITEM) :], error.rule)
    return error


def item_of(raw: object) -> EnqueueItem:
    """An `EnqueueItem` from an item or a dict of Python option names.

    Raises:
        EnqueueValidationError: not an item or a dict, or a key is not an enqueue field.
    """
    if isinstance(raw, EnqueueItem):
        return raw
    if not isinstance(raw, Mapping):
        raise EnqueueValidationError("item", f"must be an EnqueueItem or a dict, got {type(raw).__name__}")
    return item_from_fields(raw)  # pyright: ignore[reportUnknownArgumentType]  # keys are checked there


class Send(msgspec.Struct, frozen=True, kw_only=True):
    """One call of an enqueue and the caller's positions of its items."""

    call: Call[list[str]]
    destination: Destination
    positions: tuple[int, ...]


class EnqueuePlan:
    """Shard counts (configured, then learnt) and the making of enqueue calls."""

    def __init__(self, configured: Mapping[str, int], ids: IdSource) -> None:
        """Route with ``configured`` counts; make local ids with ``ids``."""
        self._configured = dict(configured)
        self._learnt: dict[str, int] | None = None
        self._ids = ids

    def needs_shard_counts(self, items: Sequence[EnqueueItem]) -> bool:
        """Whether an item's binding has no known shard count and the scheduler has not been asked yet."""
        return self._learnt is None and any(
            item.binding not in self._configured and item.id is None for item in items
        )

    def learn(self, shards: Mapping[str, int] | None) -> None:
        """Record the scheduler's shard counts (None: it does not say; then it is not asked again)."""
        self._learnt = dict(shards or {})

    def _shards(self, binding: str) -> int | None:
        found = self._configured.get(binding)
        if found is None and self._learnt is not None:
            found = self._learnt.get(binding)
        return found

    @staticmethod
    def check(item: EnqueueItem) -> EnqueueItem:
        """Validate one merged item (after on_enqueue defaults) with the core's rules."""
        validate_enqueue(item)
        return item

    def _with_id(self, item: EnqueueItem) -> EnqueueItem:
        if item.id is not None:
            return item
        shards = self._shards(item.binding)
        if shards is None:
            return item
        shard = resolve_shard(item.binding, shards, item.partition_key)  # raises without a needed key
        return msgspec.structs.replace(item, id=format_job_id(item.binding, shard, self._ids.new_local_id()))

    def place(self, item: EnqueueItem) -> tuple[EnqueueItem, Destination]:
        """``item`` (validated) with its client-made id when its shard count is known, and its destination.

        Raises:
            EnqueueValidationError: a sharded binding's item has no ``partition_key``, or a pinned id is not on
                the item's shard.
        """
        try:
            placed = self._with_id(item)
        except ValueError as exc:  # InvalidJobIdError from resolve_shard: the key is missing
            if isinstance(exc, EnqueueValidationError):
                raise
            raise EnqueueValidationError("partition_key", f"is required: {exc}") from None
        return placed, destination_of(placed, {**(self._learnt or {}), **self._configured})

    def sends(self, items: Sequence[EnqueueItem]) -> list[Send]:
        """The calls that enqueue ``items`` (validated), one per shard batch, in first-appearance order.

        Raises:
            EnqueueValidationError: a sharded binding's item has no ``partition_key``, or a pinned id is not
                on the item's shard; the field is ``items[<index>].<field>``.
        """
        placed: list[tuple[EnqueueItem, Destination]] = []
        for index, raw in enumerate(items):
            try:
                placed.append(self.place(raw))
            except EnqueueValidationError as exc:
                raise EnqueueValidationError(f"items[{index}].{exc.field}", exc.rule) from None
        wire = [wire_item(item, destination.shard) for item, destination in placed]
        sends: list[Send] = []
        for batch in plan_batches([destination for _, destination in placed]):
            batch_items = [wire[p] for p in batch.positions]
            idempotent = all(placed[p][0].id is not None for p in batch.positions)
            call = enqueue_batch(batch_items, idempotent=idempotent)
            sends.append(Send(call=call, destination=batch.destination, positions=batch.positions))
        return sends
