"""Rows a statement answers as one JSON text each, decoded together (ADR-0166).

A hot read that names every column crosses the Durable Object SQL API value by value (on Cloudflare, and in
the local runtime's emulation of it); the same row as ``json_array(...)`` or ``json_object(...)`` is one value,
and msgspec decodes all of a statement's rows in one call.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

__all__ = ["decoded_rows"]

T = TypeVar("T")


def decoded_rows(cursor: Any, column: str, decoder: msgspec.json.Decoder[list[T]]) -> list[T]:
    """The ``column`` text of every row of ``cursor``, decoded at once by ``decoder`` (a list decoder)."""
    read_column = getattr(cursor, "column", None)  # the Durable Object cursor reads one column without rows
    texts = read_column(column) if read_column is not None else [row[column] for row in cursor.toArray()]
    return decoder.decode(f"[{','.join(texts)}]") if texts else []
