"""How many bytes a queue message body takes as Cloudflare measures it: V8's structured-clone serialisation.

workerd serialises every message body with V8's ``ValueSerializer`` (format version 15, header included,
``src/workerd/api/queue.c++``), and the Queues service checks those bytes against its limits (128 KB per
message, 256 KB per ``sendBatch``). A Python Worker's body reaches V8 as the SDK converts it: dicts become
objects, lists dense arrays, ``int`` numbers, ``bytes`` a ``Uint8Array``.

`v8_size` computes that length for the values a body can hold after the runtime's copy. It walks the value,
so the queue binding only calls it when the msgpack encoding it already made could be over a limit:
`V8_TO_MSGPACK_MAX_RATIO` bounds how much bigger the V8 form can be (an empty array: 1 byte in msgpack, 5 in
V8; no other value is more than 3.5 times as big).
"""

from __future__ import annotations

import datetime
from typing import Any, Final, cast

__all__ = ["V8_HEADER_BYTES", "V8_TO_MSGPACK_MAX_RATIO", "v8_size"]

V8_HEADER_BYTES: Final = 2
"""The version tag and version (0xFF 0x0F) in front of every serialised value."""
V8_TO_MSGPACK_MAX_RATIO: Final = 5
"""V8 bytes per msgpack byte at most, for any value `v8_size` measures."""
_SMI_MIN: Final = -(2**30)
_SMI_MAX: Final = 2**30 - 1


def _varint(n: int) -> int:
    size = 1
    while n >= 0x80:
        n >>= 7
        size += 1
    return size


def _string(value: str) -> int:
    if value.isascii():
        return 1 + _varint(len(value)) + len(value)
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        units = len(value.encode("utf-16-le"))
        return 2 + _varint(units) + units  # two-byte string, counting the alignment padding it may need
    return 1 + _varint(len(value)) + len(value)


def _number(value: int | float) -> int:
    if type(value) is int and _SMI_MIN <= value <= _SMI_MAX:
        return 1 + _varint((value << 1) ^ (value >> 63))  # a small integer: tag and zigzag varint
    return 9  # a double: tag and 8 bytes


def _value(value: Any) -> int:
    if value is None or value is True or value is False:
        return 1
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, dict):
        items = cast(dict[Any, Any], value)
        size = 2 + _varint(len(items))  # begin and end tags, property count
        for key, item in items.items():
            size += _string(str(key)) + _value(item)
        return size
    if isinstance(value, list):
        elements = cast(list[Any], value)
        # dense array: tag, length, elements, end tag, 0 properties, length again
        return 2 + 2 * _varint(len(elements)) + 1 + sum(_value(e) for e in elements)
    if isinstance(value, bytes | bytearray | memoryview):
        length = len(cast(bytes, value))
        # ArrayBuffer (tag, length, bytes) then the Uint8Array view (tag, type, offset, length, flags)
        return 1 + _varint(length) + length + 2 + 1 + _varint(length) + 1
    if isinstance(value, datetime.datetime | datetime.date):
        return 9  # a Date: tag and 8 bytes
    return 1 + len(repr(value))  # nothing else crosses a copy; a rough size rather than a failure


def v8_size(value: Any) -> int:
    """The length of ``value`` serialised by V8 (header included), as the Queues limits count it."""
    return V8_HEADER_BYTES + _value(value)
