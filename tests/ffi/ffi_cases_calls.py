"""FFI cases: calls in both directions, Python callables in JS (borrowed, ``create_proxy``,
``create_once_callable``) and their lifetimes, errors crossing both ways, constructors and ``Date``."""

from __future__ import annotations

import datetime
from typing import Any

import js
import pyodide
import pyodide.ffi as ffi
from ffi_case import case, js_error_name, js_string
from ffi_describe import attempt
from pyodide.ffi import JsException, create_once_callable, create_proxy, destroy_proxies, jsnull


def _boom(*_args: Any) -> Any:
    raise ValueError("boom")


def _double(value: Any, *_rest: Any) -> Any:
    return value * 2


# --- calling JS --------------------------------------------------------------------------------------------------


@case
def call_non_callable_proxy_raises() -> Any:
    return attempt(lambda: js.JSON.parse("{}")())


@case
def call_method_read_off_keeps_this() -> Any:
    table = js.Map.new(js.JSON.parse('[["a", 1]]'))
    getter = table.get
    return getter("a")


@case
def call_function_properties() -> Any:
    return [js.JSON.stringify.name, str(js.JSON.stringify), js.Map.name]


@case
def call_new_map_from_python_pairs() -> Any:
    table = js.Map.new([["a", 1], ["b", None], ["c", jsnull]])
    return [table.size, table.get("a"), table.get("b"), table.get("c"), table.has("b")]


@case
def call_new_map_from_dict_items() -> Any:
    table = js.Map.new({"x": "1", "y": "2"}.items())
    return [table.size, table.get("y")]


@case
def call_new_set_from_python_list() -> Any:
    return js.Set.new([1, 2, 2, "2"]).size


@case
def call_object_from_entries_of_dict_items() -> Any:
    return js.JSON.stringify(js.Object.fromEntries({"a": 1, "b": [1, None]}.items()))


@case
def call_array_from_python_iterables() -> Any:
    return [
        js.Array.from_(range(3)),
        js.Array.from_(x * x for x in range(3)),
        js.Array.from_("a\N{GRINNING FACE}"),
        js.Array.from_({"k": 1}),
    ]


@case
def call_array_new_with_length() -> Any:
    return [js.Array.new(3).length, js_error_name(lambda: js.Array.new(-1))]


@case
def call_json_parse_syntax_error() -> Any:
    return js_error_name(lambda: js.JSON.parse("{"))


@case
def bigint_result_crosses_back_as_number() -> Any:
    return [
        js.JSON.stringify(js.BigInt(1)),
        attempt(lambda: js.JSON.stringify(js.BigInt("9007199254740993"))),
    ]


@case
def call_json_stringify_with_python_replacer_and_indent() -> Any:
    value = js.JSON.parse('{"a": 1, "b": [2]}')
    return js.JSON.stringify(value, lambda key, item: item, 1)


# --- Python callables handed to JS -------------------------------------------------------------------------------


@case
def callback_plain_lambda_during_call() -> Any:
    return js.Array.of(1, 2, 3).map(_double)


@case
def callback_receives_js_arguments() -> Any:
    seen: list[Any] = []
    js.Array.of(jsnull, None, 1.5).forEach(
        lambda value, index, array: seen.append([value, index, array.length])
    )
    return seen


@case
def callback_with_too_few_parameters() -> Any:
    return attempt(lambda: js.Array.of(1).map(lambda value: value))


@case
def callback_return_values_cross_back() -> Any:
    mapped = js.Array.of(1, 2, 3, 4).map(lambda value, *_: [None, jsnull, 2**60, "s"][value - 1])
    return [mapped[0], mapped[1], mapped[2], mapped[3], mapped.length]


@case
def callback_returns_python_list() -> Any:
    mapped = js.Array.of(1).map(lambda *_: [1, 2])
    return [js.JSON.stringify(mapped), js.Array.isArray(mapped[0]), mapped[0]]


@case
def callback_raises_python_error() -> Any:
    try:
        js.Array.of(1).map(_boom)
    except ValueError as error:
        return ["ValueError", str(error)]
    return "not raised"


@case
def callback_raises_same_exception_object() -> Any:
    failure = KeyError("k")

    def fail(*_args: Any) -> Any:
        raise failure

    try:
        js.Array.of(1).forEach(fail)
    except KeyError as error:
        return error is failure
    return "not raised"


@case
def callback_plain_lambda_argument_is_destroyed_after_call() -> Any:
    holder = js.Array.of(lambda: 1)
    return attempt(lambda: holder[0]())


@case
def callback_plain_lambda_set_as_attribute_reads_back_as_itself() -> Any:
    def one(*_args: Any) -> int:
        return 1

    holder = js.Object.new()
    holder.f = one
    return [holder.f is one, holder.f(), js.Array.of(0).map(holder.f)]


@case
def callback_plain_lambda_inside_python_list_reads_back_as_itself() -> Any:
    def one() -> int:
        return 1

    holder = js.Object.fromEntries([["f", one]])
    return [holder.f is one, holder.f()]


@case
def create_proxy_describe() -> Any:
    proxy = create_proxy(_double)
    try:
        return [attempt(lambda: proxy), isinstance(proxy, ffi.JsDoubleProxy), proxy.unwrap() is _double]
    finally:
        proxy.destroy()


@case
def create_proxy_stored_and_called_later() -> Any:
    proxy = create_proxy(_double)
    holder = js.Object.fromEntries([["f", proxy]])
    read = holder.f
    result = [read is _double, read(21), js.Array.of(4).map(holder.f)]
    proxy.destroy()
    return result


