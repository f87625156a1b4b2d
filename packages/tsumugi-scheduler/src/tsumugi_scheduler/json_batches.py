"""Many rows as one bound JSON text: one SQL statement for hundreds of rows within the platform's limits.

Durable Object SQL and D1 bind at most 100 values per statement, so a statement per row (or 6 rows per
multi-row VALUES) makes a 1,000-node change thousands of statements. Bound as one JSON text and read with
``json_each``, any number of rows is one statement; the text is cut at ``most_bytes`` (callers keep it well
under workerd's 4 MiB per string and D1's 2 MB).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

import msgspec

__all__ = [
    "BATCH_BYTES",
    "json_array_counts",
    "json_arrays",
    "json_objects",
    "read_per_row",
    "uniform_columns",
]

BATCH_BYTES: Final = 1_000_000
"""Default most bytes of one JSON text."""

_encode = msgspec.json.encode


def _cut(parts: Iterable[bytes], most_bytes: int, open_: bytes, close: bytes) -> Iterator[tuple[str, int]]:
    """The parts joined into texts of at most ``most_bytes``, each with how many parts it holds."""
    chunk: list[bytes] = []
    size = 2
    for part in parts:
        if chunk and size + len(part) + 1 > most_bytes:
            yield (open_ + b",".join(chunk) + close).decode(), len(chunk)
            chunk, size = [], 2
        chunk.append(part)
        size += len(part) + 1
    if chunk:
        yield (open_ + b",".join(chunk) + close).decode(), len(chunk)


def json_arrays(items: Iterable[Any], most_bytes: int = BATCH_BYTES) -> list[str]:
    """``items`` as JSON arrays of at most ``most_bytes`` each (an item larger than that stands alone)."""
    return [text for text, _ in json_array_counts(items, most_bytes)]


def json_array_counts(items: Iterable[Any], most_bytes: int = BATCH_BYTES) -> list[tuple[str, int]]:
    """`json_arrays`, each text with how many items it holds."""
    values = list(items)
    if not values:
        return []
    whole = _encode(values)
    if len(whole) <= most_bytes:  # the common case: one encoding in C
        return [(whole.decode(), len(values))]
    return list(_cut((_encode(item) for item in values), most_bytes, b"[", b"]"))


def json_objects(entries: Mapping[str, Any], most_bytes: int = BATCH_BYTES) -> list[str]:
    """``entries`` as JSON objects of at most ``most_bytes`` each (an entry larger than that stands alone)."""
    if not entries:
        return []
    whole = _encode(entries)
    if len(whole) <= most_bytes:
        return [whole.decode()]
    parts = (_encode(k) + b":" + _encode(v) for k, v in entries.items())
    return [text for text, _ in _cut(parts, most_bytes, b"{", b"}")]


def uniform_columns(columns: Sequence[tuple[Any, ...]], candidates: Iterable[int]) -> tuple[int, ...]:
    """Which of the ``candidates`` columns hold one value, of one type, in every row (``columns`` is the rows
    transposed, each non-empty): a statement binds such a value once instead of reading it from each row's
    JSON, where every ``->>`` parses the row's text again (ADR-0167)."""
    found: list[int] = []
    for i in candidates:
        column = columns[i]
        first: object = column[0]
        # 1 == 1.0 == True in Python: equal values of other types are not the same value in SQL.
        if column.count(first) == len(column) and len(set(map(type, column))) == 1:
            found.append(i)
    return tuple(found)


def read_per_row(rows: Sequence[Sequence[Any]], read: Sequence[int]) -> list[Any]:
    """Each row's ``read`` values: an array per row, or the bare value when only one is read."""
    if len(read) == 1:
        only = read[0]
        return [row[only] for row in rows]
    pick = operator.itemgetter(*read)
    return [pick(row) for row in rows]
