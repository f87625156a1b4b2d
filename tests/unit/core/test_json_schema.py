"""The JSON Schema subset validator agrees with msgspec: what the performer's conversion refuses, enqueue refuses."""

from __future__ import annotations

import datetime
import enum
import uuid
from typing import Annotated, Any, Literal

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tsumugi_core.json_path import InvalidValueError, format_path
from tsumugi_core.json_schema import SchemaError, compile_schema, json_type_name


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


# The checker's rules and words, one keyword at a time. The tests above compare the checker with msgspec on a
# rich type; these pin what that comparison does not see: the words of each refusal (what a user reads in a
# 400), and keywords msgspec writes for other types.


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Spot(msgspec.Struct):
    x: int


class Untitled(msgspec.Struct):
    y: int


def _refusal(schema: Any, value: Any) -> tuple[str, str]:
    with pytest.raises(InvalidValueError) as caught:
        compile_schema(schema)(value)
    return caught.value.path("payload"), caught.value.rule


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (True, "a boolean"),
        (False, "a boolean"),
        (0, "an integer"),
        (1.5, "a number"),
        ("", "a string"),
        (None, "null"),
        ({}, "an object"),
        ([], "an array"),
        (b"x", "bytes"),
        ((1,), "tuple"),
    ],
)
def test_a_values_json_type_in_words(value: Any, name: str) -> None:
    assert json_type_name(value) == name


@pytest.mark.parametrize(
    ("kind", "value", "rule"),
    [
        (Spot | None, "s", "must be null or an object (Spot), got a string"),
        (Untitled | int, "s", "must be an integer or an object (Untitled), got a string"),
        # A value of a branch's type that breaks its rule gets that rule, not the list of branches.
        (Literal["a", "b"] | None, 3, 'must be one of "a", "b", got 3'),
        (Colour | None, 3, 'must be one of "blue", "red", got 3'),
    ],
)
def test_a_union_names_every_branch_msgspec_wrote(kind: Any, value: Any, rule: str) -> None:
    assert _refusal(msgspec.json.schema(kind), value) == ("payload", rule)


DEFS = {
    "U": {"type": "object", "properties": {"y": {"type": "integer"}}},
    "T": {"title": "Thing", "type": "object"},
    "E": {"title": "Mode", "type": "string", "enum": ["on", "off"]},
}


@pytest.mark.parametrize(
    ("branches", "rule"),
    [
        ([{"type": "string", "const": "é"}, {"type": "boolean"}], 'must be "é" or a boolean, got an integer'),
        (
            [{"type": ["string", "null"]}, {"type": "array", "enum": [[1.5]]}],
            "must be a string or null or one of [1.5], got an integer",
        ),
        (
            [{"$ref": "#/$defs/U"}, {"anyOf": [{"type": "string", "const": "x"}, {"type": "null"}]}],
            'must be an object or "x" or null, got an integer',
        ),
        (
            [{"$ref": "#/$defs/T"}, {"$ref": "#/$defs/E"}],
            'must be an object (Thing) or one of "on", "off", got an integer',
        ),
        (
            [{"allOf": [{"type": "string"}, {"minLength": 1}]}, {"type": "null"}],
            "must be a value of the declared type or null, got an integer",
        ),
        (
            [
                {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
                {"type": "null"},
            ],
            "must be a string or an array or null, got an integer",
        ),
    ],
)
def test_a_hand_written_any_of_describes_its_branches(branches: list[Any], rule: str) -> None:
    assert _refusal({"anyOf": branches, "$defs": DEFS}, 1) == ("payload", rule)


def test_an_unknown_type_is_a_schema_error() -> None:
    with pytest.raises(SchemaError, match=r"^unknown type 'widget'$"):
        compile_schema({"anyOf": [{"type": "string"}, {"type": ["null", "widget"]}]})


def test_a_one_of_is_checked_as_any_of() -> None:
    schema = {
        "oneOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}},
            {"type": "integer", "const": 1},
        ]
    }
    check = compile_schema(schema)
    check(1)
    check({"a": 1})
    assert _refusal(schema, 2) == ("payload", "must be 1, got 2")
    assert _refusal(schema, "s") == ("payload", "must be an object or 1, got a string")
    assert _refusal(schema, {"a": "x"}) == ("payload.a", "must be an integer, got a string")


def test_an_enum_outside_ascii_is_quoted_as_typed() -> None:
    assert _refusal({"enum": ["é", "ü"]}, "e") == ("payload", 'must be one of "é", "ü", got "e"')
    assert _refusal({"const": "é"}, "e") == ("payload", 'must be "é", got "e"')


