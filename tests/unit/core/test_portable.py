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
