"""A JSON Schema validator for the subset msgspec writes, compiled once into checks of plain JSON values.

Performers publish their payload type as JSON Schema (``msgspec.json.schema``); the scheduler checks each
enqueued payload against it before storing (ADR-0075). The scheduler never imports a performer's code (they
are separate Workers), so it cannot convert into the type itself: this module reads the schema instead.

Supported, as msgspec emits them: ``$ref`` into ``$defs`` (recursion included), ``type`` (one or a list),
``enum``, ``const``, ``properties`` / ``required`` / ``additionalProperties``, ``minProperties`` /
``maxProperties``, ``items`` / ``prefixItems`` / ``minItems`` / ``maxItems``, ``anyOf`` / ``oneOf`` (both
as "any of") with a ``discriminator`` (tagged unions), ``allOf``, ``minimum`` / ``maximum`` / the exclusive
pair / ``multipleOf``, ``minLength`` / ``maxLength`` / ``pattern``, ``format`` (date-time, date, time, uuid,
duration, decimal: a number or a string, as msgspec converts both) and ``contentEncoding: base64``. A tagged
union's tags are read from each branch's tag field, so int tags stay ints. Other keywords (``title``, ``default``, ...) are ignored.
An ``integer`` is an int, never a float, as msgspec's strict conversion has it at the performer.

Errors are `InvalidValueError` at the first offending value, with its path and a rule in words.

Example:
    >>> schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    >>> check = compile_schema(schema)
    >>> check({"name": "Ada"})
    >>> try:
    ...     check({"name": 5})
    ... except InvalidValueError as error:
    ...     print(error.path("payload"), error.rule)
    payload.name must be a string, got an integer
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Final, cast

import msgspec

from tsumugi_core.exceptions import TsumugiError
from tsumugi_core.json_path import InvalidValueError

__all__ = ["Check", "SchemaError", "compile_schema", "json_type_name"]

Check = Callable[[Any], None]
"""A compiled schema: returns for a value that fits, raises `InvalidValueError` otherwise."""

_TYPE_NAMES: Final = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
    "object": "an object",
    "array": "an array",
}
_FORMATS: Final[dict[str, tuple[Any, str]]] = {
    # msgspec writes these two formats only for a type that requires a UTC offset (``Meta(tz=True)``); a
    # datetime or time that may be naive is published as a plain string, so only such strings are checked here.
    "date-time": (Annotated[datetime.datetime, msgspec.Meta(tz=True)], "an RFC 3339 date-time"),
    "date": (datetime.date, "an ISO 8601 date"),
    "time": (Annotated[datetime.time, msgspec.Meta(tz=True)], "an ISO 8601 time with an offset"),
    "duration": (datetime.timedelta, "an ISO 8601 duration"),
    "decimal": (decimal.Decimal, "a decimal number"),
}


class SchemaError(TsumugiError, ValueError):
    """The schema itself cannot be compiled (an unresolvable ``$ref``, a bad pattern)."""


class _WrongTypeError(InvalidValueError):
    """The value is not of the schema's type: an ``anyOf`` then names every type it would take."""


def json_type_name(value: Any) -> str:
    """``value``'s JSON type in words (``a string``, ``an integer``, ``null``...)."""
    kind: type = type(cast(object, value))
    if kind is bool:
        return "a boolean"
    if kind is int:
        return "an integer"
    if kind is float:
        return "a number"
    if kind is str:
        return "a string"
    if value is None:
        return "null"
    if kind is dict:
        return "an object"
    if kind is list:
        return "an array"
    return type(value).__name__


def _accept(value: Any) -> None:
    return None


_PY_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
    "object": (dict,),
    "array": (list,),
}
"""The Python types of plain JSON values each JSON Schema type takes (``bool`` is never an integer)."""


class _TypeCheck:
    """``{"type": ...}`` alone (or an ``anyOf`` of such): one set lookup, which containers inline."""

    __slots__ = ("expected", "names", "types")

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = tuple(dict.fromkeys(names))
        self.types = frozenset(t for n in self.names for t in _PY_TYPES[n])
        self.expected = " or ".join(_TYPE_NAMES[n] for n in self.names)

    def __call__(self, value: Any) -> None:
        if type(value) not in self.types:
            raise _WrongTypeError(f"must be {self.expected}, got {json_type_name(value)}")


def _literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b  # True is not 1, 1 is not 1.0 (msgspec's Literal rules)


