"""The served OpenAPI document with each performer's payload type (issue 25 item 11, ADR-0124).

The scheduler checks every payload against the JSON Schema its performer publishes (ADR-0075), so the document
says the same: an enqueue item's or a schedule's ``payload`` must fit the type of the item's ``binding``.
A fuzzer (schemathesis) then sends payloads the performer accepts, and a client generator sees the types.

Each published schema is copied in as the performers publish it, with three changes:

- its ``$defs`` become components named ``<binding>.<name>``, and its ``$ref`` s follow them;
- an integer is bounded to JavaScript's safe integers, and a schema that takes anything (``{}``, ``true``)
  becomes `JsonValue`, because the REST API refuses what cannot cross a queue and JavaScript
  (`tsumugi_core.portable`), whatever the type says;
- an object type that says nothing of other fields (msgspec ignores them) takes them as `JsonValue`;
- a schedule body gets one alternative per binding, pairing its name with its type (bindings that publish
  nothing keep `JsonValue`). An enqueue item lists the types in ``x-tsumugi-payload-types`` instead: with one
  alternative per binding, multiplied by the item's rules across fields, its schema grew past what
  schemathesis can expand (it stopped on it with "Schema Error"), so the item keeps `JsonValue` there.

Example:
    >>> doc = {"components": {"schemas": {"EnqueueBody": {"properties": {"binding": {}, "payload": {}}}}}}
    >>> out = with_payload_types(doc, {"A": {"type": "integer"}})
    >>> out["components"]["schemas"]["EnqueueBody"]["x-tsumugi-payload-types"]["A"]
    {'type': 'integer', 'minimum': -9007199254740991, 'maximum': 9007199254740991}
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final, cast

from tsumugi_core.options import MAX_SAFE_INTEGER

__all__ = ["portable_schema", "with_payload_types"]

_JSON_VALUE: Final = {"$ref": "#/components/schemas/JsonValue"}
_BODIES: Final = ("ScheduleCreateBody", "SchedulePatchBody")
_ONE: Final = ("additionalProperties", "items", "not", "if", "then", "else", "contains", "propertyNames")
_MANY: Final = ("anyOf", "oneOf", "allOf", "prefixItems")
_NAMED: Final = ("properties", "patternProperties", "$defs", "dependentSchemas")


def portable_schema(schema: Any) -> Any:
    """``schema`` (refs unchanged) saying what the REST API takes for it: integers bounded to JavaScript's safe
    integers, "anything" as `JsonValue`, and the other fields of an object that says nothing of them as
    `JsonValue` (a flow's run input, ADR-0124's rules)."""
    return _adapted(schema, None)


def _adapted(schema: Any, binding: str | None) -> Any:
    """``schema`` with its refs renamed (``binding`` None: kept), its integers bounded and its "anything" made
    `JsonValue`."""
    if schema is True or schema == {}:
        return dict(_JSON_VALUE)
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = dict(cast(Mapping[str, Any], schema))
    ref = out.get("$ref")
    if binding is not None and isinstance(ref, str) and ref.startswith("#/$defs/"):
        out["$ref"] = f"#/components/schemas/{binding}.{ref.removeprefix('#/$defs/')}"
    kinds = out.get("type")
    if kinds == "integer" or (isinstance(kinds, list) and "integer" in kinds):
        out["minimum"] = max(out.get("minimum", -MAX_SAFE_INTEGER), -MAX_SAFE_INTEGER)
        out["maximum"] = min(out.get("maximum", MAX_SAFE_INTEGER), MAX_SAFE_INTEGER)
    is_object = out.get("type") == "object" or "properties" in out
    if is_object and "additionalProperties" not in out:
        out["additionalProperties"] = dict(_JSON_VALUE)
    for key in _ONE:
        if key in out and out[key] is not False:
            out[key] = _adapted(out[key], binding)
    for key in _MANY:
        if isinstance(out.get(key), list):
            out[key] = [_adapted(item, binding) for item in cast(list[Any], out[key])]
    for key in _NAMED:
        if isinstance(out.get(key), Mapping):
            named = cast(Mapping[str, Any], out[key])
            out[key] = {name: _adapted(item, binding) for name, item in named.items()}
    return out


def with_payload_types(document: Mapping[str, Any], published: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``document`` whose payloads have the types of ``published`` (binding -> its JSON Schema)."""
    out: dict[str, Any] = copy.deepcopy(dict(document))
    if not published:
        return out
    components: dict[str, Any] = out["components"]["schemas"]
    types: dict[str, Any] = {}
    for binding, schema in sorted(published.items()):
        adapted = _adapted(schema, binding)
        if isinstance(adapted, dict):
            for name, definition in cast(dict[str, Any], adapted).pop("$defs", {}).items():
                components[f"{binding}.{name}"] = definition
        types[binding] = adapted
    item = components.get("EnqueueBody")
    if item is not None:
        item["x-tsumugi-payload-types"] = types
    untyped = [{"properties": {"binding": {"not": {"enum": sorted(types)}}}}]
    for name in _BODIES:
        body = components.get(name)
        if body is None or "payload" not in body.get("properties", {}):
            continue
        body.setdefault("allOf", []).append(
            {
                "anyOf": [
                    {"properties": {"binding": {"const": binding}, "payload": schema}}
                    for binding, schema in types.items()
                ]
                + untyped
            }
        )
    return out