def _passes(schema: Any, *values: Any) -> None:
    check = compile_schema(schema)
    for value in values:
        check(value)


NUMBER_RULES: list[tuple[dict[str, Any], list[Any], Any, str]] = [
    ({"minimum": 3}, [3, 3.0, 4, "x", True], 2, "must be at least 3, got 2"),
    ({"minimum": 3}, [3], 2.5, "must be at least 3, got 2.5"),
    ({"maximum": 5}, [5, 4.5, "zzz", False], 6, "must be at most 5, got 6"),
    ({"maximum": 5}, [5], 5.5, "must be at most 5, got 5.5"),
    ({"exclusiveMinimum": 0}, [1, 0.5, None], 0, "must be greater than 0, got 0"),
    ({"exclusiveMinimum": 0}, [1], -0.5, "must be greater than 0, got -0.5"),
    ({"exclusiveMaximum": 10}, [9, 9.5, [10]], 10, "must be less than 10, got 10"),
    ({"exclusiveMaximum": 10}, [9], 10.5, "must be less than 10, got 10.5"),
    ({"multipleOf": 5}, [0, 10, -5, "7", True], 7, "must be a multiple of 5, got 7"),
    ({"multipleOf": 0.5}, [1.5, 2], 1.25, "must be a multiple of 0.5, got 1.25"),
]


STRING_RULES: list[tuple[dict[str, Any], list[Any], Any, str]] = [
    (
        {"minLength": 2, "maxLength": 3},
        ["ab", "abc", 1, None],
        "a",
        "must be at least 2 characters long, got 1",
    ),
    ({"minLength": 2, "maxLength": 3}, ["ab"], "abcd", "must be at most 3 characters long, got 4"),
    ({"minLength": 2}, ["ab", "a" * 100], "", "must be at least 2 characters long, got 0"),
    ({"maxLength": 1}, ["", "a", 12345], "ab", "must be at most 1 characters long, got 2"),
    ({"pattern": "b"}, ["abc", "b", 5], "xyz", 'must match the pattern "b", got "xyz"'),
    ({"pattern": "^é"}, ["éa"], "a" * 81, 'must match the pattern "^é", got "' + "a" * 76 + "..."),
    ({"pattern": "^é"}, ["é"], "a" * 78, 'must match the pattern "^é", got "' + "a" * 78 + '"'),
]


FORMAT_RULES: list[tuple[dict[str, Any], list[Any], Any, str]] = [
    (
        {"format": "date-time"},
        ["2024-02-28T10:00:00Z", 5],
        "2024-02-30T10:00:00Z",
        'must be an RFC 3339 date-time, got "2024-02-30T10:00:00Z"',
    ),
    ({"format": "date"}, ["2024-02-28", None], "2024-13-01", 'must be an ISO 8601 date, got "2024-13-01"'),
    (
        {"format": "time"},
        ["10:00:00+09:00", 1.5],
        "10:00:00",
        'must be an ISO 8601 time with an offset, got "10:00:00"',
    ),
    ({"format": "duration"}, ["P1DT2H", []], "two days", 'must be an ISO 8601 duration, got "two days"'),
    ({"format": "decimal"}, ["1.25", {}], "one", 'must be a decimal number, got "one"'),
    (
        {"format": "uuid"},
        ["0000000000000000000000000000000A", "00000000-0000-0000-0000-00000000000a", 7],
        "nope",
        'must be a UUID, got "nope"',
    ),
    (
        {"format": "uuid"},
        [],
        "00000000-0000-0000-0000-00000000000g",
        'must be a UUID, got "00000000-0000-0000-0000-00000000000g"',
    ),
    ({"contentEncoding": "base64"}, ["aGk=", 3], "!", 'must be base64 text, got "!"'),
    ({"format": "email", "type": "string"}, ["not an address"], 1, "must be a string, got an integer"),
]


