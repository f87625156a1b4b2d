"""`tsumugi_dev.v8_size`: message bodies measured as V8's serialiser (format 15) writes them."""

from __future__ import annotations

import datetime
from typing import Any

import msgspec
import pytest

from tsumugi_dev.v8_size import V8_TO_MSGPACK_MAX_RATIO, v8_size


@pytest.mark.parametrize(
    ("value", "size"),
    [
        (None, 3),  # header 2 + tag
        (True, 3),
        (7, 4),  # small integer: tag + zigzag varint (14)
        (100, 5),  # zigzag 200 needs two varint bytes
        (2**31, 11),  # beyond a small integer: a double
        (1.5, 11),
        ("", 4),  # one-byte string: tag, length 0
        ("abc", 7),
        ("é", 5),  # Latin-1 stays one byte a character
        ("€", 7),  # two-byte string: padding, tag, length 2, 2 bytes
        ({}, 5),  # begin, end, 0 properties
        ({"a": 1}, 10),
        ([], 7),  # dense array: tag, length, end tag, 0 properties, length
        ([1, 2], 11),
        (
            b"ab",
            11,
        ),  # ArrayBuffer (tag, length, 2 bytes) + Uint8Array view (tag, type, offset, length, flags)
        (datetime.datetime(2026, 1, 1), 11),
        ({"text": "x" * 20_000}, 20_015),  # what the queue limit tests build on
    ],
)
def test_sizes_match_v8s_format(value: Any, size: int) -> None:
    assert v8_size(value) == size


@pytest.mark.parametrize(
    "value",
    [[], {}, [[]] * 50, [{}] * 50, list(range(200)), {"k": [None, True, -1, 2**40, "é€", b"", b"xyz"]}, b""],
)
def test_the_msgpack_bound_holds(value: Any) -> None:
    # The queue binding skips the walk when msgpack bytes x ratio + header is under the limit.
    assert v8_size(value) <= len(msgspec.msgpack.encode(value)) * V8_TO_MSGPACK_MAX_RATIO + 2
