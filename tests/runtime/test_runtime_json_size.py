"""`tsumugi_dev.json_size`: message bodies measured as ``JSON.stringify`` writes them, in UTF-8 (ADR-0106).

Each expected size is ``Buffer.byteLength(JSON.stringify(v))`` of the JavaScript value the body becomes, as
Node.js 20 (V8, the engine workerd embeds) wrote it.
"""

from __future__ import annotations

import datetime
from typing import Any

import msgspec
import pytest

from tsumugi_dev.json_size import JSON_TO_MSGPACK_MAX_RATIO, json_size


def _fn() -> None:
    return None


@pytest.mark.parametrize(
    ("value", "size"),
    [
        (None, 4),
        (True, 4),
        (False, 5),
        (7, 1),
        (2**53, 16),
        (0.5, 3),
        (1e20, 21),  # 100000000000000000000
        ("", 2),
        ("é", 4),  # UTF-8: two bytes
        ("€", 5),  # three
        ("😀", 6),  # four
        ("\ud800", 8),  # a lone surrogate: "\ud800"
        ({}, 2),
        ({"a": 1}, 7),
        ([], 2),
        ([1, 2], 5),
        (b"\x01\x02\xff", 21),  # a Uint8Array: {"0":1,"1":2,"2":255}
        (memoryview(b""), 2),
        (datetime.datetime(2026, 1, 1), 26),  # a Date: "2026-01-01T00:00:00.000Z"
        ({1}, 2),  # a Set: {}
        (Exception("x"), 2),  # an Error: {}
        ({"a": _fn, "b": 2}, 7),  # a function member is left out: {"b":2}
        ([_fn, 2], 8),  # ... and is null in an array: [null,2]
        ([0.5] * 20_000, 80_001),  # what the queue limit tests build on
    ],
)
def test_sizes_match_what_json_stringify_writes(value: Any, size: int) -> None:
    assert json_size(value) == size


@pytest.mark.parametrize(
    "value",
    [
        [],
        {},
        [[]] * 50,
        [{}] * 50,
        [None] * 50,
        [False] * 50,
        list(range(200)),
        {"": False},
        ["\x00"] * 30,
        {"k": [None, True, -1, 2**40, "é€", b"", b"xyz"]},
        b"\xff" * 10_000,
        [1e20] * 30,
    ],
)
def test_the_msgpack_bound_holds(value: Any) -> None:
    # The queue binding skips the walk when msgpack bytes x ratio is under the limit.
    assert json_size(value) <= len(msgspec.msgpack.encode(value)) * JSON_TO_MSGPACK_MAX_RATIO
