"""The policy body's documented schema and the handler agree on every field (issue 5 audit).

A body the OpenAPI document accepts is applied, and one it refuses is answered 400 naming the field, so a
client generated from the document never meets a surprise refusal.
"""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import pytest

from tests.api.api_world import World
from tsumugi_scheduler.api import OPERATIONS, build_document
from tsumugi_scheduler.api.bodies import POLICY_FIELDS

NULLABLE = {"rate", "per_key_rate", "aging_interval_ms"}
MINIMUM = {
    "concurrency": 0,
    "per_key_concurrency": 1,
    "aging_interval_ms": 1,
    "reaper_grace_ms": 0,
    "sweep_after_ms": 0,
    "failed_retention_ms": 0,
}
SAFE = 2**53 - 1


def _schema_allows(body: dict[str, Any]) -> bool:
    components = build_document(OPERATIONS)["components"]
    schema = {"$ref": "#/components/schemas/PolicyBody", "components": components}
    return jsonschema_rs.validator_for(schema).is_valid(body)


async def _handler_allows(world: World, body: dict[str, Any]) -> bool:
    status, answer = await world.request("POST", "/api/bindings/MAIL/policy", body)
    assert status in (200, 400), answer
    if status == 400:
        assert answer["field"].split(".")[0] in {*POLICY_FIELDS, "body"}
    return status == 200


@pytest.mark.parametrize("field", POLICY_FIELDS)
async def test_null_is_accepted_exactly_where_the_document_allows_it(world: World, field: str) -> None:
    body = {field: None}
    assert _schema_allows(body) is (field in NULLABLE)
    assert await _handler_allows(world, body) is (field in NULLABLE)


@pytest.mark.parametrize("field", sorted(MINIMUM))
async def test_the_documented_bounds_are_the_handlers(world: World, field: str) -> None:
    for value, allowed in [
        (MINIMUM[field], True),
        (SAFE, True),
        (MINIMUM[field] - 1, False),
        (SAFE + 1, False),
    ]:
        body = {field: value}
        assert (_schema_allows(body), await _handler_allows(world, body)) == (allowed, allowed), value


async def test_an_empty_body_is_refused_by_both(world: World) -> None:
    assert _schema_allows({}) is False
    status, body = await world.request("POST", "/api/bindings/MAIL/policy", {})
    assert (status, body["field"]) == (400, "body")


async def test_a_value_beyond_javascripts_exact_range_is_refused_naming_the_limit(world: World) -> None:
    status, body = await world.request("POST", "/api/bindings/MAIL/policy", {"sweep_after_ms": 10**30})
    assert (status, body) == (
        400,
        {
            "error": "sweep_after_ms must be at most 9007199254740991",
            "field": "sweep_after_ms",
            "rule": "must be at most 9007199254740991",
        },
    )
    status, body = await world.request(
        "POST", "/api/bindings/MAIL/policy", {"rate": {"tokens": SAFE + 1, "interval_ms": 1}}
    )
    assert (status, body["error"]) == (400, "rate.tokens must be at most 9007199254740991")
