"""Forms msgspec publishes that the payload check used to refuse although the performer accepts them (issue 25
item 12): unions tagged by int, whose mapping keys arrive as strings, and Decimal fields sent as JSON numbers;
and the two formats msgspec writes only for values that must carry a UTC offset."""

from __future__ import annotations

import datetime
import decimal
import json
from typing import Annotated, Any

import msgspec
import pytest

from tsumugi_core.json_path import InvalidValueError
from tsumugi_core.json_schema import compile_schema


class Small(msgspec.Struct, tag=1):
    x: int


class Large(msgspec.Struct, tag=2):
    y: str


class Price(msgspec.Struct):
    amount: decimal.Decimal


def _published(kind: Any) -> Any:
    return json.loads(msgspec.json.encode(msgspec.json.schema(kind)))  # as describe sends it: JSON text


def _rule(kind: Any, value: Any) -> str | None:
    try:
        compile_schema(_published(kind))(value)
    except InvalidValueError as error:
        return f"{error.path('payload')} {error.rule}"
    return None


def test_a_union_tagged_by_int_takes_its_int_tags() -> None:
    assert _rule(Small | Large, {"type": 1, "x": 5}) is None
    assert _rule(Small | Large, {"type": 2, "y": "a"}) is None
    assert _rule(Small | Large, {"type": 1, "y": "a"}) == "payload.x is required"
    assert _rule(Small | Large, {"type": "1", "x": 5}) == 'payload.type must be one of 1, 2, got "1"'
    assert _rule(Small | Large, {"type": True, "x": 5}) == "payload.type must be one of 1, 2, got true"
    assert _rule(Small | Large, {"type": 1.0, "x": 5}) == "payload.type must be one of 1, 2, got 1.0"


@pytest.mark.parametrize("amount", [1, 1.5, "1.50", "-2e3"])
def test_a_decimal_takes_a_number_or_a_decimal_string(amount: Any) -> None:
    assert _rule(Price, {"amount": amount}) is None
    msgspec.convert({"amount": amount}, Price)  # the performer agrees


@pytest.mark.parametrize(
    ("amount", "rule"),
    [
        (True, "payload.amount must be a decimal number (a number or a string), got a boolean"),
        ("one", 'payload.amount must be a decimal number, got "one"'),
        ([1], "payload.amount must be a decimal number (a number or a string), got an array"),
    ],
)
def test_a_decimal_refuses_what_msgspec_refuses(amount: Any, rule: str) -> None:
    assert _rule(Price, {"amount": amount}) == rule
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"amount": amount}, Price)


def test_date_time_and_time_formats_need_an_offset_as_msgspec_requires() -> None:
    aware = Annotated[datetime.datetime, msgspec.Meta(tz=True)]
    clock = Annotated[datetime.time, msgspec.Meta(tz=True)]
    assert _rule(aware, "2026-01-01T00:00:00Z") is None
    assert _rule(aware, "2026-01-01T00:00:00") == (
        'payload must be an RFC 3339 date-time, got "2026-01-01T00:00:00"'
    )
    assert _rule(clock, "12:00:00+09:00") is None
    assert _rule(clock, "12:00:00") == 'payload must be an ISO 8601 time with an offset, got "12:00:00"'