class _Compiler:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.defs: Mapping[str, Any] = root.get("$defs") or {}
        self.refs: dict[str, Check] = {}

    def ref(self, ref: str) -> Check:
        if ref in self.refs:
            return self.refs[ref]
        if not ref.startswith("#/$defs/") or ref[8:] not in self.defs:
            raise SchemaError(f"unresolvable $ref {ref!r}")
        box: list[Check] = []

        def late(value: Any) -> None:  # a recursive type meets its own reference before it is compiled
            box[0](value)

        self.refs[ref] = late
        box.append(self.compile(self.defs[ref[8:]]))
        self.refs[ref] = box[0]
        return box[0]

    def describe(self, schema: Mapping[str, Any]) -> str:
        if "$ref" in schema:
            target = self.defs.get(str(schema["$ref"]).removeprefix("#/$defs/"), {})
            if "enum" in target:
                return self.describe(target)
            return f"an object ({target['title']})" if "title" in target else "an object"
        if "enum" in schema:
            return "one of " + ", ".join(_literal(v) for v in schema["enum"])
        if "const" in schema:
            return _literal(schema["const"])
        types = schema.get("type")
        if isinstance(types, str):
            return _TYPE_NAMES.get(types, types)
        if isinstance(types, list):
            return " or ".join(_TYPE_NAMES.get(str(t), str(t)) for t in cast(list[Any], types))
        branches = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(branches, list):
            return " or ".join(self.describe(b) for b in cast(list[Mapping[str, Any]], branches))
        return "a value of the declared type"

    def compile(self, schema: Any) -> Check:
        if schema is True or schema == {}:
            return _accept
        if schema is False:
            return _refuse_all
        if not isinstance(schema, Mapping):
            raise SchemaError(f"a schema must be an object or a boolean, got {schema!r}")
        s = cast(Mapping[str, Any], schema)
        checks: list[Check] = []
        if "$ref" in s:
            checks.append(self.ref(str(s["$ref"])))
        if "anyOf" in s or "oneOf" in s:
            checks.append(self._any_of(s))
        checks.extend(self.compile(part) for part in s.get("allOf", ()))
        if s.get("format") == "decimal" and s.get("type") == "string":
            checks.append(_decimal)  # msgspec writes "string" but converts JSON numbers to Decimal as well
        elif "type" in s:
            checks.append(self._type(s["type"]))
        if "enum" in s or "const" in s:
            checks.append(self._enum(list(s["enum"]) if "enum" in s else [s["const"]]))
        checks.extend(_numbers(s) + _strings(s) + self._objects(s) + self._arrays(s))
        checks = [c for c in checks if c is not _accept]
        if not checks:
            return _accept
        if len(checks) == 1:
            return checks[0]
        return _all(checks)

    def _type(self, types: Any) -> Check:
        names: tuple[str, ...] = (types,) if isinstance(types, str) else tuple(cast(list[str], types))
        unknown = [n for n in names if n not in _PY_TYPES]
        if unknown:
            raise SchemaError(f"unknown type {unknown[0]!r}")
        return _TypeCheck(names)

    def _enum(self, values: list[Any]) -> Check:
        listed = ", ".join(_literal(v) for v in values)
        rule = f"must be {listed}" if len(values) == 1 else f"must be one of {listed}"

        def check(value: Any) -> None:
            if not any(_same(value, v) for v in values):
                raise InvalidValueError(f"{rule}, got {_shown(value)}")

        return check

    def _any_of(self, s: Mapping[str, Any]) -> Check:
        branches: list[Mapping[str, Any]] = list(s.get("anyOf") or s.get("oneOf") or [])
        discriminator = s.get("discriminator")
        if isinstance(discriminator, Mapping):
            described = cast(Mapping[str, Any], discriminator)
            if isinstance(described.get("mapping"), Mapping):
                return self._tagged(described)
        checks = [self.compile(b) for b in branches]
        if checks and all(type(c) is _TypeCheck for c in checks):  # int | None, int | str: one set lookup
            return _TypeCheck(tuple(n for c in checks for n in cast(_TypeCheck, c).names))
        expected = " or ".join(self.describe(b) for b in branches)

        def check(value: Any) -> None:
            errors: list[InvalidValueError] = []
            for branch in checks:
                try:
                    branch(value)
                    return
                except InvalidValueError as error:
                    errors.append(error)
            near = [e for e in errors if e.segments or not isinstance(e, _WrongTypeError)]
            if near:  # the value had a branch's type and broke a rule inside it: that is the useful error
                raise max(near, key=lambda e: len(e.segments))
            raise _WrongTypeError(f"must be {expected}, got {json_type_name(value)}")

        return check

    def _tag_values(self, ref: str, field: str, key: Any) -> list[Any]:
        """The tag values of the branch ``ref``: its tag field's ``enum`` / ``const``.

        They keep the type the performer declared; the ``mapping`` key alone cannot say, since a JSON object's
        keys are strings (an int tag ``1`` arrives as the key ``"1"``).
        """
        target: Any = self.defs.get(ref.removeprefix("#/$defs/"), {})
        properties: Any = (
            cast(Mapping[str, Any], target).get("properties", {}) if isinstance(target, Mapping) else {}
        )
        tag_schema: Any = (
            cast(Mapping[str, Any], properties).get(field, {}) if isinstance(properties, Mapping) else {}
        )
        if isinstance(tag_schema, Mapping):
            described = cast(Mapping[str, Any], tag_schema)
            if isinstance(described.get("enum"), list):
                return list(cast(list[Any], described["enum"]))
            if "const" in described:
                return [described["const"]]
        return [key]

    def _tagged(self, discriminator: Mapping[str, Any]) -> Check:
        field = str(discriminator["propertyName"])
        mapping: Mapping[str, Any] = discriminator["mapping"]
        by_tag: dict[tuple[type, Any], Check] = {}
        for key, ref in mapping.items():
            branch = self.ref(str(ref))
            for tag in self._tag_values(str(ref), field, key):
                by_tag[type(cast(object, tag)), tag] = branch
        tags = ", ".join(_literal(t) for _, t in by_tag)

        def check(value: Any) -> None:
            if type(value) is not dict:
                raise _WrongTypeError(f"must be an object, got {json_type_name(value)}")
            fields = cast(dict[str, Any], value)
            if field not in fields:
                raise InvalidValueError(f"is required (one of {tags})").inside(field)
            tag: Any = fields[field]
            kind: type = type(cast(object, tag))
            branch = by_tag.get((kind, tag)) if kind is str or kind is int else None
            if branch is None:
                raise InvalidValueError(f"must be one of {tags}, got {_shown(tag)}").inside(field)
            branch(value)

        return check

    def _objects(self, s: Mapping[str, Any]) -> list[Check]:
        if not any(
            k in s
            for k in ("properties", "required", "additionalProperties", "minProperties", "maxProperties")
        ):
            return []
        properties = {
            str(k): self.compile(v) for k, v in cast(Mapping[str, Any], s.get("properties", {})).items()
        }
        required: tuple[str, ...] = tuple(s.get("required", ()))
        extra = s.get("additionalProperties", True)
        extra_check: Check | None = None if extra is False else self.compile(extra)
        closed = f"is not a field of {s['title']}" if "title" in s else "is not an allowed field"
        least, most = s.get("minProperties"), s.get("maxProperties")

        def check(value: Any) -> None:
            if type(value) is not dict:
                return  # "type" (when present) refuses it; JSON Schema applies these to objects only
            fields = cast(dict[str, Any], value)
            for name in required:
                if name not in fields:
                    raise InvalidValueError("is required").inside(name)
            for key, item in fields.items():
                inner = properties.get(key, extra_check)
                if inner is None:
                    raise InvalidValueError(f"{closed} (unknown fields are refused)").inside(key)
                if inner is _accept or (isinstance(inner, _TypeCheck) and type(item) in inner.types):
                    continue  # the common fields, without a call each
                try:
                    inner(item)
                except InvalidValueError as error:
                    raise error.inside(key) from None
            if least is not None and len(fields) < least:
                raise InvalidValueError(f"must hold at least {least} fields")
            if most is not None and len(fields) > most:
                raise InvalidValueError(f"must hold at most {most} fields")

        return [check]

    def _arrays(self, s: Mapping[str, Any]) -> list[Check]:
        if not any(k in s for k in ("items", "prefixItems", "minItems", "maxItems")):
            return []
        prefix = [self.compile(p) for p in s.get("prefixItems", ())]
        rest = s.get("items", True)
        rest_check: Check | None = None if rest is False else self.compile(rest)
        least, most = s.get("minItems"), s.get("maxItems")

        def check(value: Any) -> None:
            if type(value) is not list:
                return
            items = cast(list[Any], value)
            if least is not None and len(items) < least:
                raise InvalidValueError(f"must hold at least {least} items, got {len(items)}")
            if most is not None and len(items) > most:
                raise InvalidValueError(f"must hold at most {most} items, got {len(items)}")
            for index, item in enumerate(items):
                inner = prefix[index] if index < len(prefix) else rest_check
                if inner is None:
                    raise InvalidValueError(f"must hold at most {len(prefix)} items, got {len(items)}")
                try:
                    inner(item)
                except InvalidValueError as error:
                    raise error.inside(index) from None

        return [check]


