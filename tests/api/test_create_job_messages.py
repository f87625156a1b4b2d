"""``POST /api/jobs`` answers every createJob message of the original and our options' rules.

Source: docs/reference/original.md §4.3.

Where the original fixed a text its clients read the same one (type errors name the key as sent); range rules
come from the scheduler's validation and name the snake_case field (docs/design/scheduler-rpc.md §3.1,
docs/rest-api.md).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.api.api_world import World

B: dict[str, Any] = {"binding": "MAIL", "payload": {}}
SMS: dict[str, Any] = {"binding": "SMS", "payload": {}}
SHARD_RULE = "must be 1, the scheduler's shard for this item: the caller's bindings config differs"
TRACE_RULE = "must be a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)"


def _rule(field: str, rule: str) -> dict[str, str]:
    return {"error": f"{field} {rule}", "field": field, "rule": rule}


ORIGINAL = [
    (
        "{not json",
        {
            "error": "body must be valid JSON",
            "line": 1,
            "column": 2,
            "detail": "Expecting property name enclosed in double quotes",
        },
    ),
    ('{"binding": "MAIL", "payload": Infinity}', {"error": "body must be valid JSON"}),
    ('"MAIL"', {"error": "body must be an object"}),
    ({"payload": 1}, _rule("binding", "is required")),
    ({"binding": "", "payload": 1}, _rule("binding", "is required")),
    ({"binding": None, "payload": 1}, _rule("binding", "is required")),
    ({"binding": 5, "payload": 1}, _rule("binding", "must be a string")),
    ({"binding": "Nope", "payload": 1}, _rule("binding", "is not a registered performer: Nope")),
    ({"binding": "MAIL"}, _rule("payload", "is required")),
    ({**B, "maxAttempts": "3"}, _rule("maxAttempts", "must be a number")),
    ({**B, "delayMs": True}, _rule("delayMs", "must be a number")),
    ({**B, "priority": [1]}, _rule("priority", "must be a number")),
    ({**B, "maxAttempts": 0}, _rule("maxAttempts", "must be at least 1")),
    ({**B, "delayMs": -1}, _rule("delayMs", "must not be negative")),
    ({**B, "concurrencyKey": 5}, _rule("concurrencyKey", "must be a string")),
    ({**B, "uniqueKey": {"k": 1}}, _rule("uniqueKey", "must be a string")),
]
OURS = [
    ({**B, "priority": 1.5}, _rule("priority", "must be an integer")),
    ({**B, "priority": 2**60}, _rule("priority", "must be between -9007199254740991 and 9007199254740991")),
    ({**B, "timeoutMs": 0}, _rule("timeoutMs", "must be at least 1")),
    (
        {**B, "timeoutMs": 840_001},
        _rule(
            "timeoutMs",
            "must be at most 840000 (14 minutes): a job runs inside one queue consumer invocation, which Cloudflare stops after 15 minutes, got 840001",
        ),
    ),
    ({**B, "timeoutMs": "1s"}, _rule("timeoutMs", "must be a number")),
    ({**B, "runAt": -1}, _rule("runAt", "must not be negative")),
    ({**B, "runAt": 1, "delayMs": 1}, _rule("runAt", "and delayMs are mutually exclusive")),
    ({**B, "uniqueForMs": 0}, _rule("uniqueForMs", "must be at least 1")),
    ({**B, "expiresInMs": 0}, _rule("expiresInMs", "must be at least 1")),
    (
        {**B, "expiresAt": 1, "expiresInMs": 1},
        _rule("expiresAt", "and expiresInMs are mutually exclusive"),
    ),
    ({**B, "guarantee": "never"}, _rule("guarantee", "must be 'at-least-once' or 'at-most-once'")),
    ({**B, "guarantee": 1}, _rule("guarantee", "must be a string")),
    ({**B, "traceparent": "x"}, _rule("traceparent", TRACE_RULE)),
    ({**B, "backoff": "fast"}, _rule("backoff", "must be an object")),
    ({**B, "backoff": {"kind": "slow"}}, _rule("backoff.kind", "must be 'fixed' or 'exponential'")),
    ({**B, "backoff": {"kind": "fixed"}}, _rule("backoff.delayMs", "is required for a fixed backoff")),
    ({**B, "backoff": {"kind": "fixed", "delayMs": "1"}}, _rule("backoff.delayMs", "must be a number")),
    (
        {**B, "backoff": {"kind": "fixed", "delayMs": -1}},
        _rule("backoff.delayMs", "must be between 0 and 9007199254740991"),
    ),
    ({**B, "backoff": {"kind": "exponential", "factor": 0.5}}, _rule("backoff.factor", "must be at least 1")),
    (
        {**B, "backoff": {"kind": "fixed", "delayMs": 1, "jitter": 1}},
        _rule("backoff.jitter", "must be a boolean"),
    ),
    ({**B, "concurrencyKey": "k" * 513}, _rule("concurrencyKey", "must be at most 512 characters")),
    ({**B, "partitionKey": ""}, _rule("partitionKey", "must not be empty")),
    ({**B, "nodeId": "n"}, _rule("nodeId", "is set only by the run a job belongs to")),
    ({**B, "runId": "f:r"}, _rule("runId", "is set only by the run a job belongs to")),
    ({**B, "shard": -1}, _rule("shard", "must be a non-negative integer, got -1")),
    ({**B, "color": "red"}, _rule("color", "is not an enqueue option")),
]


@pytest.mark.parametrize(
    ("body", "expected"),
    ORIGINAL + OURS,
    ids=lambda v: json.dumps(v)[:60] if isinstance(v, dict) else str(v)[:40],
)
async def test_create_refuses_with_the_message_naming_the_key_and_the_rule(
    world: World, body: Any, expected: dict[str, str]
) -> None:
    assert await world.request("POST", "/api/jobs", body) == (400, expected)


async def test_a_pinned_id_of_another_binding_is_a_409_conflict(world: World) -> None:
    # Well-formed, and matching the document's id pattern (any served binding and shard): in conflict with the
    # item's binding, as a shard of another config is (issue 25 item 11; ADR-0125).
    body = {**B, "id": "SMS#0:x"}
    assert await world.request("POST", "/api/jobs", body) == (
        409,
        _rule("id", "must belong to binding MAIL: SMS#0:x"),
    )
    status, bulk = await world.request("POST", "/api/jobs/bulk-enqueue", {"items": [B, body]})
    assert (status, bulk["field"]) == (409, "items[1].id")


@pytest.mark.parametrize("key", ["concurrencyKey", "uniqueKey"])
async def test_an_empty_key_is_dropped_as_the_original_drops_it(world: World, key: str) -> None:
    job_id = await world.enqueue("MAIL", **{key: ""})
    job = (await world.request("GET", f"/api/jobs/{job_id.replace('#', '%23')}"))[1]["job"]
    assert (job["concurrency_key"], job["unique_key"]) == (None, None)


async def test_whole_floats_and_nulls_are_accepted_as_json_has_one_number_type(world: World) -> None:
    job_id = await world.enqueue("MAIL", maxAttempts=5.0, priority=None)
    job = (await world.request("GET", f"/api/jobs/{job_id.replace('#', '%23')}"))[1]["job"]
    assert (job["max_attempts"], job["priority"]) == (5, 0)


async def test_bulk_enqueue_items_get_the_same_checks_prefixed_with_their_index(world: World) -> None:
    items = [{**B, "concurrencyKey": ""}, {**B, "maxAttempts": "x"}]
    assert await world.request("POST", "/api/jobs/bulk-enqueue", {"items": items}) == (
        400,
        _rule("items[1].maxAttempts", "must be a number"),
    )
    status, body = await world.request("POST", "/api/jobs/bulk-enqueue", {"items": items[:1]})
    assert (status, len(body["ids"])) == (201, 1)
