"""FFI cases: attribute and item access, length, iteration, membership and mutation on proxies of JS objects,
arrays, Maps, Sets and typed arrays."""

from __future__ import annotations

from typing import Any

import js
from ffi_case import case
from ffi_describe import attempt
from pyodide.ffi import jsnull


def _obj() -> Any:
    return js.JSON.parse('{"a": 1, "n": null, "from": 2}')


# --- plain objects -----------------------------------------------------------------------------------------------


@case
def object_attribute() -> Any:
    return [_obj().a, _obj().n]


@case
def object_missing_attribute_raises() -> Any:
    return attempt(lambda: _obj().missing)


@case
def object_attribute_holding_undefined_is_none() -> Any:
    return js.Object.fromEntries([["u", None]]).u


@case
def object_hasattr() -> Any:
    obj = _obj()
    return [hasattr(obj, "a"), hasattr(obj, "n"), hasattr(obj, "missing"), hasattr(obj, "toString")]


@case
def object_keyword_attribute_with_underscore() -> Any:
    return [_obj().from_, js.Array.from_ == getattr(js.Array, "from")]


@case
def object_subscript_raises() -> Any:
    return attempt(lambda: _obj()["a"])


@case
def object_subscript_assignment_raises() -> Any:
    def assign() -> None:
        _obj()["a"] = 2

    return attempt(assign)


@case
def object_in_raises() -> Any:
    return attempt(lambda: "a" in _obj())


@case
def object_len_raises() -> Any:
    return attempt(lambda: len(_obj()))


@case
def object_iter_raises() -> Any:
    return attempt(lambda: list(_obj()))


@case
def object_truthiness() -> Any:
    return [bool(js.Object.new()), bool(_obj()), bool(js.Array.new()), bool(js.Array.of(0))]


@case
def object_setattr_values() -> Any:
    obj = js.Object.new()
    obj.x = 1
    obj.none = None
    obj.null = jsnull
    obj.big = 2**60
    return [attempt(lambda: js.JSON.stringify(obj)), js.Object.keys(obj), obj.none]


@case
def object_setattr_python_object_keeps_it() -> Any:
    obj = js.Object.new()
    value = [1, 2]
    obj.list = value
    back = obj.list
    return [back is value, js.JSON.stringify(obj)]


@case
def object_delattr() -> Any:
    obj = _obj()
    del obj.a
    return [js.JSON.stringify(obj), hasattr(obj, "a")]


@case
def object_as_object_map() -> Any:
    view = _obj().as_object_map()
    return [
        view["a"],
        view["n"],
        len(view),
        "a" in view,
        "zz" in view,
        list(view),
        attempt(lambda: view["zz"]),
    ]


@case
def object_constructor_name() -> Any:
    return [_obj().constructor.name, js.Array.new().constructor.name, js.Map.new().constructor.name]


@case
def object_null_prototype_has_no_constructor() -> Any:
    obj = js.Object.create(jsnull)
    return [hasattr(obj, "constructor"), attempt(lambda: str(obj))]


@case
def object_equality_is_identity() -> Any:
    obj = _obj()
    holder = js.Array.of(obj)
    return [holder[0] == obj, obj == _obj(), obj != _obj(), js.Object.new() == {}]


@case
def object_repr_and_str() -> Any:
    return [repr(_obj()), str(js.Array.of(1, "a")), repr(js.Array.of(1, "a"))]


@case
def object_entries_and_keys() -> Any:
    return [js.Object.keys(_obj()), js.Object.entries(_obj())]


@case
def python_value_hasattr_constructor() -> Any:
    return [hasattr(1, "constructor"), hasattr({}, "constructor"), hasattr(jsnull, "constructor")]


# --- arrays ------------------------------------------------------------------------------------------------------


def _array() -> Any:
    return js.JSON.parse('[10, "b", null, [1]]')


@case
def array_index() -> Any:
    array = _array()
    return [array[0], array[1], array[2], array[3], array[-1]]


@case
def array_index_out_of_range() -> Any:
    return [attempt(lambda: _array()[4]), attempt(lambda: _array()[-5])]


@case
def array_index_by_str_raises() -> Any:
    return attempt(lambda: _array()["0"])


