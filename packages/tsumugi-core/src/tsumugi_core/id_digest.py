"""The digest that ends an id the system derives, so only the holder of its secret part can compute it.

Derived ids (a run's node jobs and child runs, ADR-0115; a schedule's occurrences and a shard's notice jobs,
ADR-0177) stay the same when their maker repeats a step after a crash, so the receiver absorbs the repeat. A
caller may pin a job or run id of its own; one part of each derived id's input is a value that never leaves its
maker (a run's nonce, an object's id key), so no caller can take such an id before its maker uses it.

Example:
    >>> id_digest(("greetings:a", "n0nce", "names", "0"), 12)
    '733e78acdbf6f174d51e2196'
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

__all__ = ["id_digest"]


def id_digest(parts: Sequence[str], size: int) -> str:
    """``size`` bytes of BLAKE2b over ``parts`` joined by NUL, as ``2 * size`` lowercase hex digits."""
    return hashlib.blake2b("\x00".join(parts).encode(), digest_size=size).hexdigest()
