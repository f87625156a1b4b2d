"""The payload check agrees with the performer (issue 25 item 12): for every type msgspec can publish, the
compiled JSON Schema accepts exactly the JSON values ``msgspec.convert`` turns into that type.

Hypothesis builds a type (scalars, dates, UUIDs, Decimal, bytes, enums, literals, constrained numbers and
strings, lists, tuples, dicts, optionals, nested Structs, dataclasses, TypedDicts, and unions tagged by str and
by int), publishes its schema as a performer does (``msgspec.json.schema``, sent as JSON text, so an int tag's
mapping key arrives as a string), and then draws JSON values, most of them built to nearly fit the type so both
sides of each rule are reached. The values are what the REST API lets through to the check: JSON with
integers within JavaScript's safe range (`tsumugi_core.portable`), no NaN or infinities.

The test counts what it generated; ``TYPES`` and ``VALUES_PER_TYPE`` give the totals (the report prints them).
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import itertools
import json
import uuid
from typing import Annotated, Any, Literal, TypedDict

import msgspec
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tsumugi_core.json_path import InvalidValueError
from tsumugi_core.json_schema import compile_schema

TYPES = 300
VALUES_PER_TYPE = 50
SAFE = 2**53 - 1
_names = itertools.count()
_seen = {"types": 0, "values": 0, "accepted": 0}

FIELD_NAMES = ("a", "b", "kind", "type", "x")
TEXTS = (
    "",
    "a",
    "ab",
    "abc",
    "kind",
    "x",
    "1",
    "1.5",
    "-2",
    "1e3",
    "nan",
    "Infinity",
    " 1",
    "2026-01-01T00:00:00Z",
    "2026-01-01T00:00:00",
    "2026-01-01",
    "12:30:00",
    "P1D",
    "PT1H",
    "c2FtcGxl",
    "not base64!",
    "00000000-0000-0000-0000-000000000000",
    "0123456789abcdef0123456789abcdef",
    "{00000000-0000-0000-0000-000000000000}",
    "red",
    "blue",
    "one",
    "two",
)


def _name(prefix: str) -> str:
    return f"{prefix}{next(_names)}"


# -- types -----------------------------------------------------------------------------------------------------

_SCALARS: list[Any] = [
    int,
    float,
    str,
    bool,
    type(None),
    bytes,
    decimal.Decimal,
    datetime.date,
    datetime.timedelta,
    uuid.UUID,
    Any,
    Annotated[datetime.datetime, msgspec.Meta(tz=True)],
    Annotated[datetime.time, msgspec.Meta(tz=True)],
]
"""Every scalar msgspec publishes a checkable schema for. Not a ``datetime`` or ``time`` that may be naive:
msgspec publishes those as ``{"type": "string"}`` with no format, so no schema reader can tell their text from
any other string (the performer refuses a malformed one at its first attempt)."""


@st.composite
def _constrained(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["int", "float", "str"]))
    low = draw(st.integers(-3, 3))
    if kind == "str":
        least = draw(st.integers(0, 2))
        meta = msgspec.Meta(
            min_length=least,
            max_length=draw(st.one_of(st.none(), st.integers(least, 4))),
            pattern=draw(st.one_of(st.none(), st.sampled_from(["^a", "b", "[0-9]"]))),
        )
        return Annotated[str, meta]
    number = int if kind == "int" else float
    bound = draw(st.sampled_from(["ge", "gt", "le", "lt", "multiple_of"]))
    value = draw(st.integers(1, 3)) if bound == "multiple_of" else low
    bounds: dict[str, Any] = {bound: value}
    return Annotated[number, msgspec.Meta(**bounds)]


@st.composite
def _literal(draw: st.DrawFn) -> Any:
    values = draw(
        st.lists(
            st.one_of(st.integers(-2, 2), st.sampled_from(["one", "two", "1"])),
            min_size=1,
            max_size=3,
            unique=True,
        )
    )
    return Literal[tuple(values)]  # type: ignore[valid-type]


@st.composite
def _enum(draw: st.DrawFn) -> Any:
    if draw(st.booleans()):
        return enum.Enum(_name("Color"), {"RED": "red", "BLUE": "blue"})
    return enum.IntEnum(_name("Level"), {"LOW": 1, "HIGH": 2})


def _leaves() -> st.SearchStrategy[Any]:
    return st.one_of(st.sampled_from(_SCALARS), _constrained(), _literal(), _enum())


@st.composite
def _fields(draw: st.DrawFn, inner: st.SearchStrategy[Any]) -> list[tuple[str, Any, bool]]:
    names = draw(st.lists(st.sampled_from(("a", "b", "x")), min_size=1, max_size=3, unique=True))
    return [(name, draw(inner), draw(st.booleans())) for name in names]  # (name, type, has a default)


def _ordered(fields: list[tuple[str, Any, bool]]) -> list[tuple[str, Any, bool]]:
    return sorted(fields, key=lambda f: f[2])  # fields without defaults first (dataclasses need that)


@st.composite
def _struct(draw: st.DrawFn, inner: st.SearchStrategy[Any]) -> Any:
    fields = _ordered(draw(_fields(inner)))
    spec = [(n, t, None) if d else (n, t) for n, t, d in fields]
    return msgspec.defstruct(_name("S"), spec, forbid_unknown_fields=draw(st.booleans()))


@st.composite
def _dataclass(draw: st.DrawFn, inner: st.SearchStrategy[Any]) -> Any:
    fields = _ordered(draw(_fields(inner)))
    spec = [(n, t, dataclasses.field(default=None)) if d else (n, t) for n, t, d in fields]
    return dataclasses.make_dataclass(_name("D"), spec)


@st.composite
def _typed_dict(draw: st.DrawFn, inner: st.SearchStrategy[Any]) -> Any:
    fields = draw(_fields(inner))
    return TypedDict(_name("T"), {n: t for n, t, _ in fields}, total=draw(st.booleans()))  # type: ignore[operator]


@st.composite
def _tagged_union(draw: st.DrawFn, inner: st.SearchStrategy[Any]) -> Any:
    by_int = draw(st.booleans())
    tags: list[Any] = [1, 2] if by_int else ["one", "two"]
    field = draw(st.sampled_from(["type", "kind"]))
    members = [
        msgspec.defstruct(
            _name("U"), [(n, t) for n, t, _ in draw(_fields(inner)) if n != field], tag=tag, tag_field=field
        )
        for tag in tags
    ]
    return members[0] | members[1]


def _compound(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        inner.map(lambda t: list[t]),  # type: ignore[valid-type]
        inner.map(lambda t: tuple[t, ...]),  # type: ignore[valid-type]
        st.tuples(inner, inner).map(lambda p: tuple[p[0], p[1]]),  # type: ignore[valid-type]
        inner.map(lambda t: dict[str, t]),  # type: ignore[valid-type]
        inner.map(lambda t: t | None),
        _struct(inner),
        _dataclass(inner),
        _typed_dict(inner),
        _tagged_union(inner),
    )


TYPE_STRATEGY = st.recursive(_leaves(), _compound, max_leaves=6)


# -- values ----------------------------------------------------------------------------------------------------

_JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-SAFE, SAFE),
    st.integers(-4, 4),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.5, 1.0, -1.5, 2.0, 3.0]),
    st.sampled_from(TEXTS),
    st.text(max_size=4),
)
RANDOM_JSON = st.recursive(
    _JSON_LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(FIELD_NAMES), inner, max_size=3)
    ),
    max_leaves=8,
)


def _near(kind: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """JSON values shaped like ``kind``, wrong in a place now and then."""
    if depth > 6:
        return RANDOM_JSON
    shaped = _shaped(kind, depth)
    return st.one_of(shaped, shaped, shaped, RANDOM_JSON) if shaped is not None else RANDOM_JSON


def _shaped(kind: Any, depth: int) -> st.SearchStrategy[Any] | None:
    info = msgspec.inspect.type_info(kind)
    return _shaped_info(info, depth)


def _shaped_info(info: msgspec.inspect.Type, depth: int) -> st.SearchStrategy[Any] | None:
    near = lambda t: _near_info(t, depth + 1)  # noqa: E731
    if isinstance(info, msgspec.inspect.ListType | msgspec.inspect.VarTupleType):
        return st.lists(near(info.item_type), max_size=3)
    if isinstance(info, msgspec.inspect.TupleType):
        return st.tuples(*(near(t) for t in info.item_types)).map(list)
    if isinstance(info, msgspec.inspect.DictType):
        return st.dictionaries(st.sampled_from(FIELD_NAMES), near(info.value_type), max_size=3)
    if isinstance(info, msgspec.inspect.UnionType):
        return st.one_of(*(near(t) for t in info.types))
    if isinstance(
        info, msgspec.inspect.StructType | msgspec.inspect.DataclassType | msgspec.inspect.TypedDictType
    ):
        fields = st.fixed_dictionaries(
            {},
            optional={f.encode_name: near(f.type) for f in info.fields},
        )
        tag = getattr(info, "tag", None)
        if tag is not None:
            tag_value = st.one_of(st.just(tag), st.sampled_from([1, 2, "one", "two", "1", True, 1.0]))
            return st.tuples(fields, tag_value).map(lambda p: {**p[0], info.tag_field: p[1]})  # type: ignore[union-attr]
        return fields
    if isinstance(info, msgspec.inspect.LiteralType):
        return st.sampled_from([*info.values, True, 1.0, "1"])
    if isinstance(info, msgspec.inspect.EnumType):
        return st.sampled_from([m.value for m in info.cls] + ["RED", 3, True])
    return None


def _near_info(info: msgspec.inspect.Type, depth: int) -> st.SearchStrategy[Any]:
    if depth > 6:
        return RANDOM_JSON
    shaped = _shaped_info(info, depth)
    return st.one_of(shaped, shaped, shaped, RANDOM_JSON) if shaped is not None else RANDOM_JSON


# -- the property ----------------------------------------------------------------------------------------------


def _published(kind: Any) -> Any:
    """The schema as the scheduler receives it: JSON text from the performer's ``describe``."""
    return json.loads(msgspec.json.encode(msgspec.json.schema(kind)))