@case
def create_proxy_of_object_reads_back() -> Any:
    thing = {"k": 1}
    proxy = create_proxy(thing)
    back = js.Array.of(proxy)[0]
    result = [back is thing, back == thing, type(back).__qualname__]
    proxy.destroy()
    return result


@case
def create_proxy_destroyed_then_called() -> Any:
    proxy = create_proxy(_double)
    holder = js.Object.fromEntries([["f", proxy]])
    proxy.destroy()
    return [attempt(lambda: holder.f(1)), attempt(lambda: js.Array.of(1).map(holder.f))]


@case
def create_proxy_destroyed_then_passed() -> Any:
    proxy = create_proxy(_double)
    proxy.destroy()
    return attempt(lambda: js.Array.of(1).map(proxy))


@case
def create_proxy_destroy_twice() -> Any:
    proxy = create_proxy(_double)
    proxy.destroy()
    return attempt(proxy.destroy)


@case
def create_proxy_of_a_jsproxy() -> Any:
    proxy = create_proxy(js.Object.new())
    try:
        return [attempt(lambda: proxy), type(proxy.unwrap()).__qualname__]
    finally:
        proxy.destroy()


@case
def create_once_callable_called_once() -> Any:
    return js.Array.of(5).map(create_once_callable(_double))


@case
def create_once_callable_called_twice() -> Any:
    calls: list[Any] = []
    once = create_once_callable(lambda value, *_: calls.append(value))
    outcome = attempt(lambda: js.Array.of(1, 2).forEach(once))
    return [outcome, calls]


@case
def create_once_callable_destroyed_before_call() -> Any:
    once = create_once_callable(_double)
    once.destroy()
    return attempt(lambda: js.Array.of(1).map(once))


@case
def destroy_proxies_destroys_each() -> Any:
    proxy = create_proxy(_double)
    holder = js.Object.fromEntries([["f", proxy]])
    proxies = js.Array.of(proxy)
    destroy_proxies(proxies)
    return [attempt(lambda: holder.f(1)), proxies.length]


@case
def destroy_proxies_of_empty_array() -> Any:
    return destroy_proxies(js.Array.new())


# --- errors ------------------------------------------------------------------------------------------------------


@case
def js_error_value_attributes() -> Any:
    error = js.TypeError.new("bad thing")
    return [isinstance(error, Exception), error.name, error.message, str(error), error.args]


@case
def js_error_without_message() -> Any:
    error = js.Error.new()
    return [error.name, error.message, str(error)]


@case
def js_error_message_from_python_value() -> Any:
    return [js.Error.new(123).message, js.Error.new(None).message, js.Error.new(jsnull).message]


@case
def js_error_raised_from_python() -> Any:
    error = js.Error.new("thrown")
    try:
        raise error
    except JsException as caught:
        return [caught is error, caught.name, caught.message, str(caught)]


@case
def js_error_thrown_by_js_is_jsexception() -> Any:
    try:
        js.JSON.parse("[")
    except JsException as caught:
        error: Any = caught  # a JS error proxy: its JS properties are not in the static type
        return [type(error).__name__, error.name, isinstance(error, ffi.JsProxy), error.constructor.name]
    return "not raised"


@case
def js_error_name_assigned() -> Any:
    error = js.Error.new("m")
    error.name = "NonRetryableError"
    return [error.name, str(error), error.toString()]


# --- Date --------------------------------------------------------------------------------------------------------


@case
def date_from_epoch_ms() -> Any:
    date = js.Date.new(1_577_836_800_000)
    return [date.getTime(), date.toISOString(), date.constructor.name]


@case
def date_from_python_timestamp() -> Any:
    moment = datetime.datetime(2020, 1, 2, 3, 4, 5, 678_000, tzinfo=datetime.UTC)
    return js.Date.new(moment.timestamp() * 1000).toISOString()


@case
def date_time_value_is_truncated() -> Any:
    return [js.Date.new(1.9).getTime(), js.Date.new(-1.9).getTime()]


@case
def date_parses_iso_text() -> Any:
    return js.Date.new("2020-01-01T00:00:00Z").getTime()


@case
def date_invalid_is_nan() -> Any:
    return [js.Date.new("not a date").getTime(), js_error_name(lambda: js.Date.new("nope").toISOString())]


@case
def date_to_python_datetime_as_the_sdk_does() -> Any:
    date = js.Date.new(1_577_836_800_500)
    return datetime.datetime.fromtimestamp(date.getTime() / 1000, tz=datetime.UTC)


@case
def python_datetime_argument_is_a_proxy() -> Any:
    return js_string(datetime.datetime(2020, 1, 2, 3, 4, 5))


# --- the pyodide module itself -----------------------------------------------------------------------------------


@case
def pyodide_version() -> Any:
    return pyodide.__version__


@case
def jsnull_properties() -> Any:
    return [repr(jsnull), bool(jsnull), jsnull == None, jsnull is ffi.jsnull, isinstance(jsnull, ffi.JsProxy)]  # noqa: E711


@case
def js_missing_global_raises() -> Any:
    return attempt(lambda: js.no_such_global_anywhere)


@case
def ffi_public_names() -> Any:
    return sorted(ffi.__all__)


@case
def ffi_can_run_sync_outside_jspi() -> Any:
    module: Any = ffi  # looked up at run time: a missing function is this case's outcome, not a type error
    return module.can_run_sync()
