"""The JSON Schema subset validator agrees with msgspec: what the performer's conversion refuses, enqueue refuses."""

from __future__ import annotations

import datetime
import uuid
from typing import Annotated, Any, Literal

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tsumugi_core.json_path import InvalidValueError, format_path
from tsumugi_core.json_schema import SchemaError, compile_schema


class Point(msgspec.Struct, forbid_unknown_fields=True):
    x: int
    y: Annotated[float, msgspec.Meta(ge=0, lt=10)] = 0.0


class Circle(msgspec.Struct, tag="circle"):
    r: Annotated[int, msgspec.Meta(gt=0)]


class Square(msgspec.Struct, tag="square", tag_field="shape"):
    side: int


class Rect(msgspec.Struct, tag="rect", tag_field="shape"):
    w: int


class Tree(msgspec.Struct):
    value: int
    children: list[Tree] = []


class Everything(msgspec.Struct, rename="camel"):
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=5, pattern="^[a-z]")]
    point: Point
    maybe: int | None = None
    either: int | str = 0
    shape: Square | Rect | None = None
    mode: Literal["a", "b"] = "a"
    tags: Annotated[list[str], msgspec.Meta(max_length=2)] = []
    pair: tuple[int, str] = (0, "")
    scores: dict[str, float] = {}
    when: datetime.date | None = None
    uid: uuid.UUID | None = None
    blob: bytes = b""
    step: Annotated[int, msgspec.Meta(multiple_of=5)] = 0
    tree: Tree | None = None
    free_form: Any = None


BASE: dict[str, Any] = {"name": "ab", "point": {"x": 1}}
CASES: list[Any] = [
    BASE,
    {},
    {**BASE, "name": ""},
    {**BASE, "name": "abcdef"},
    {**BASE, "name": "Ab"},
    {**BASE, "name": 1},
    {**BASE, "point": {"x": 1.5}},
    {**BASE, "point": {"x": True}},
    {**BASE, "point": {"x": 1, "z": 0}},
    {**BASE, "point": {"x": 1, "y": 10}},
    {**BASE, "point": {"x": 1, "y": -0.5}},
    {**BASE, "point": {"x": 1, "y": 3}},
    {**BASE, "maybe": None},
    {**BASE, "maybe": "1"},
    {**BASE, "either": "s"},
    {**BASE, "either": 1.5},
    {**BASE, "shape": {"shape": "square", "side": 1}},
    {**BASE, "shape": {"shape": "rect", "w": "1"}},
    {**BASE, "shape": {"shape": "oval"}},
    {**BASE, "shape": {"side": 1}},
    {**BASE, "shape": []},
    {**BASE, "mode": "c"},
    {**BASE, "mode": "b"},
    {**BASE, "tags": ["a", "b", "c"]},
    {**BASE, "tags": ["a", 1]},
    {**BASE, "pair": [1, "a"]},
    {**BASE, "pair": [1]},
    {**BASE, "pair": [1, "a", 2]},
    {**BASE, "pair": ["a", 1]},
    {**BASE, "scores": {"a": 1, "b": 2.5}},
    {**BASE, "scores": {"a": "x"}},
    {**BASE, "when": "2024-02-30"},
    {**BASE, "when": "2024-02-28"},
    {**BASE, "uid": "nope"},
    {**BASE, "uid": str(uuid.UUID(int=7))},
    {**BASE, "blob": "aGk="},
    {**BASE, "blob": "!"},
    {**BASE, "step": 10},
    {**BASE, "step": 7},
    {**BASE, "tree": {"value": 1, "children": [{"value": 2, "children": [{"value": "x"}]}]}},
    {**BASE, "tree": {"value": 1, "children": [{"value": 2}]}},
    {**BASE, "freeForm": [1, {"a": None}]},
    {**BASE, "unknown": 1},
    "text",
    None,
    [BASE],
]
SCHEMA = msgspec.json.schema(Everything)
# Compiled in each test, not at import: mutation testing (ADR-0088) forks after importing the tests, so a check
# compiled here would never see a mutant of the compiler.