def _refuse_all(value: Any) -> None:
    raise InvalidValueError("is not allowed")


def _all(checks: Sequence[Check]) -> Check:
    def check(value: Any) -> None:
        for one in checks:
            one(value)

    return check


def _shown(value: Any) -> str:
    try:
        text = _literal(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _bound(s: Mapping[str, Any], key: str, words: str, fails: Callable[[Any, Any], bool]) -> list[Check]:
    if key not in s:
        return []
    limit = s[key]

    def check(value: Any) -> None:
        if (type(value) is int or type(value) is float) and fails(value, limit):
            raise InvalidValueError(f"must be {words} {limit}, got {value}")

    return [check]


def _numbers(s: Mapping[str, Any]) -> list[Check]:
    checks = (
        _bound(s, "minimum", "at least", lambda v, m: v < m)
        + _bound(s, "maximum", "at most", lambda v, m: v > m)
        + _bound(s, "exclusiveMinimum", "greater than", lambda v, m: v <= m)
        + _bound(s, "exclusiveMaximum", "less than", lambda v, m: v >= m)
    )
    if "multipleOf" in s:
        step = s["multipleOf"]

        def multiple(value: Any) -> None:
            # As msgspec checks it: a remainder, not a quotient (3.889393866727767e16 / 3 rounds to a whole
            # number, yet it leaves 2 over).
            if type(value) is int and type(step) is int:
                rest = value % step
            elif type(value) is int or type(value) is float:
                rest = math.fmod(value, step)
            else:
                return
            if rest != 0:
                raise InvalidValueError(f"must be a multiple of {step}, got {value}")

        checks.append(multiple)
    return checks


def _strings(s: Mapping[str, Any]) -> list[Check]:
    checks: list[Check] = []
    least, most = s.get("minLength"), s.get("maxLength")
    if least is not None or most is not None:

        def length(value: Any) -> None:
            if type(value) is str:
                if least is not None and len(value) < least:
                    raise InvalidValueError(f"must be at least {least} characters long, got {len(value)}")
                if most is not None and len(value) > most:
                    raise InvalidValueError(f"must be at most {most} characters long, got {len(value)}")

        checks.append(length)
    if "pattern" in s:
        source = str(s["pattern"])
        try:
            pattern = re.compile(source)
        except re.error as exc:
            raise SchemaError(f"pattern {source!r} does not compile: {exc}") from None

        def matches(value: Any) -> None:
            if type(value) is str and pattern.search(value) is None:
                raise InvalidValueError(f"must match the pattern {_literal(source)}, got {_shown(value)}")

        checks.append(matches)
    checks.extend(_formats(s))
    return checks


_UUID: Final = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}")
"""A UUID as msgspec decodes one (hyphens optional); the core does not import ``uuid`` (import-linter)."""


