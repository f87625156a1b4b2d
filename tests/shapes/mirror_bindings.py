"""``recorder/queues.js`` (producer side), ``analytics.js`` and ``rpc.js`` run on the local runtime's JS side."""

from __future__ import annotations

from typing import Any

from jsemu.core import JsCallable, JsException, JsProxy

from tests.shapes.js_describe import describe
from tests.shapes.js_side import (
    UNDEFINED,
    JsBigIntValue,
    array_buffer,
    call,
    date,
    get,
    js_map,
    js_set,
    js_value,
    jsnull,
    outcome,
    outcome_async,
    settle,
    uint8,
)

SEND_VARIES = ("metadata.metrics.*",)


def bodies() -> list[Any]:
    """recorder/queues.js ``BODIES``: the messages one sendBatch carries to the consumer."""
    fn = JsCallable(lambda *_: 1, name="fn_dropped")
    return [
        js_value({"body": {"a": 1, "nested": {"list": [1, "two", jsnull, True]}, "empty": {}}}),
        js_value({"body": [1, "x", jsnull, 0.5, False]}),
        js_value({"body": "text 日本 🎉"}),
        js_value({"body": ""}),
        js_value({"body": 42}),
        js_value({"body": 0.5}),
        js_value({"body": -0.0}),
        js_value({"body": float(2**53 + 1)}),
        js_value({"body": True}),
        js_value({"body": jsnull}),
        js_value({"body": {"kept": 1, "dropped": UNDEFINED, "fn_dropped": fn}}),
        js_value({"body": [UNDEFINED, float("nan"), float("inf")]}),
        js_value({"body": date(0)}),
        js_value({"body": {"big": 1e21, "small": 1e-7}}),
        js_value({"body": date(0), "contentType": "v8"}),
        js_value({"body": "plain text", "contentType": "text"}),
        js_value({"body": uint8(0, 255, 16), "contentType": "bytes"}),
    ]


async def record_producer(bodies_queue: Any, class_queue: Any, parked: Any) -> dict[str, Any]:
    """The record's ``queue_producer`` section (``recordProducer``)."""
    out: dict[str, Any] = {}

    async def send(queue: Any, method: str, *args: Any) -> dict[str, Any]:
        return await outcome_async(lambda: call(queue, method, *args), SEND_VARIES)

    out["binding"] = describe(bodies_queue)
    out["sendBatch_to_consumer"] = await send(bodies_queue, "sendBatch", js_value(bodies()))
    out["send_to_class_consumer"] = await send(class_queue, "send", js_value({"to": "the class consumer"}))
    out["send"] = await send(parked, "send", js_value({"a": 1}))
    out["send_with_options"] = await send(
        parked, "send", "x", js_value({"contentType": "text", "delaySeconds": 0})
    )
    out["sendBatch"] = await send(parked, "sendBatch", js_value([{"body": 1}, {"body": 2}]))
    out["sendBatch_empty"] = await send(parked, "sendBatch", js_value([]))
    out["send_undefined"] = await send(parked, "send", UNDEFINED)
    out["send_function"] = await send(parked, "send", JsCallable(lambda *_: 1, name=""))
    out["send_bigint"] = await send(parked, "send", JsBigIntValue(1))
    out["send_symbol"] = {"not sent": "the local runtime has no JS Symbol value"}
    cycle = js_value({})
    cycle._props["self"] = cycle  # pyright: ignore[reportPrivateUsage]
    out["send_cycle"] = await send(parked, "send", cycle)
    out["send_map_json"] = await send(parked, "send", js_map({"k": 1}))
    out["send_bad_content_type"] = await send(parked, "send", "x", js_value({"contentType": "yaml"}))
    out["send_text_not_string"] = await send(parked, "send", 1, js_value({"contentType": "text"}))
    out["sendBatch_not_objects"] = await send(parked, "sendBatch", js_value([1, 2]))
    return out


AE_CASES: dict[str, Any] = {
    "full": lambda: js_value(
        {
            "blobs": ["a", "日本", jsnull, array_buffer(0x68, 0x69)],
            "doubles": [1, 0.5, -2],
            "indexes": ["idx"],
        }
    ),
    "empty_object": lambda: js_value({}),
    "no_argument": None,
    "index_bytes": lambda: js_value({"indexes": [array_buffer(1, 2, 3)]}),
    "index_null": lambda: js_value({"indexes": [jsnull]}),
    "doubles_coerced": lambda: js_value({"doubles": ["3", True, jsnull]}),
    "doubles_nan": lambda: js_value({"doubles": ["x"]}),
    "twenty_blobs": lambda: js_value({"blobs": [f"b{i}" for i in range(20)]}),
    "twenty_one_blobs": lambda: js_value({"blobs": [f"b{i}" for i in range(21)]}),
    "twenty_one_doubles": lambda: js_value({"doubles": list(range(21))}),
    "two_indexes": lambda: js_value({"indexes": ["a", "b"]}),
    "index_96_bytes": lambda: js_value({"indexes": ["i" * 96]}),
    "index_97_bytes": lambda: js_value({"indexes": ["i" * 97]}),
    "blobs_16000_bytes": lambda: js_value({"blobs": ["x" * 16000]}),
    "blobs_16001_bytes": lambda: js_value({"blobs": ["x" * 16001]}),
    "blob_number": lambda: js_value({"blobs": [5]}),
    "unknown_field": lambda: js_value({"other": 1}),
    "not_an_object": lambda: "text",
}
"""recorder/analytics.js ``AE_CASES``, by name, each a JS value (``no_argument``: the call has none)."""


