"""FFI cases: JS values crossing into Python, as results and property reads (implicit conversion) and through
``JsProxy.to_py``."""

from __future__ import annotations

import datetime
from typing import Any

import js
from ffi_case import case, js_error_name
from ffi_describe import attempt
from pyodide.ffi import jsnull

# --- null, undefined ---------------------------------------------------------------------------------------------


@case
def js_null_result_is_jsnull() -> Any:
    return js.JSON.parse("null")


@case
def js_null_property_is_jsnull() -> Any:
    return js.JSON.parse('{"a": null}').a


@case
def js_null_array_item_is_jsnull() -> Any:
    return js.JSON.parse("[null]")[0]


@case
def js_array_hole_index_raises() -> Any:
    return js.Array.new(2)[1]


@case
def js_undefined_global_is_none() -> Any:
    return js.undefined


# --- numbers -----------------------------------------------------------------------------------------------------


@case
def js_integer_valued_number_is_int() -> Any:
    return [
        js.JSON.parse("1.0"),
        js.JSON.parse("-12"),
        js.JSON.parse("4503599627370496.5"),
        js.JSON.parse("0.1"),
    ]


@case
def js_negative_zero_is_int_zero() -> Any:
    return js.JSON.parse("-0")


@case
def js_max_safe_integer_is_int() -> Any:
    return [js.Number.MAX_SAFE_INTEGER, js.Number.MIN_SAFE_INTEGER]


@case
def js_unsafe_integer_number_is_float() -> Any:
    return [js.JSON.parse("9007199254740992"), js.JSON.parse("9007199254740993"), js.JSON.parse("1e300")]


@case
def js_nan_and_infinity_are_floats() -> Any:
    return [js.Number.NaN, js.Number.POSITIVE_INFINITY, js.Number.NEGATIVE_INFINITY]


@case
def js_bigint_is_int() -> Any:
    return [js.BigInt(5), js.BigInt("-123456789012345678901234567890"), js.BigInt(0)]


@case
def js_bigint_from_bad_text_raises() -> Any:
    return js_error_name(lambda: js.BigInt("1.5"))


@case
def js_number_of_python_int_past_safe_range() -> Any:
    return js.Number(2**53 + 1)


# --- strings, booleans -------------------------------------------------------------------------------------------


@case
def js_string_surrogate_pair_is_one_code_point() -> Any:
    return js.JSON.parse('"\\ud83d\\ude00"')


@case
def js_string_lone_surrogate() -> Any:
    return js.JSON.parse('"a\\udc00b"')


@case
def js_string_with_nul() -> Any:
    return js.JSON.parse('"a\\u0000b"')


@case
def js_booleans_are_bools() -> Any:
    return [js.JSON.parse("true"), js.JSON.parse("false")]


# --- what kind of proxy each JS object becomes -------------------------------------------------------------------


@case
def js_plain_object_proxy() -> Any:
    return js.JSON.parse('{"a": 1, "b": [true]}')


@case
def js_array_proxy() -> Any:
    return js.JSON.parse("[1, null, 2]")


@case
def js_map_proxy() -> Any:
    return js.Map.new(js.JSON.parse('[["a", 1]]'))


@case
def js_set_proxy() -> Any:
    return js.Set.new(js.JSON.parse("[1, 2, 2]"))


@case
def js_function_proxy() -> Any:
    return js.JSON.stringify


@case
def js_date_proxy() -> Any:
    return js.Date.new(0)


@case
def js_error_proxy() -> Any:
    return js.Error.new("boom")


@case
def js_uint8array_proxy() -> Any:
    return js.Uint8Array.new(2)


@case
def js_arraybuffer_proxy() -> Any:
    return js.ArrayBuffer.new(2)


@case
def js_null_prototype_object_proxy() -> Any:
    return js.Object.create(jsnull)


@case
def jsproxy_class_names() -> Any:
    kind = type(js.Object.new())
    return [kind.__name__, kind.__qualname__, kind.__module__, repr(kind)]