ARRAY_RULES: list[tuple[dict[str, Any], list[Any], Any, str]] = [
    ({"minItems": 1}, [[0], "x", {}], [], "must hold at least 1 items, got 0"),
    ({"maxItems": 2}, [[], [1, 2], "abc"], [1, 2, 3], "must hold at most 2 items, got 3"),
    (
        {"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False},
        [[1, "a"], [1], []],
        [1, "a", 2],
        "must hold at most 2 items, got 3",
    ),
    (
        {"prefixItems": [{"type": "integer"}], "items": {"type": "string"}},
        [[1, "a", "b"]],
        [1, "a", 2],
        "must be a string, got an integer",
    ),
]


OBJECT_RULES: list[tuple[dict[str, Any], list[Any], Any, str]] = [
    ({"minProperties": 2}, [{"a": 1, "b": 2}, [1], "ab"], {"a": 1}, "must hold at least 2 fields"),
    ({"maxProperties": 1}, [{}, {"a": 1}, [1, 2]], {"a": 1, "b": 2}, "must hold at most 1 fields"),
    (
        {"properties": {"a": {"type": "integer"}}, "additionalProperties": False},
        [{"a": 1}, {}],
        {"b": 1},
        "is not an allowed field (unknown fields are refused)",
    ),
    (
        {"additionalProperties": {"type": "integer"}},
        [{"a": 1, "b": 2}],
        {"a": 1, "b": "x"},
        "must be an integer, got a string",
    ),
    ({"required": ["a"]}, [{"a": None}, "not an object"], {"b": 1}, "is required"),
    ({"properties": {"a": {"minimum": 1}}}, [{"a": 1}, {"b": 0}], {"a": 0}, "must be at least 1, got 0"),
]


@pytest.mark.parametrize(
    ("schema", "fine", "bad", "rule"), NUMBER_RULES + STRING_RULES + FORMAT_RULES + ARRAY_RULES + OBJECT_RULES
)
def test_each_keyword_takes_its_values_and_refuses_one_beyond_with_its_rule(
    schema: dict[str, Any], fine: list[Any], bad: Any, rule: str
) -> None:
    _passes(schema, *fine)
    assert _refusal(schema, bad)[1] == rule


def test_a_refusal_inside_a_container_names_its_path() -> None:
    assert _refusal(ARRAY_RULES[3][0], [1, "a", 2]) == ("payload[2]", "must be a string, got an integer")
    assert _refusal(ARRAY_RULES[2][0], [1, 2]) == ("payload[1]", "must be a string, got an integer")
    assert _refusal(OBJECT_RULES[2][0], {"a": 1, "b": 1}) == ("payload.b", OBJECT_RULES[2][3])
    assert _refusal(OBJECT_RULES[3][0], {"a": 1, "b": "x"}) == (
        "payload.b",
        "must be an integer, got a string",
    )
    assert _refusal(OBJECT_RULES[4][0], {"b": 1}) == ("payload.a", "is required")
    assert _refusal(OBJECT_RULES[5][0], {"a": 0}) == ("payload.a", "must be at least 1, got 0")


def test_an_enum_takes_only_its_values_of_the_same_json_type() -> None:
    _passes({"enum": [1, "a", None]}, 1, "a", None)
    assert _refusal({"enum": [1]}, True) == ("payload", "must be 1, got true")
    assert _refusal({"enum": [1]}, 1.0) == ("payload", "must be 1, got 1.0")
    assert _refusal({"enum": [1, 2]}, 3) == ("payload", "must be one of 1, 2, got 3")
    assert _refusal({"const": True}, 1) == ("payload", "must be true, got 1")
    assert _refusal({"enum": [[1]]}, [b"x"]) == ("payload", "must be [1], got [b'x']")


def test_a_tagged_union_refuses_a_non_object_and_a_tag_that_is_not_a_string() -> None:
    schema: dict[str, Any] = {
        "anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}],
        "discriminator": {"propertyName": "kind", "mapping": {"a": "#/$defs/A", "b": "#/$defs/B"}},
        "$defs": {
            "A": {"type": "object", "properties": {"kind": {"enum": ["a"]}, "n": {"type": "integer"}}},
            "B": {"type": "object", "properties": {"kind": {"enum": ["b"]}}},
        },
    }
    _passes(schema, {"kind": "a", "n": 1}, {"kind": "b", "n": "any"})
    assert _refusal(schema, [1]) == ("payload", "must be an object, got an array")
    assert _refusal(schema, {"kind": 1}) == ("payload.kind", 'must be one of "a", "b", got 1')
    assert _refusal(schema, {"n": 1}) == ("payload.kind", 'is required (one of "a", "b")')
    assert _refusal(schema, {"kind": "a", "n": "x"}) == ("payload.n", "must be an integer, got a string")
    plain = {**schema, "discriminator": {"propertyName": "kind"}}  # no mapping: an ordinary anyOf
    _passes(plain, {"kind": "b"})
    assert _refusal(plain, {"kind": "c"}) == ("payload.kind", 'must be "a", got "c"')


def test_booleans_and_empty_schemas_and_type_lists() -> None:
    _passes(True, 1, None, {"a": [1]})
    _passes({}, 1, "x")
    assert _refusal(False, 1) == ("payload", "is not allowed")
    assert _refusal({"properties": {"a": False}}, {"a": 1}) == ("payload.a", "is not allowed")
    _passes({"type": ["string", "null"]}, "x", None)
    assert _refusal({"type": ["string", "string", "null"]}, 1) == (
        "payload",
        "must be a string or null, got an integer",
    )
    assert _refusal({"type": "integer"}, True) == ("payload", "must be an integer, got a boolean")
    _passes({"type": "number"}, 1, 1.5)
    with pytest.raises(SchemaError, match=r"^a schema must be an object or a boolean, got 5$"):
        compile_schema({"properties": {"a": 5}})
    with pytest.raises(SchemaError, match=r"^a schema must be an object or a boolean, got \[\]$"):
        compile_schema([])
    with pytest.raises(SchemaError, match=r"^unresolvable \$ref '#/defs/A'$"):
        compile_schema({"$ref": "#/defs/A", "$defs": {"A": {}}})
    with pytest.raises(SchemaError, match=r"^pattern '\(' does not compile: "):
        compile_schema({"pattern": "("})


def test_all_of_applies_every_part() -> None:
    schema = {"allOf": [{"type": "integer"}, {"minimum": 2}, {"maximum": 4}]}
    _passes(schema, 2, 4)
    assert _refusal(schema, "2") == ("payload", "must be an integer, got a string")
    assert _refusal(schema, 1) == ("payload", "must be at least 2, got 1")
    assert _refusal(schema, 5) == ("payload", "must be at most 4, got 5")


def test_a_definition_used_twice_checks_both_places() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/P"}, "b": {"$ref": "#/$defs/P"}},
        "$defs": {"P": {"type": "integer", "minimum": 0}},
    }
    _passes(schema, {"a": 0, "b": 1})
    assert _refusal(schema, {"a": 0, "b": -1}) == ("payload.b", "must be at least 0, got -1")
    assert _refusal(schema, {"a": "x", "b": 1}) == ("payload.a", "must be an integer, got a string")