def _converts(value: Any, kind: Any) -> bool:
    try:
        msgspec.convert(value, kind)
    except msgspec.ValidationError:
        return False
    return True


def _checks(check: Any, value: Any) -> bool:
    try:
        check(value)
    except InvalidValueError:
        return False
    return True


@pytest.mark.parametrize("value", CASES)
def test_the_check_accepts_exactly_what_msgspec_converts(value: Any) -> None:
    assert _checks(compile_schema(SCHEMA), value) == _converts(value, Everything)


@pytest.mark.parametrize(
    ("kind", "value", "path", "rule"),
    [
        (Everything, {**BASE, "point": {"x": "1"}}, "payload.point.x", "must be an integer, got a string"),
        (Everything, {"point": {"x": 1}}, "payload.name", "is required"),
        (
            Everything,
            {**BASE, "point": {"x": 1, "z": 0}},
            "payload.point.z",
            "is not a field of Point (unknown fields are refused)",
        ),
        (Everything, {**BASE, "maybe": "1"}, "payload.maybe", "must be an integer or null, got a string"),
        (
            Everything,
            {**BASE, "shape": {"shape": "oval"}},
            "payload.shape.shape",
            'must be one of "square", "rect", got "oval"',
        ),
        (
            Everything,
            {**BASE, "shape": {"side": 1}},
            "payload.shape.shape",
            'is required (one of "square", "rect")',
        ),
        (
            Everything,
            {**BASE, "shape": {"shape": "rect", "w": "1"}},
            "payload.shape.w",
            "must be an integer, got a string",
        ),
        (
            Everything,
            {**BASE, "tree": {"value": 1, "children": [{"value": "x"}]}},
            "payload.tree.children[0].value",
            "must be an integer, got a string",
        ),
        (Everything, {**BASE, "point": {"x": 1, "y": 10}}, "payload.point.y", "must be less than 10, got 10"),
        (Everything, {**BASE, "name": "Ab"}, "payload.name", 'must match the pattern "^[a-z]", got "Ab"'),
        (Everything, {**BASE, "tags": ["a", "b", "c"]}, "payload.tags", "must hold at most 2 items, got 3"),
        (Everything, {**BASE, "step": 7}, "payload.step", "must be a multiple of 5, got 7"),
        (
            Everything,
            {**BASE, "when": "2024-02-30"},
            "payload.when",
            'must be an ISO 8601 date, got "2024-02-30"',
        ),
        (Circle, {"type": "circle", "r": 0}, "payload.r", "must be greater than 0, got 0"),
        (dict[str, int], {"a b": "1"}, 'payload["a b"]', "must be an integer, got a string"),
    ],
)
def test_a_refusal_names_the_path_and_the_rule(kind: Any, value: Any, path: str, rule: str) -> None:
    with pytest.raises(InvalidValueError) as caught:
        compile_schema(msgspec.json.schema(kind))(value)
    assert (caught.value.path("payload"), caught.value.rule) == (path, rule)


def test_any_accepts_everything() -> None:
    check = compile_schema(msgspec.json.schema(Any))
    for value in (None, 1, "x", [1, [2]], {"a": {"b": None}}):
        check(value)


def test_an_unresolvable_reference_or_pattern_is_a_schema_error() -> None:
    with pytest.raises(SchemaError, match="unresolvable"):
        compile_schema({"$ref": "#/$defs/Nope"})
    with pytest.raises(SchemaError, match="does not compile"):
        compile_schema({"type": "string", "pattern": "("})


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["x", "y", "name", "point", "mode"]), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(
    st.fixed_dictionaries(
        {"name": st.text(max_size=6), "point": json_values},
        optional={"mode": json_values, "either": json_values, "shape": json_values, "tags": json_values},
    )
)
def test_random_values_agree_with_msgspec(value: dict[str, Any]) -> None:
    assert _checks(compile_schema(SCHEMA), value) == _converts(value, Everything)


def test_paths_quote_keys_that_are_not_names() -> None:
    assert format_path("payload", ["a", 0, "b c", 'q"']) == 'payload.a[0]["b c"]["q\\""]'