@case
def array_slice() -> Any:
    return attempt(lambda: _array()[1:3])


@case
def array_len_iteration_and_in() -> Any:
    array = _array()
    return [len(array), array.length, list(array)[:3], 10 in array, 11 in array, "b" in array]


@case
def array_setitem() -> Any:
    array = _array()
    array[0] = None
    array[1] = jsnull
    array[2] = 2**60
    return [attempt(lambda: js.JSON.stringify(array)), array[0], array[1], array[2]]


@case
def array_delitem() -> Any:
    array = _array()
    del array[0]
    return js.JSON.stringify(array)


@case
def array_python_sequence_methods() -> Any:
    array = js.Array.of(1, 2, 1)
    return [array.index(2), array.count(1), attempt(lambda: array.index(5))]


@case
def array_js_methods() -> Any:
    array = js.Array.of(3, 1, 2)
    array.push(4)
    popped = array.pop()
    return [popped, array.includes(1), array.indexOf(2), array.join("-"), array.slice(1)]


@case
def array_equality_with_list() -> Any:
    return [js.Array.of(1) == [1], js.Array.of(1).to_py() == [1]]


# --- Maps and Sets -----------------------------------------------------------------------------------------------


def _map() -> Any:
    return js.Map.new(js.JSON.parse('[["a", 1], ["n", null]]'))


@case
def map_getitem() -> Any:
    table = _map()
    return [table["a"], table["n"], attempt(lambda: table["missing"])]


@case
def map_get_is_python_mapping_get() -> Any:
    table = _map()
    return [table.get("a"), table.get("missing"), attempt(lambda: table.get("missing", 5))]


@case
def map_len_in_iteration() -> Any:
    table = _map()
    return [len(table), "a" in table, "missing" in table, list(table)]


@case
def map_keys_values_items() -> Any:
    table = _map()
    return [list(table.keys()), list(table.values()), attempt(lambda: list(table.items()))]


@case
def map_setitem_and_delitem() -> Any:
    table = _map()
    table["k"] = [1]
    del table["a"]
    return [table.size, attempt(lambda: table["k"]), list(table)]


@case
def map_set_with_non_str_keys() -> Any:
    table = js.Map.new()
    table.set(1, "one")
    table.set("1", "str")
    table.set(jsnull, "null")
    return [table.size, table[1], table["1"], table.get(jsnull)]


@case
def set_len_in_iteration() -> Any:
    items = js.Set.new(js.JSON.parse('[1, "a", null]'))
    return [len(items), 1 in items, 2 in items, sorted(str(item) for item in items), items.has("a")]


# --- typed arrays and buffers ------------------------------------------------------------------------------------


@case
def uint8array_items() -> Any:
    data = js.Uint8Array.new(3)
    data[0] = 255
    data[1] = 256
    data[2] = -1
    return [len(data), list(data), data.byteLength, data[-1]]


@case
def uint8array_to_bytes_and_memoryview() -> Any:
    data = js.Uint8Array.new(js.JSON.parse("[0, 104, 105, 255]"))
    return [data.to_bytes(), data.to_memoryview(), data.subarray(1, 3).to_bytes()]


@case
def uint8array_to_string() -> Any:
    data = js.Uint8Array.new(js.JSON.parse("[104, 105, 240, 159, 152, 128]"))
    return data.to_string("utf8")


@case
def uint8array_assign_to_bytearray() -> Any:
    target = bytearray(3)
    js.Uint8Array.new(js.JSON.parse("[7, 8, 9]")).assign_to(target)
    return target


@case
def uint8array_assign_from_bytes() -> Any:
    data = js.Uint8Array.new(2)
    data.assign(b"\x05\x06")
    return list(data)


@case
def arraybuffer_to_bytes() -> Any:
    return [js.ArrayBuffer.new(3).to_bytes(), js.ArrayBuffer.new(3).byteLength]


@case
def uint8array_from_python_bytes() -> Any:
    return [js.Uint8Array.new(b"ab").to_bytes(), js.Uint8Array.from_(b"\x00\xff").to_bytes()]


@case
def iterator_proxy() -> Any:
    iterator = js.Array.of(1, 2, 3).values()
    first = next(iterator)
    return [first, list(iterator), attempt(lambda: next(iterator))]
