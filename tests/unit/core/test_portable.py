"""Values that cross a queue, an RPC and JavaScript intact (tsumugi_core.portable, ADR-0077)."""

from __future__ import annotations

import datetime
from typing import Any

import msgspec
import pytest

from tsumugi_core.json_path import InvalidValueError
from tsumugi_core.portable import MAX_NESTING, MAX_SAFE_INTEGER, check_portable


class Mail(msgspec.Struct):
    to: str
    tries: int


def _nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        "x",
        MAX_SAFE_INTEGER,
        -MAX_SAFE_INTEGER,
        1e308,
        -0.0,
        {"a": [1, 2.5, None]},
        _nested(MAX_NESTING),
        Mail(to="a", tries=3),
        datetime.date(2024, 1, 1),
        (1, 2),
    ],
)
def test_portable_values_pass(value: Any) -> None:
    check_portable(value)


@pytest.mark.parametrize(
    ("value", "path", "rule"),
    [
        (
            {"n": MAX_SAFE_INTEGER + 1},
            "payload.n",
            f"must be an integer between -{MAX_SAFE_INTEGER} and {MAX_SAFE_INTEGER} "
            f"(JavaScript's safe integers), got {MAX_SAFE_INTEGER + 1}",
        ),
        ([1, [2, float("nan")]], "payload[1][1]", "must be a finite number, got nan"),
        ({"a": {"b": float("-inf")}}, "payload.a.b", "must be a finite number, got -inf"),
        ({1: "x"}, "payload", "must have string keys, got int 1"),
        (
            _nested(MAX_NESTING + 1),
            "payload" + "[0]" * MAX_NESTING,
            f"must be nested at most {MAX_NESTING} levels deep (arrays and objects)",
        ),
        (
            Mail(to="a", tries=2**60),
            "payload.tries",
            f"must be an integer between -{MAX_SAFE_INTEGER} and {MAX_SAFE_INTEGER} "
            f"(JavaScript's safe integers), got {2**60}",
        ),
    ],
)
def test_values_that_cannot_cross_are_refused_with_their_path(value: Any, path: str, rule: str) -> None:
    with pytest.raises(InvalidValueError) as caught:
        check_portable(value)
    assert (caught.value.path("payload"), caught.value.rule) == (path, rule)


def test_a_value_msgspec_cannot_encode_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        check_portable({"f": object()})


# The nesting bound counts objects as arrays do, and counts a Struct as the object it encodes to.


RULE = "must be nested at most 64 levels deep (arrays and objects)"


class Box(msgspec.Struct):
    v: Any


def objects(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = {"a": value}
    return value


def arrays(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def refusal(value: Any) -> tuple[str, str]:
    with pytest.raises(InvalidValueError) as caught:
        check_portable(value)
    return caught.value.path("payload"), caught.value.rule


def test_the_bound_is_64_levels() -> None:
    assert MAX_NESTING == 64


def test_objects_nested_64_levels_pass_and_65_are_refused_at_the_deepest() -> None:
    check_portable(objects(64))
    assert refusal(objects(65)) == ("payload" + ".a" * 64, RULE)


def test_objects_and_arrays_count_alike_when_mixed() -> None:
    check_portable({"a": arrays(63)})
    assert refusal({"a": arrays(64)}) == ("payload.a" + "[0]" * 63, RULE)


def test_a_struct_counts_as_one_object_level() -> None:
    check_portable(Box(v=arrays(63)))
    assert refusal(Box(v=arrays(64))) == ("payload.v" + "[0]" * 63, RULE)
