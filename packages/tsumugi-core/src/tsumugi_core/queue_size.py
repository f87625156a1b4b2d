"""Sizes of queue messages as Cloudflare Queues counts them, for staying inside its limits.

Queues measure a message body as V8 serialises it (structured clone, the bytes workerd sends): a message may
take 128,000 bytes, one ``sendBatch`` 256,000 bytes together and 100 messages
(developers.cloudflare.com/queues/platform/limits/; 1 KB = 1000 bytes there). Two measures:

- `json_bound`: a cheap upper bound from the body's JSON length (one C call): V8 never needs more than
  `V8_PER_JSON_BYTE` bytes per JSON byte (a bare non-integral number, ``0.5``: 3 bytes of JSON, 9 of V8; an
  empty array 2 and 5; an ASCII string is one byte a character in both, other strings at most two in V8);
- `v8_bytes`: the size itself, walking the value; for the few values where the bound is too coarse.

Example:
    >>> v8_bytes({"name": "Ada"}), json_bound(len(b'{"name":"Ada"}'))
    (16, 44)
"""

from __future__ import annotations

from typing import Any, Final

__all__ = [
    "MAX_BATCH_BYTES",
    "MAX_BATCH_MESSAGES",
    "MAX_MESSAGE_BYTES",
    "V8_PER_JSON_BYTE",
    "json_bound",
    "v8_bytes",
]

MAX_MESSAGE_BYTES: Final = 128_000
"""Largest message body, serialised."""
MAX_BATCH_BYTES: Final = 256_000
"""Largest ``sendBatch``: every body together, serialised."""
MAX_BATCH_MESSAGES: Final = 100
"""Most messages per ``sendBatch``."""
V8_PER_JSON_BYTE: Final = 3
"""V8 bytes per byte of the value's JSON (``msgspec.json``), at most."""
_HEADER: Final = 2
_SMALL_INT: Final = 2**30


def json_bound(json_length: int) -> int:
    """At least the serialised size of a body whose JSON is ``json_length`` bytes long."""
    return json_length * V8_PER_JSON_BYTE + _HEADER


def _length_bytes(n: int) -> int:
    return 1 if n < 0x80 else 2 if n < 0x4000 else 3 if n < 0x200000 else 4 if n < 0x10000000 else 5


def _text(value: str) -> int:
    if value.isascii() or max(map(ord, value)) < 0x100:
        return 1 + _length_bytes(len(value)) + len(value)
    units = len(value.encode("utf-16-le"))
    return 2 + _length_bytes(units) + units  # 2-byte characters, and a byte that may align them


def _walk(value: Any) -> int:
    if isinstance(value, str):
        return _text(value)
    if value is None or isinstance(value, bool):
        return 1
    if isinstance(value, int) and -_SMALL_INT <= value < _SMALL_INT:
        return 1 + _length_bytes(abs(value) * 2 - (value < 0))  # zigzag
    if isinstance(value, int | float):
        return 9
    if isinstance(value, dict):
        entries: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return 2 + _length_bytes(len(entries)) + sum(_text(str(k)) + _walk(v) for k, v in entries.items())
    if isinstance(value, list | tuple):
        items: list[Any] = list(value)  # pyright: ignore[reportUnknownArgumentType]
        return 3 + 2 * _length_bytes(len(items)) + sum(_walk(v) for v in items)
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def v8_bytes(value: Any) -> int:
    """The size of the JSON-like ``value`` serialised by V8 (header included)."""
    return _HEADER + _walk(value)
