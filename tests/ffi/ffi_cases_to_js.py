"""FFI cases: Python values crossing into JS, as call arguments (implicit conversion) and through ``to_js``.

What JS received is read inside the same call (``JSON.stringify``, ``Number.isSafeInteger``, ``js_string``) or by
reading it back out of a JS array, since a Python object that crosses as a borrowed PyProxy is destroyed when the
call returns.
"""

from __future__ import annotations

import datetime
from typing import Any

import js
from ffi_case import case, js_string
from ffi_describe import attempt
from pyodide.ffi import destroy_proxies, jsnull, to_js

MAX_SAFE = 2**53 - 1


def _number_probe(value: Any) -> list[Any]:
    """How JS holds a Python number: safe integer or not, its JSON, its string, and what reads back."""
    return [
        js.Number.isSafeInteger(value),
        attempt(lambda: js.JSON.stringify(value)),
        js_string(value),
        js.Array.of(value)[0],
    ]


# --- None, jsnull, bools ---------------------------------------------------------------------------------------


@case
def arg_none_is_undefined() -> Any:
    return [js.JSON.stringify(None), js_string(None)]


@case
def arg_jsnull_is_null() -> Any:
    return [js.JSON.stringify(jsnull), js_string(jsnull)]


@case
def arg_none_and_jsnull_in_array_read_back() -> Any:
    array = js.Array.of(None, jsnull)
    return [array.length, array[0], array[1], js.JSON.stringify(array)]


@case
def arg_none_and_jsnull_as_object_values() -> Any:
    return js.JSON.stringify(js.Object.fromEntries([["a", None], ["b", jsnull], ["c", 0]]))


@case
def arg_bools() -> Any:
    return [js.JSON.stringify(True), js.JSON.stringify(False), js_string(True), js.Array.of(False)[0]]


# --- ints --------------------------------------------------------------------------------------------------------


@case
def arg_int_small() -> Any:
    return _number_probe(42)


@case
def arg_int_2_53_minus_2() -> Any:
    return _number_probe(MAX_SAFE - 1)


@case
def arg_int_2_53_minus_1() -> Any:
    return _number_probe(MAX_SAFE)


@case
def arg_int_2_53() -> Any:
    return _number_probe(2**53)


@case
def arg_int_2_53_plus_1() -> Any:
    return _number_probe(2**53 + 1)


@case
def arg_int_negative_boundary() -> Any:
    return [_number_probe(-(MAX_SAFE - 1)), _number_probe(-MAX_SAFE)]


@case
def arg_int_huge() -> Any:
    return _number_probe(-(2**100) - 3)


@case
def arg_int_2_64_reads_back_exactly() -> Any:
    value = 2**64 + 1
    back = js.Array.of(value)[0]
    return [back == value, back]


# --- floats ------------------------------------------------------------------------------------------------------


@case
def arg_float_fraction() -> Any:
    return _number_probe(1.5)


@case
def arg_float_integer_valued_reads_back_as_int() -> Any:
    return _number_probe(3.0)


@case
def arg_float_nan() -> Any:
    return [*_number_probe(float("nan")), js.Number.isNaN(float("nan"))]


@case
def arg_float_infinities() -> Any:
    return [_number_probe(float("inf")), _number_probe(float("-inf"))]


@case
def arg_float_negative_zero() -> Any:
    return [*_number_probe(-0.0), js.Object.is_(-0.0, 0), js.Object.is_(-0.0, -0.0)]


@case
def arg_float_past_safe_range() -> Any:
    return [_number_probe(2.0**53), _number_probe(1e300)]


# --- strings -----------------------------------------------------------------------------------------------------


@case
def arg_str_non_bmp() -> Any:
    text = "a\N{GRINNING FACE}\N{LATIN SMALL LETTER E WITH ACUTE}"
    return [js.JSON.stringify(text), js.Array.from_(text).length, js.Array.of(text)[0]]


@case
def arg_str_lone_surrogate() -> Any:
    text = "x\ud800y"
    return [js.JSON.stringify(text), js.Array.of(text)[0]]


@case
def arg_str_nul_and_empty() -> Any:
    return [js.JSON.stringify("a\x00b"), js.JSON.stringify(""), js.Array.of("")[0]]


# --- Python containers and objects as arguments (borrowed PyProxies) -------------------------------------------


@case
def arg_bytes_is_pyproxy() -> Any:
    return [js.Array.isArray(b"ab"), js.JSON.stringify(b"ab"), js_string(b"ab")]


@case
def arg_bytearray_and_memoryview_are_pyproxies() -> Any:
    return [
        js_string(bytearray(b"ab")),
        js.JSON.stringify(bytearray(b"ab")),
        js.JSON.stringify(memoryview(b"c")),
    ]


@case
def arg_list_is_pyproxy_not_array() -> Any:
    return [js.Array.isArray([1, 2]), js.JSON.stringify([1, None, jsnull, "x"]), js_string([1, "x"])]


@case
def arg_tuple_and_set_are_pyproxies() -> Any:
    return [
        js.Array.isArray((1, 2)),
        js.JSON.stringify((1, 2)),
        js_string((1, 2)),
        js.JSON.stringify({1}),
        js_string({1}),
    ]


@case
def arg_dict_is_pyproxy() -> Any:
    return [js.JSON.stringify({"a": 1, "b": None}), js_string({"a": 1})]


@case
def arg_borrowed_proxy_dies_after_call() -> Any:
    array = js.Array.of([1, 2])
    return [array.length, attempt(lambda: js.JSON.stringify(array))]


