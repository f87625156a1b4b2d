"""The OpenAPI 3.1 document, generated from the route table and the code's models.

Response schemas come from the msgspec Structs the handlers answer with (``msgspec.json.schema_components``),
request schemas from the pydantic body models (``model_json_schema``); both are JSON Schema 2020-12, which
OpenAPI 3.1 uses as is. Every authenticated operation also documents 401 and 503, and every operation 404
(an unknown path answers ``{"error": "not found"}``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec

from tsumugi_core.ids import BINDING_NAME_RE, FLOW_NAME_RE, LOCAL_ID_RE
from tsumugi_core.schedule_spec import MAX_SCHEDULE_NAME_CHARS, SCHEDULE_NAME_RE
from tsumugi_scheduler.api.operations import OPENAPI_PATH, Answer, Operation
from tsumugi_scheduler.api.payload_types import portable_schema
from tsumugi_scheduler.api.schedule_models import name_schedule_bindings
from tsumugi_scheduler.api.shapes import ErrorBody

__all__ = ["API_TITLE", "API_VERSION", "build_document"]

API_TITLE: Final = "Tsumugi REST API"
API_VERSION: Final = "0.1.0"
_REF: Final = "#/components/schemas/{name}"
_PATH_PARAM: Final = re.compile(r"\{([a-z_]+)\}")
_ENQUEUE_ITEM: Final = "EnqueueBody"
_COMMON: Final = {
    401: Answer(description="Missing or wrong credentials (token, session or Access token)."),
    403: Answer(
        description="The caller's role falls short of the operation's `x-tsumugi-role` (`needs`, "
        "`role`), or a cookie-authenticated request came from another origin."
    ),
    404: Answer(description="Not found."),
    503: Answer(description="Read-model migrations pending, or D1 unavailable."),
}


def _struct_schemas(operations: Sequence[Operation]) -> tuple[dict[int, dict[str, Any]], dict[str, Any]]:
    types: list[Any] = [ErrorBody]
    for op in operations:
        types.extend(a.body for a in op.answers.values() if a.body is not None)
    unique = list(dict.fromkeys(types))
    schemas, components = msgspec.json.schema_components(unique, ref_template=_REF)
    return {id(t): schema for t, schema in zip(unique, schemas, strict=True)}, components


def _body_schema(op: Operation, components: dict[str, Any]) -> dict[str, Any] | None:
    if op.body is None:
        return None
    schema = op.body.model_json_schema(ref_template=_REF.replace("{name}", "{model}"))
    components.update(schema.pop("$defs", {}))
    components[op.body.__name__] = schema
    return {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": _REF.format(name=op.body.__name__)}}},
    }


def _path_schema(path: str, name: str) -> dict[str, Any]:
    """The syntax of a path parameter, so a well-formed value is never refused as malformed.

    Source: docs/reference/original.md §1.2.
    """
    if name == "binding":
        return {"type": "string", "pattern": f"^{BINDING_NAME_RE.pattern}$"}
    if name == "name":
        return {
            "type": "string",
            "pattern": f"^{SCHEDULE_NAME_RE.pattern}$",
            "maxLength": MAX_SCHEDULE_NAME_CHARS,
        }
    if path.startswith("/api/runs/"):
        return {"type": "string", "pattern": f"^{FLOW_NAME_RE.pattern}:{LOCAL_ID_RE.pattern}$"}
    return {"type": "string", "pattern": f"^{BINDING_NAME_RE.pattern}#[0-9]+:{LOCAL_ID_RE.pattern}$"}


def _parameters(op: Operation) -> list[dict[str, Any]]:
    params: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": _path_schema(op.path, name)}
        for name in _PATH_PARAM.findall(op.path)
    ]
    params.extend(
        {
            "name": q.name,
            "in": "query",
            "required": False,
            "schema": dict(q.schema),
            "description": q.description,
        }
        for q in op.query
    )
    return params


def _responses(op: Operation, by_type: dict[int, dict[str, Any]]) -> dict[str, Any]:
    answers = {**_COMMON, **op.answers}
    out: dict[str, Any] = {}
    for status in sorted(answers):
        answer = answers[status]
        entry: dict[str, Any] = {"description": answer.description}
        if answer.body is not None:
            entry["content"] = {"application/json": {"schema": by_type[id(answer.body)]}}
        out[str(status)] = entry
    return out


def _openapi_operation() -> dict[str, Any]:
    return {
        "operationId": "getOpenApi",
        "summary": "This document (no authentication).",
        "tags": ["meta"],
        "security": [],
        "responses": {
            "200": {
                "description": "The OpenAPI document.",
                "content": {"application/json": {"schema": {"type": "object"}}},
            },
            "404": {"description": "The API is not enabled (no auth configured)."},
        },
    }


def _pinned_id(binding: str, shards: int) -> str:
    numbers = "|".join(str(i) for i in range(shards))
    return f"^{binding}#0*(?:{numbers}):{LOCAL_ID_RE.pattern}$"


def _name_bindings(components: dict[str, Any], bindings: Mapping[str, int]) -> None:
    """An enqueue item's ``binding`` lists the registered performers (another name is refused with 400),
    a pinned ``id`` names that binding and one of its shards, and a binding split into shards requires
    ``partitionKey`` or a pinned ``id`` (ADR-0059)."""
    item = components.get(_ENQUEUE_ITEM)
    if item is None:
        return
    rules: list[dict[str, Any]] = item.setdefault("allOf", [])
    sharded = sorted(b for b, n in bindings.items() if n > 1)
    if bindings:
        item["properties"]["binding"]["enum"] = sorted(bindings)
    if bindings:
        # A pinned id names a served binding and one of its shards. That it names the item's own binding is not
        # written here: one alternative per binding, multiplied by the other rules' alternatives, made a schema
        # no generator could expand (schemathesis stopped on it with "Schema Error", issue 25 item 11); an id of
        # another served binding is refused with 409 (a conflict, as a shard of another config, ADR-0059).
        pinned = "|".join(_pinned_id(b, n)[1:-1] for b, n in sorted(bindings.items()))
        served = {"type": "string", "minLength": 1, "maxLength": 512, "pattern": f"^(?:{pinned})$"}
        item["properties"]["id"]["anyOf"] = [served, {"type": "null"}]
    if sharded:
        with_key = {"required": ["partitionKey"], "properties": {"partitionKey": {"type": "string"}}}
        pinned = {"required": ["id"], "properties": {"id": {"type": "string"}}}
        rules.append(
            {
                "if": {"properties": {"binding": {"enum": sorted(sharded)}}},
                "then": {"anyOf": [with_key, pinned]},
            }
        )


def _hoisted(schema: Mapping[str, Any], prefix: str, components: dict[str, Any]) -> Any:
    """``schema`` with its ``$defs`` moved into ``components`` (named ``<prefix><Def>``) and its refs pointed there."""

    def point(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {
                k: (
                    _REF.format(name=prefix + v.removeprefix("#/$defs/"))
                    if k == "$ref" and isinstance(v, str) and v.startswith("#/$defs/")
                    else point(v)
                )
                for k, v in value.items()  # pyright: ignore[reportUnknownVariableType]
                if k != "$defs"
            }
        if isinstance(value, list):
            return [point(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
        return value

    for name, definition in dict(schema.get("$defs", {})).items():
        components[prefix + str(name)] = point(definition)
    return point(schema)


def _name_run_flows(components: dict[str, Any], flow_inputs: Mapping[str, Mapping[str, Any] | None]) -> None:
    """A start body's ``flow`` lists the registered flows and its ``input`` fits the chosen flow's input type, so a
    request the document allows is one the route accepts (issue 24 item 12)."""
    body = components.get("StartRunBody")
    if body is None or not flow_inputs:
        return
    body["properties"]["flow"] = {"enum": sorted(flow_inputs)}
    choices: list[dict[str, Any]] = []
    for name in sorted(flow_inputs):
        schema = flow_inputs[name]
        properties: dict[str, Any] = {"flow": {"const": name}}
        if schema is not None:
            # The route refuses what cannot cross JavaScript in any field of the input: the document says so.
            properties["input"] = _hoisted(portable_schema(schema), f"RunInput_{name}_", components)
        choices.append({"properties": properties})
    body.setdefault("allOf", []).append({"anyOf": choices})


def build_document(
    operations: Sequence[Operation],
    bindings: Mapping[str, int] | None = None,
    flows: Sequence[str] = (),
    flow_inputs: Mapping[str, Mapping[str, Any] | None] | None = None,
) -> dict[str, Any]:
    """The OpenAPI document of ``operations`` plus ``GET /api/openapi.json`` itself.

    Args:
        operations: The route table.
        bindings: The registered performers and their shard counts: the only values of an enqueue item's
            ``binding`` (none: any binding name, as a scheduler without registered performers accepts).
        flows: The registered flows: a schedule may target one of them instead of a binding.
        flow_inputs: The registered flows' input schemas (None: any input): a run's start names one and fits it.
    """
    by_type, components = _struct_schemas(operations)
    paths: dict[str, dict[str, Any]] = {OPENAPI_PATH: {"get": _openapi_operation()}}
    for op in operations:
        entry: dict[str, Any] = {
            "operationId": op.operation_id,
            "summary": op.summary,
            "tags": [op.tag],
            "parameters": _parameters(op),
            "responses": _responses(op, by_type),
            "description": f"Needs the {op.role.value} role (or higher).",
            "x-tsumugi-role": op.role.value,
        }
        body = _body_schema(op, components)
        if body is not None:
            entry["requestBody"] = body
        paths.setdefault(op.path, {})[op.method.lower()] = entry
    _name_bindings(components, bindings or {})
    name_schedule_bindings(components, dict(bindings or {}), list(flows))
    _name_run_flows(components, flow_inputs or {})
    return {
        "openapi": "3.1.0",
        "info": {"title": API_TITLE, "version": API_VERSION},
        "servers": [{"url": "/"}],
        "security": [{"bearerAuth": []}, {"cookieAuth": []}, {"accessAuth": []}],
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "bearerAuth": {"type": "http", "scheme": "bearer"},
                "cookieAuth": {"type": "apiKey", "in": "cookie", "name": "tsumugi_token"},
                "accessAuth": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "Cf-Access-Jwt-Assertion",
                    "description": "Cloudflare Access's signed token (also its CF_Authorization cookie), "
                    "when the deployment signs in through Access.",
                },
            },
        },
    }