def _accepts(check: Any, value: Any) -> bool:
    try:
        check(value)
    except InvalidValueError:
        return False
    return True


def _converts(value: Any, kind: Any) -> bool:
    try:
        msgspec.convert(value, kind)
    except msgspec.ValidationError:
        return False
    return True


@pytest.mark.timeout(900)
@settings(
    max_examples=TYPES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
)
@given(kind=TYPE_STRATEGY, data=st.data())
def test_the_checker_accepts_exactly_what_msgspec_converts(kind: Any, data: st.DataObject) -> None:
    try:
        schema = _published(kind)
    except TypeError:
        return  # a union msgspec itself refuses to build (two untagged Structs, ...): nothing is published
    check = compile_schema(schema)
    values = data.draw(st.lists(_near(kind), min_size=VALUES_PER_TYPE, max_size=VALUES_PER_TYPE))
    _seen["types"] += 1
    for value in values:
        _seen["values"] += 1
        expected = _converts(value, kind)
        _seen["accepted"] += expected
        assert _accepts(check, value) == expected, (
            f"{kind!r}: {value!r} msgspec={expected} {json.dumps(schema)}"
        )


@pytest.fixture(scope="module", autouse=True)
def _report() -> Any:
    yield
    print(
        f"\njson_schema vs msgspec.convert: {_seen['types']} types, {_seen['values']} values "
        f"({_seen['accepted']} accepted by msgspec)"
    )