def test_a_union_reports_the_branch_the_value_got_furthest_into() -> None:
    schema = {
        "anyOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}},
            {
                "type": "object",
                "properties": {"a": {"type": "object", "properties": {"b": {"type": "integer"}}}},
            },
            {"type": "string", "minLength": 3},
        ]
    }
    _passes(schema, {"a": 1}, {"a": {"b": 1}}, "abc")
    assert _refusal(schema, {"a": {"b": "x"}}) == ("payload.a.b", "must be an integer, got a string")
    assert _refusal(schema, "ab") == ("payload", "must be at least 3 characters long, got 2")
    assert _refusal(schema, 1) == ("payload", "must be an object or an object or a string, got an integer")


def test_a_union_of_bare_types_names_each_type_once() -> None:
    schema = {"anyOf": [{"type": ["integer", "null"]}, {"type": "null"}, {"type": "integer"}]}
    _passes(schema, 1, None)
    assert _refusal(schema, "1") == ("payload", "must be an integer or null, got a string")


def test_a_tag_that_is_not_a_string_is_refused_even_when_unhashable() -> None:
    schema = {
        "anyOf": [{"$ref": "#/$defs/A"}],
        "discriminator": {"propertyName": "kind", "mapping": {"a": "#/$defs/A"}},
        "$defs": {"A": {"type": "object"}},
    }
    assert _refusal(schema, {"kind": ["a"]}) == ("payload.kind", 'must be one of "a", got ["a"]')
    assert _refusal(schema, {"kind": {"a": 1}}) == ("payload.kind", 'must be one of "a", got {"a": 1}')


def test_every_object_keyword_at_once_still_applies() -> None:
    schema = {
        "properties": {"a": {"type": "integer"}},
        "required": ["a"],
        "additionalProperties": False,
        "minProperties": 1,
        "maxProperties": 1,
    }
    _passes(schema, {"a": 1})
    assert _refusal(schema, {}) == ("payload.a", "is required")
    assert _refusal(schema, {"a": "x"}) == ("payload.a", "must be an integer, got a string")


def test_prefix_items_alone_check_the_leading_items() -> None:
    schema = {"prefixItems": [{"type": "integer"}]}
    _passes(schema, [], [1], [1, "anything"])
    assert _refusal(schema, ["x"]) == ("payload[0]", "must be an integer, got a string")


def test_a_shown_value_is_cut_past_80_characters() -> None:
    # A 78-letter string is 80 characters quoted: shown whole. 79 letters quote to 81: cut to 77 and "...".
    assert _refusal({"enum": [1]}, "a" * 78)[1] == 'must be 1, got "' + "a" * 78 + '"'
    assert _refusal({"enum": [1]}, "a" * 79)[1] == 'must be 1, got "' + "a" * 76 + "..."