def write_data_point(dataset: Any, name: str) -> dict[str, Any]:
    """What ``dataset.writeDataPoint(case)`` returns or throws, as the record's ``caller``."""
    make = AE_CASES[name]
    if make is None:
        return outcome(lambda: call(dataset, "writeDataPoint"))
    return outcome(lambda: call(dataset, "writeDataPoint", make()))


RPC_RESULTS = (
    "object",
    "array",
    "nothing",
    "undefinedValue",
    "noReturn",
    "date",
    "bytes",
    "arrayBuffer",
    "map",
    "set",
    "bigint",
    "numbers",
    "text",
    "errorValue",
    "asyncValue",
    "plainClassInstance",
    "symbol",
    "throwsError",
    "throwsTypeError",
    "throwsRangeError",
    "throwsCustom",
    "throwsErrorWithProperties",
    "throwsString",
    "throwsObject",
)


def _pending(value: Any) -> dict[str, Any]:
    return {
        "typeof": value.js_typeof if isinstance(value, JsProxy) else type(value).__name__,
        "is_promise": type(value).__name__ == "JsPromise",
        "has_then": isinstance(value, JsProxy) and isinstance(get(value, "then"), JsCallable),
    }


async def record_service_binding(peer: Any) -> dict[str, Any]:
    """The record's ``service_binding_rpc`` section (``recordServiceBinding``) over a binding to the peer."""
    out: dict[str, Any] = {}
    out["binding"] = {"typeof": peer.js_typeof, "constructor": peer.js_class}
    out["pending_call"] = _pending(call(peer, "object"))
    calls: dict[str, Any] = {}
    for name in RPC_RESULTS:
        calls[name] = await outcome_async(lambda name=name: call(peer, name))

    async def called(name: str, method: str | None, *args: Any) -> Any:
        value = await settle(call(peer, name))
        target = value if method is None else get(value, method)
        return await settle(target.js_call(*args))

    async def called_twice() -> Any:
        counter = await settle(call(peer, "rpcTarget"))
        return js_value([await settle(call(counter, "increment")), await settle(call(counter, "increment"))])

    calls["fn"] = await outcome_async(lambda: call(peer, "fn"))
    calls["fn_called"] = await _outcome_of(lambda: called("fn", None, 41))
    calls["objectWithFunction"] = await outcome_async(lambda: call(peer, "objectWithFunction"))
    calls["objectWithFunction_called"] = await _outcome_of(lambda: called("objectWithFunction", "call"))
    calls["rpcTarget"] = await outcome_async(lambda: call(peer, "rpcTarget"))
    calls["rpcTarget_called_twice"] = await _outcome_of(called_twice)
    out["calls"] = calls
    out["missing_method"] = await outcome_async(lambda: call(peer, "noSuchMethod"))
    out["getter_property"] = await outcome_async(lambda: get(peer, "property"))
    out["missing_property"] = await outcome_async(lambda: get(peer, "noSuchProperty"))
    out["fetch_on_entrypoint_without_fetch"] = await outcome_async(
        lambda: call(peer, "fetch", "http://peer/")
    )

    async def echo(*args: Any) -> dict[str, Any]:
        # The peer answers how it saw its arguments (its own describe()), recorded as it arrives.
        try:
            return {"returns": plain_json(await settle(call(peer, "echo", *args)))}
        except JsException as error:
            return {"throws": describe(error.js_error)}

    out["echo"] = {
        "primitives": await echo(jsnull, UNDEFINED, True, 1, 0.5, "s", JsBigIntValue(2**64)),
        "containers": await echo(
            js_value({"a": UNDEFINED, "b": [UNDEFINED]}), js_map({"k": 1}), js_set(1), date(0), uint8(7)
        ),
        "no_arguments": await echo(),
        "trailing_undefined": await echo(1, UNDEFINED),
    }
    out["argument_not_cloneable"] = {
        "class_instance": await echo(PlainInstance()),
        "symbol": {"not sent": "the local runtime has no JS Symbol value"},
        "weakmap": {"not sent": "the local runtime has no JS WeakMap value"},
    }
    return out


def plain_json(value: Any) -> Any:
    """A JS value made of objects, arrays and primitives as the JSON it stands for."""
    from jsemu.objects import JsArray, JsObject

    if isinstance(value, JsObject):
        return {k: plain_json(v) for k, v in value._props.items()}  # pyright: ignore[reportPrivateUsage]
    if isinstance(value, JsArray):
        return [plain_json(v) for v in value._items]  # pyright: ignore[reportPrivateUsage]
    if value is jsnull:
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class PlainInstance(JsProxy):
    """An instance of a JavaScript class of the caller's own (``new Plain()``): not cloneable."""

    __slots__ = ()
    js_class = "Plain"

    def _js_keys(self) -> list[str]:
        return ["x"]

    def _js_get(self, name: str) -> Any:
        return 1 if name == "x" else super()._js_get(name)


async def _outcome_of(make: Any) -> dict[str, Any]:
    try:
        value = await make()
    except JsException as error:
        return {"throws": describe(error.js_error)}
    return {"returns": describe(value)}


async def record_stub_rpc(stub: Any) -> dict[str, Any]:
    """The record's ``durable_object_stub_rpc`` section over a Durable Object stub."""
    return {
        "pending_call": _pending(call(stub, "rpcValue")),
        "value": await outcome_async(lambda: call(stub, "rpcValue")),
        "undefined_value": await outcome_async(lambda: call(stub, "rpcUndefined")),
        "thrown": await outcome_async(lambda: call(stub, "rpcThrows")),
        "missing_method": await outcome_async(lambda: call(stub, "noSuchMethod")),
    }
