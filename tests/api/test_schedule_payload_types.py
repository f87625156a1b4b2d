"""A schedule's payload is checked against its performer's type when it is created or changed (issue 25 item
10), and a schedule body is strict UTF-8 like every other body (item 9).

Before, such a schedule was stored, and every occurrence failed: its trigger answered 502 with the validation
error. Now the create or change is a 400 naming the field, and nothing is stored.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_payload_schema import GOOD, typed  # noqa: F401 - the fixture: Order publishes its payload type

from tests.api.api_world import World

SCHEDULE = {"name": "orders", "binding": "Order", "cron": "0 3 * * *"}


def _refusal(field: str, rule: str) -> tuple[int, dict[str, str]]:
    return 400, {"error": f"{field} {rule}", "field": field, "rule": rule}


@pytest.mark.parametrize(
    ("payload", "field", "rule"),
    [
        ({"name": 5, "address": {"city": "Paris"}}, "payload.name", "must be a string, got an integer"),
        ({"name": "Ada"}, "payload.address", "is required"),
        ("Ada", "payload", "must be an object, got a string"),
    ],
)
async def test_a_schedule_whose_payload_the_type_refuses_is_not_created(
    typed: World,  # noqa: F811 - the imported fixture
    payload: Any,
    field: str,
    rule: str,
) -> None:
    assert await typed.request("POST", "/api/schedules", {**SCHEDULE, "payload": payload}) == _refusal(
        field, rule
    )
    assert await typed.request("GET", "/api/schedules") == (200, {"schedules": []})


async def test_a_change_to_a_payload_the_type_refuses_is_refused_and_the_schedule_kept(
    typed: World,  # noqa: F811 - the imported fixture
) -> None:
    created = await typed.request("POST", "/api/schedules", {**SCHEDULE, "payload": GOOD})
    assert created[0] == 201, created
    # The body alone is valid; it conflicts with the stored schedule's binding: 409, naming the field.
    refused = await typed.request("PATCH", "/api/schedules/orders", {"payload": {"name": "Ada"}})
    assert refused == (409, _refusal("payload.address", "is required")[1])
    named = await typed.request("PATCH", "/api/schedules/orders", {"binding": "Order", "payload": "Ada"})
    assert named == _refusal("payload", "must be an object, got a string")
    status, kept = await typed.request("GET", "/api/schedules/orders")
    assert (status, kept["payload"]) == (200, GOOD)
    status, triggered = await typed.request("POST", "/api/schedules/orders/trigger")
    assert status == 200, triggered


async def test_a_new_binding_whose_type_refuses_the_stored_payload_is_a_conflict(
    typed: World,  # noqa: F811 - the imported fixture
) -> None:
    created = await typed.request("POST", "/api/schedules", {**SCHEDULE, "binding": "Any", "payload": "text"})
    assert created[0] == 201, created
    moved = await typed.request("PATCH", "/api/schedules/orders", {"binding": "Order"})
    assert moved == (409, _refusal("payload", "must be an object, got a string")[1])
    status, kept = await typed.request("GET", "/api/schedules/orders")
    assert (status, kept["binding"], kept["payload"]) == (200, "Any", "text")


async def test_a_schedule_body_with_invalid_utf8_is_refused(world: World) -> None:
    body = b'{"name": "caf\xe9", "binding": "MAIL", "payload": null, "cron": "0 3 * * *"}'
    assert await world.request("POST", "/api/schedules", body) == _refusal(
        "body", "must be UTF-8 text (invalid byte at offset 13)"
    )
    assert await world.request("GET", "/api/schedules") == (200, {"schedules": []})


async def test_a_trigger_the_performer_type_now_refuses_is_a_conflict_naming_the_field(
    typed: World,  # noqa: F811 - the imported fixture
) -> None:
    # Found by the live schemathesis run: a schedule stored while its performer could not be asked (nothing is
    # checked then, as at enqueue) or before a redeploy made its type stricter; its trigger answered 502.
    order = typed.env.Order  # type: ignore[attr-defined]
    del typed.env.Order  # type: ignore[attr-defined]
    created = await typed.request("POST", "/api/schedules", {**SCHEDULE, "payload": {"name": "Ada"}})
    assert created[0] == 201, created
    typed.env.Order = order  # type: ignore[attr-defined]
    refused = await typed.request("POST", "/api/schedules/orders/trigger")
    assert refused == (
        409,
        {"error": "payload.address is required", "field": "payload.address", "rule": "is required"},
    )
    status, kept = await typed.request("GET", "/api/schedules/orders")
    assert (status, kept["last_error"]) == (
        200,
        "EnqueueValidationError: items[0].payload.address is required",
    )