def _decimal(value: Any) -> None:
    """The type of a ``Decimal``: a number, or a string (whose text ``format: decimal`` then checks)."""
    kind: type = type(cast(object, value))
    if kind is not int and kind is not float and kind is not str:
        raise _WrongTypeError(f"must be a decimal number (a number or a string), got {json_type_name(value)}")


def _uuid(value: Any) -> None:
    if type(value) is str and _UUID.fullmatch(value) is None:
        raise InvalidValueError(f"must be a UUID, got {_shown(value)}")


def _formats(s: Mapping[str, Any]) -> list[Check]:
    if s.get("format") == "uuid":
        return [_uuid]
    kind, words = _FORMATS.get(str(s.get("format")), (None, ""))
    if s.get("contentEncoding") == "base64":
        kind, words = bytes, "base64 text"
    if kind is not None:

        def formatted(value: Any) -> None:
            if type(value) is str:
                try:
                    msgspec.convert(value, kind)
                except msgspec.ValidationError:
                    raise InvalidValueError(f"must be {words}, got {_shown(value)}") from None

        return [formatted]
    return []


def compile_schema(schema: Any) -> Check:
    """Compile ``schema`` (a JSON Schema document as msgspec writes it) into a check of plain JSON values.

    Raises:
        SchemaError: the schema cannot be compiled.
    """
    compiler = _Compiler(cast(Mapping[str, Any], schema) if isinstance(schema, Mapping) else {})
    return compiler.compile(schema)
