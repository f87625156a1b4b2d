"""The core's V8 size of a queue body agrees with the local runtime's serialiser size (issue 17).

``tsumugi_core.queue_size.v8_bytes`` is what the scheduler uses to keep inside Cloudflare Queues' limits;
``tsumugi_dev.v8_size.v8_size`` is what the local runtime charges. Mutation testing showed the core's walk
untested by the core's own tests: each varint length boundary, zigzag integers, Latin-1 and two-byte text,
objects and arrays are pinned here against the runtime's count.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tsumugi_core.queue_size import json_bound, v8_bytes
from tsumugi_dev.v8_size import v8_size

EDGES: list[Any] = [
    None, True, False, 0, 1, -1, 63, 64, -64, -65, 8_191, 8_192, -8_192, -8_193,
    1_048_575, 1_048_576, -1_048_576, 134_217_727, 134_217_728, -134_217_728, -134_217_729,
    2**30 - 1, 2**30, -(2**30), -(2**30) - 1, 0.5, -2.25, 1e300,
    "", "a", "a" * 127, "a" * 128, "a" * 16_383, "a" * 16_384, "é" * 127, "é" * 128, "€", "€" * 64,
    "€" * 8_192, "ÿ", "Ā", [], [1], [None] * 127, [0] * 128, {}, {"k": 1}, {"€": "€"},
    {str(i): i for i in range(128)}, {"a": [1, {"b": "c"}]},
]  # fmt: skip


@pytest.mark.parametrize("value", EDGES)
def test_edge_values_measure_as_the_runtime_serialises_them(value: Any) -> None:
    assert v8_bytes(value) == v8_size(value)


def test_a_text_of_2_097_152_characters_needs_a_four_byte_length() -> None:
    assert v8_bytes("a" * 2_097_151) == v8_size("a" * 2_097_151) == 1 + 3 + 2_097_151 + 2
    assert v8_bytes("a" * 2_097_152) == v8_size("a" * 2_097_152) == 1 + 4 + 2_097_152 + 2


def test_only_json_values_are_measured() -> None:
    with pytest.raises(TypeError, match="not a JSON value: set"):
        v8_bytes({1})


def test_the_json_bound_is_three_bytes_a_json_byte_plus_the_header() -> None:
    assert json_bound(0) == 2
    assert json_bound(10) == 32


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_any_json_value_measures_as_the_runtime_serialises_it(value: Any) -> None:
    assert v8_bytes(value) == v8_size(value)
