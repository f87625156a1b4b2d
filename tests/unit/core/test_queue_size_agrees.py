"""The core's JSON size of a queue body agrees with JavaScript and with the local runtime (ADR-0106).

Cloudflare Queues carry a body as ``JSON.stringify`` writes it, in UTF-8 (``queues_json_messages``).
``tsumugi_core.queue_size.json_bytes`` is what the scheduler uses to keep inside the limits;
``tsumugi_dev.json_size.json_size`` is what the local runtime charges. The texts below were written by
``JSON.stringify`` in Node.js 20 (V8), the engine workerd embeds.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tsumugi_core.queue_size import JS_PER_JSON_BYTE, js_number, json_bound, json_bytes
from tsumugi_dev import json_size as runtime

JAVASCRIPT: list[tuple[float, str]] = [
    (1e20, "100000000000000000000"),
    (1e21, "1e+21"),
    (-1e20, "-100000000000000000000"),
    (1e-6, "0.000001"),
    (1e-7, "1e-7"),
    (1.5e-7, "1.5e-7"),
    (123.456, "123.456"),
    (1.0, "1"),
    (-0.0, "0"),
    (0.1, "0.1"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (9.999999999999999e20, "999999999999999900000"),
    (123456789012345680000.0, "123456789012345680000"),
    (2.5e-8, "2.5e-8"),
    (100.0, "100"),
    (float("nan"), "null"),
    (float("inf"), "null"),
]


@pytest.mark.parametrize(("value", "text"), JAVASCRIPT)
def test_numbers_are_written_as_javascript_writes_them(value: float, text: str) -> None:
    assert js_number(value) == runtime.js_number(value) == text


def test_text_measures_in_utf8_with_javascripts_escapes() -> None:
    # JSON.stringify("\0\1\b\t\n\f\r\x1f\x7f\u2028\"\\/é😀") is 45 bytes of UTF-8.
    text = '\x00\x01\b\t\n\f\r\x1f\x7f\u2028"\\/é😀'
    assert json_bytes(text) == runtime.json_size(text) == 45


def test_a_dispatch_of_14000_halves_measures_56148_bytes() -> None:
    # The message of issue 22 item 3, measured by Node.js: Buffer.byteLength(JSON.stringify(message)).
    message = {
        "jobId": "Hello#0:abc",
        "binding": "Hello",
        "attempt": 1,
        "maxAttempts": 3,
        "payload": [0.5] * 14_000,
        "timeoutMs": 60_000,
        "claimRequired": False,
        "deadlineAt": 1_700_000_000_000,
    }
    assert json_bytes(message) == runtime.json_size(message) == 56_148
    assert json_bytes({"name": "Ada", "score": 1e20}) == 44


EDGES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2**53 - 1,
    -(2**53) + 1,
    0.5,
    -2.25,
    1e300,
    1e20,
    1e-7,
    1.0,
    -0.0,
    "",
    "a",
    "é",
    "€",
    "😀",
    "\x00",
    '"',
    [],
    [1],
    [None] * 127,
    {},
    {"k": 1},
    {"€": "€"},
    {"a": [1, {"b": "c"}]},
    (1, 2.0),
]


@pytest.mark.parametrize("value", EDGES)
def test_edge_values_measure_as_the_runtime_counts_them(value: Any) -> None:
    assert json_bytes(value) == runtime.json_size(value)


@pytest.mark.parametrize(
    ("value", "kind"), [({1, 2}, "set"), (b"ab", "bytes"), ({"k": {1}}, "set"), ([object()], "object")]
)
def test_only_json_values_are_measured(value: Any, kind: str) -> None:
    with pytest.raises(TypeError, match=f"^not a JSON value: {kind}$"):
        json_bytes(value)


@pytest.mark.parametrize("value", [{(1, 2): 1}, "\ud800"])
def test_what_msgspec_cannot_write_is_not_measured_either(value: Any) -> None:
    # A tuple key, a lone surrogate: the message carries msgspec's reason.
    with pytest.raises(TypeError, match=r"^not a JSON value: .+"):
        json_bytes(value)


def test_the_bound_is_six_bytes_a_json_byte() -> None:
    assert JS_PER_JSON_BYTE == 6
    assert (json_bound(0), json_bound(10)) == (0, 60)
    assert json_bytes(1e20) == 21 <= json_bound(len(msgspec.json.encode(1e20)))  # the worst case: 4 -> 21


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_any_json_value_measures_as_the_runtime_counts_it_and_within_the_bound(value: Any) -> None:
    assert json_bytes(value) == runtime.json_size(value)
    assert json_bytes(value) <= json_bound(len(msgspec.json.encode(value)))