@case
def js_object_with_own_constructor_property() -> Any:
    obj = js.JSON.parse('{"constructor": {"name": "Fake"}}')
    return obj.constructor.name


# --- to_py -------------------------------------------------------------------------------------------------------


@case
def to_py_nested_objects_and_arrays() -> Any:
    return js.JSON.parse('{"a": [1, {"b": null}], "c": "x", "d": {"e": [[]]}}').to_py()


@case
def to_py_keeps_undefined_as_none() -> Any:
    return js.Object.fromEntries([["u", None], ["n", jsnull]]).to_py()


@case
def to_py_object_key_order() -> Any:
    return js.JSON.parse('{"b": 1, "10": 2, "a": 3, "2": 4}').to_py()


@case
def to_py_depth_one() -> Any:
    return js.JSON.parse('{"a": {"b": {"c": 1}}, "l": [[1]]}').to_py(depth=1)


@case
def to_py_map() -> Any:
    return js.Map.new(js.JSON.parse('[[1, "int"], ["1", "str"], [null, "null"]]')).to_py()


@case
def to_py_map_with_unhashable_key() -> Any:
    return attempt(lambda: js.Map.new(js.JSON.parse('[[[1], "array key"]]')).to_py())


@case
def to_py_set() -> Any:
    return js.Set.new(js.JSON.parse('[1, "a", 1]')).to_py()


@case
def to_py_array_with_holes_and_specials() -> Any:
    array = js.Array.new(2)
    array.push(js.BigInt(7), js.Number.NaN, js.JSON.parse("-0"))
    return array.to_py()


@case
def to_py_null_prototype_object() -> Any:
    obj = js.Object.create(jsnull)
    obj.a = 1
    return obj.to_py()


@case
def to_py_leaves_date_and_error_as_proxies() -> Any:
    obj = js.Object.new()
    obj.when = js.Date.new(0)
    obj.err = js.Error.new("e")
    converted = obj.to_py()
    return [sorted(converted), converted["when"].constructor.name, converted["err"].constructor.name]


@case
def to_py_typed_array_inside_object() -> Any:
    obj = js.Object.new()
    obj.data = js.Uint8Array.new(2)
    return obj.to_py()


@case
def to_py_default_converter_receives_unconverted_values() -> Any:
    seen: list[str] = []

    def converter(value: Any, convert: Any, cache: Any) -> Any:
        seen.append(value.constructor.name)
        if value.constructor.name == "Date":
            return datetime.datetime.fromtimestamp(value.getTime() / 1000, tz=datetime.UTC)
        if value.constructor.name == "Error":
            return Exception(value.toString())
        return value

    obj = js.Object.new()
    obj.when = js.Date.new(86_400_000)
    obj.errors = js.Array.of(js.Error.new("e"), jsnull)
    obj.plain = js.JSON.parse('{"n": null}')
    return [obj.to_py(default_converter=converter), sorted(seen)]


@case
def to_py_default_converter_can_convert_inside() -> Any:
    def converter(value: Any, convert: Any, cache: Any) -> Any:
        return {"date_ms": convert(value.getTime())}

    obj = js.Object.new()
    obj.when = js.Date.new(5)
    return obj.to_py(default_converter=converter)


@case
def to_py_date_alone_stays_a_proxy() -> Any:
    return js.Date.new(0).to_py()


@case
def to_py_uint8array_is_memoryview() -> Any:
    converted = js.Uint8Array.new(js.JSON.parse("[1, 255]")).to_py()
    return [converted, converted.tolist()]


@case
def to_py_arraybuffer_is_memoryview() -> Any:
    return js.ArrayBuffer.new(2).to_py()


@case
def to_py_same_object_twice_is_one_python_object() -> Any:
    inner = js.JSON.parse('{"x": 1}')
    outer = js.Array.of(inner, inner).to_py()
    return [outer[0] is outer[1], outer]
