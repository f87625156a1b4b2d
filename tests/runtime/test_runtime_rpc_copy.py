"""`rpc_copy`: the fast copy for plain values gives exactly what `workers.rpc.transfer` gives."""

from __future__ import annotations

import enum
from typing import Any

import pytest
from workers.rpc import from_js, transfer

from tsumugi_dev.jsdict import JsDict
from tsumugi_dev.rpc_calls import rpc_copy, rpc_receive


class Colour(enum.StrEnum):
    RED = "red"


PLAIN_VALUES: list[Any] = [
    None,
    True,
    7,
    2.5,
    3.0,
    float(2**60),
    "text",
    [1, 2.0, [None, {"a": 1.0}]],
    {"jobId": "Hello#0:abc", "attempt": 1.0, "payload": {"name": "n", "nested": [{"x": 1}]}, "ok": False},
    {1: "int key", "s": JsDict(inner=4.0)},
]


@pytest.mark.parametrize("value", PLAIN_VALUES)
def test_plain_values_copy_exactly_as_transfer_does(value: Any) -> None:
    copied = rpc_copy(value, lambda: "value")
    expected = transfer(value, "value")
    assert copied == expected
    assert type(copied) is type(expected)
    if isinstance(value, dict):
        assert all(type(k) is str for k in copied)
        assert isinstance(copied, JsDict)


def test_integral_floats_arrive_as_int_and_nested_dicts_as_jsdict() -> None:
    copied = rpc_copy({"a": [1.0, {"b": 2.0}]}, lambda: "value")
    assert type(copied["a"][0]) is int
    assert isinstance(copied["a"][1], JsDict)
    assert copied.a[1].b == 2


def test_the_copy_shares_nothing_with_the_original() -> None:
    original = {"payload": {"items": [1, 2]}}
    copied = rpc_copy(original, lambda: "value")
    copied["payload"]["items"].append(3)
    assert original == {"payload": {"items": [1, 2]}}


def test_a_tuple_deep_inside_fails_with_transfers_message_and_path() -> None:
    value = {"payload": {"pair": (1, 2)}}
    with pytest.raises(TypeError) as slow:
        transfer(value, "report() argument 3")
    with pytest.raises(TypeError) as fast:
        rpc_copy(value, lambda: "report() argument 3")
    assert str(fast.value) == str(slow.value)
    assert "report() argument 3['payload']['pair']" in str(fast.value)


def test_enum_members_and_bytes_take_the_full_conversion() -> None:
    value = {"state": Colour.RED, "blob": b"\x00\x01"}
    copied = rpc_copy(value, lambda: "value")
    assert copied == transfer(value, "value")
    # JS has no str subclasses: the member arrives as the plain string, as on Cloudflare.
    assert type(copied["state"]) is str
    assert copied["state"] == "red"
    assert copied["blob"] == b"\x00\x01"


class Level(enum.IntEnum):
    HIGH = 3


class Ratio(float):
    pass


@pytest.mark.parametrize(
    ("value", "plain"), [(Colour.RED, "red"), (Level.HIGH, 3), (Ratio(0.5), 0.5), (True, True)]
)
def test_subclasses_of_str_int_float_arrive_as_the_base_type(value: Any, plain: Any) -> None:
    copied = rpc_copy([value], lambda: "value")[0]
    assert copied == plain
    assert type(copied) is type(plain)


async def test_a_function_inside_crosses_as_a_stub() -> None:
    seen: list[Any] = []

    def heartbeat(progress: Any) -> str:
        seen.append(progress)
        return "accepted"

    copied = rpc_copy({"cb": heartbeat}, lambda: "value")
    assert copied["cb"] is not heartbeat
    assert await copied["cb"](0.5) == "accepted"  # only primitives cross a stub (ADR-0042)
    assert seen == [0.5]


@pytest.mark.parametrize("value", [*PLAIN_VALUES, {"blob": b"\x00"}, [b"x", 1.0]])
def test_receiving_gives_what_from_js_gives(value: Any) -> None:
    received = rpc_receive(value)
    expected = from_js(value)
    assert received == expected
    assert type(received) is type(expected)