@case
def arg_jsproxy_crosses_back_unchanged() -> Any:
    obj = js.Object.new()
    back = js.Array.of(obj)[0]
    return [back == obj, back is obj, back]


@case
def kwargs_become_a_trailing_object() -> Any:
    target = js.Object.new()
    result = js.Object.assign(target, a=1, b=None, c=jsnull)
    return [js.JSON.stringify(result), result == target]


@case
def kwargs_after_positional_arguments() -> Any:
    return js.JSON.stringify(js.Array.of(1, "x", k=2))


# --- to_js -------------------------------------------------------------------------------------------------------


@case
def to_js_none_and_jsnull() -> Any:
    return [to_js(None), to_js(jsnull)]


@case
def to_js_primitives_stay_python() -> Any:
    return [to_js(1), to_js(2**60), to_js(1.5), to_js("s"), to_js(True)]


@case
def to_js_list() -> Any:
    array = to_js([1, None, jsnull, "a"])
    return [array, array[1], array[2]]


@case
def to_js_tuple() -> Any:
    return to_js((1, "a"))


@case
def to_js_set() -> Any:
    converted = to_js({3})
    return [converted, converted.has(3)]


@case
def to_js_dict_default_is_a_map() -> Any:
    converted = to_js({"a": 1, "b": None})
    return [converted, converted.get("a"), converted.has("b"), converted.get("b")]


@case
def to_js_dict_with_object_from_entries() -> Any:
    return to_js({"a": 1, "b": None, "c": jsnull}, dict_converter=js.Object.fromEntries)


@case
def to_js_dict_keys_int_and_str_as_map() -> Any:
    converted = to_js({1: "int", "1": "str"})
    return [converted.size, converted.get(1), converted.get("1")]


@case
def to_js_dict_keys_int_and_str_as_object() -> Any:
    return to_js({1: "int", "1": "str"}, dict_converter=js.Object.fromEntries)


@case
def to_js_dict_non_str_keys_as_object() -> Any:
    converted = to_js({None: 1, 2.5: 2, True: 3}, dict_converter=js.Object.fromEntries)
    return js.Object.keys(converted)


@case
def to_js_dict_tuple_key_refused() -> Any:
    return attempt(lambda: to_js({(1, 2): 4}, dict_converter=js.Object.fromEntries))


@case
def to_js_object_integer_keys_come_first() -> Any:
    converted = to_js({"b": 1, "10": 2, "a": 3, "2": 4}, dict_converter=js.Object.fromEntries)
    return js.JSON.stringify(converted)


@case
def to_js_nested_with_object_from_entries() -> Any:
    value = {"a": [{"b": None, "c": (1, 2)}], "d": {"e": jsnull, "f": [True, 1.5]}}
    return to_js(value, dict_converter=js.Object.fromEntries)


@case
def to_js_nested_default_maps() -> Any:
    converted = to_js({"a": {"b": [1]}})
    inner = converted.get("a")
    return [inner, inner.get("b")]


@case
def to_js_depth_one_leaves_inner_python() -> Any:
    converted = to_js([[1, 2], "x"], depth=1)
    return [converted.length, js.Array.isArray(converted), attempt(lambda: js.Array.isArray(converted[0]))]


@case
def to_js_special_floats_in_array() -> Any:
    converted = to_js([float("nan"), float("inf"), -0.0, 2**53])
    return [
        converted[0],
        converted[1],
        converted[2],
        converted[3],
        attempt(lambda: js.JSON.stringify(converted)),
    ]


@case
def to_js_bytes_is_uint8array() -> Any:
    converted = to_js(b"\x00\xffa")
    return [converted, converted.length, converted[1]]


@case
def to_js_bytearray_and_memoryview() -> Any:
    return [to_js(bytearray(b"\x01\x02")), to_js(memoryview(b"\x03"))]


@case
def to_js_unconvertible_object_is_a_proxy() -> Any:
    class Point:
        pass

    converted = to_js(Point())
    converted.destroy()
    return converted.typeof


@case
def to_js_refuses_without_pyproxies() -> Any:
    class Point:
        pass

    return attempt(lambda: to_js([Point()], create_pyproxies=False))


@case
def to_js_default_converter() -> Any:
    class Point:
        def __init__(self, x: int, y: int) -> None:
            self.x, self.y = x, y

    def convert_point(value: Any, convert: Any, cache: Any) -> Any:
        return convert([value.x, value.y])

    converted = to_js(
        {"p": Point(1, 2)}, dict_converter=js.Object.fromEntries, default_converter=convert_point
    )
    return js.JSON.stringify(converted)


@case
def to_js_datetime_is_not_a_date() -> Any:
    converted = to_js(datetime.datetime(2020, 1, 2, 3, 4, 5))
    typeof = converted.typeof
    converted.destroy()
    return typeof


@case
def to_js_of_a_jsproxy_is_itself() -> Any:
    obj = js.Object.new()
    return [to_js(obj) == obj, to_js([obj])[0] == obj]


@case
def to_js_non_bmp_keys_and_values() -> Any:
    return js.JSON.stringify(to_js({"\N{GRINNING FACE}": "\U0001f4a9"}, dict_converter=js.Object.fromEntries))


@case
def to_js_pyproxies_collects_created_proxies() -> Any:
    class Thing:
        pass

    proxies = js.Array.new()
    converted = to_js([Thing(), 1], pyproxies=proxies)
    count = proxies.length
    destroy_proxies(proxies)
    return [count, converted.length]
