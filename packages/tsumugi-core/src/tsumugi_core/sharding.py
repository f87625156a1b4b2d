"""Shard selection: which ``<binding>#<shard>`` Durable Object a new job goes to.

A binding has one shard unless configured otherwise; then every key guarantee (concurrency_key, unique_key)
holds binding-wide. With two or more shards every enqueue must name a ``partition_key`` and the shard is
``fnv1a32(partition_key) % shards``, the hash the original uses, so both implementations route a key to the
same shard (docs/reference/original.md §1.11).

Examples:
    >>> fnv1a32("")
    2166136261
    >>> resolve_shard("MAIL", 1, None)
    0
"""

from __future__ import annotations

from typing import Final

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.ids import InvalidJobIdError, validate_binding_name

__all__ = ["FNV_OFFSET_BASIS", "FNV_PRIME", "fnv1a32", "resolve_shard"]

FNV_OFFSET_BASIS: Final = 0x811C9DC5
"""The 32-bit FNV offset basis."""
FNV_PRIME: Final = 0x01000193
"""The 32-bit FNV prime."""
_MASK32: Final = 0xFFFFFFFF


def fnv1a32(text: str) -> int:
    """FNV-1a (32-bit, unsigned) over the UTF-16 code units of `text`.

    The original hashes JavaScript string code units, so characters outside the Basic Multilingual Plane
    count as two units (a surrogate pair) and each unit is mixed in whole (not byte by byte).

    Example:
        >>> fnv1a32("a")
        3826002220
    """
    encoded = text.encode("utf-16-le", "surrogatepass")
    value = FNV_OFFSET_BASIS
    for index in range(0, len(encoded), 2):
        value ^= encoded[index] | (encoded[index + 1] << 8)
        value = (value * FNV_PRIME) & _MASK32
    return value


def resolve_shard(binding: str, shards: int, partition_key: str | None) -> int:
    """Pick the shard index for a new job of `binding`.

    Args:
        binding: The binding name (used in the error message and validated).
        shards: How many shards the binding is split into; an integer of at least 1.
        partition_key: The caller's partition key; required when ``shards >= 2``, ignored for one shard.

    Returns:
        The shard index in ``range(shards)``.

    Raises:
        ValueError: `shards` is not an integer of at least 1.
        InvalidJobIdError: The binding is sharded and no partition key was given, or the binding name is
            invalid.
    """
    validate_binding_name(binding)
    if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise InvalidFieldError("shards", f"must be an integer of at least 1, got {shards!r}")
    if shards == 1:
        return 0
    if partition_key is None:
        raise InvalidJobIdError(
            f"{binding} is split into shards={shards} and requires partitionKey, "
            "omitting it drops the per-key guarantees"
        )
    return fnv1a32(partition_key) % shards
