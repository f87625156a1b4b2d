"""``JSON.stringify`` in the emulation: the one-call path for plain data writes exactly what the general
writer writes (ADR-0153), on generated values and on the cases where JavaScript's rules differ from Python's."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsemu import json_text
from jsemu.core import UNDEFINED, JsBigIntValue, JsCallable, js_error, jsnull
from jsemu.objects import JsArray, JsObject


def general(value: Any) -> Any:
    """The text the general writer gives (what stringify answered before the plain path)."""
    parts: list[str] = []
    return "".join(parts) if json_text._write(value, parts, set()) else UNDEFINED  # pyright: ignore[reportPrivateUsage]


numbers = st.one_of(
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, 1e20, 1e21, -1e21, 123456789012345680000.0, 5e-7, 1e-7, 0.1]),
)
texts = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=()))
leaves = st.one_of(numbers, texts, st.booleans(), st.just(jsnull), st.just(UNDEFINED))
keys = st.one_of(texts, st.sampled_from(["0", "1", "10", "01", "4294967295", "a", "toJSON", ""]))
values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5).map(JsArray),
        st.dictionaries(keys, inner, max_size=5).map(JsObject),
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(values)
def test_the_plain_path_writes_what_the_general_writer_writes(value: Any) -> None:
    try:
        expected = general(value)
    except Exception as error:
        with pytest.raises(type(error)):
            json_text.stringify(value)
        return
    assert json_text.stringify(value) == expected


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (JsObject({"b": 1, "2": True, "1": "x", "a": jsnull}), '{"1":"x","2":true,"b":1,"a":null}'),
        (JsArray([1.0, -0.0, 1e21, 0.5, 1e20]), "[1,0,1e+21,0.5,100000000000000000000]"),
        (JsObject({"s": '\ud800\n\u2028\x7f"\\'}), '{"s":"\\ud800\\n\u2028\x7f\\"\\\\"}'),
        (JsObject({"u": UNDEFINED, "f": JsCallable(lambda: 1)}), "{}"),
        (JsArray([UNDEFINED, JsCallable(lambda: 1)]), "[null,null]"),
    ],
)
def test_javascripts_own_rules_hold(value: Any, text: str) -> None:
    assert json_text.stringify(value) == text
    assert general(value) == text


def test_a_to_json_method_and_errors_take_the_general_path() -> None:
    with_to_json = JsObject({"toJSON": JsCallable(lambda: "replaced")})
    assert json_text.stringify(JsObject({"x": with_to_json})) == '{"x":"replaced"}'
    cycle = JsObject({})
    cycle._props["self"] = cycle  # pyright: ignore[reportPrivateUsage]
    with pytest.raises(type(js_error("TypeError", "x"))):
        json_text.stringify(cycle)
    with pytest.raises(type(js_error("TypeError", "x"))):
        json_text.stringify(JsArray([JsBigIntValue(2**60)]))
