"""A bulk body is type-checked whole, also when it targets ``ids`` (the other fields are then ignored)."""

from __future__ import annotations

import pytest

from tests.api.api_world import World


@pytest.mark.parametrize("path", ["/api/jobs/bulk-retry", "/api/jobs/bulk-cancel"])
async def test_a_filter_field_of_the_wrong_type_beside_ids_is_refused(world: World, path: str) -> None:
    status, body = await world.request("POST", path, {"ids": ["MAIL#0:x"], "unique_key": 5})
    assert (status, body) == (400, {"error": "unique_key must be a string"})
    status, _ = await world.request("POST", path, {"ids": ["MAIL#0:x"], "unique_key": "u"})
    assert status == 200


@pytest.mark.parametrize(
    ("path", "state", "allowed"),
    [
        ("/api/jobs/bulk-retry", ")", "FAILED, STALLED for retry"),
        ("/api/jobs/bulk-cancel", "FAILED", "SCHEDULED for cancel"),
    ],
)
async def test_a_state_outside_the_documented_values_beside_ids_is_refused(
    world: World, path: str, state: str, allowed: str
) -> None:
    # Found by the live schemathesis run: the document's state is an enum, the server ignored it beside ids.
    status, body = await world.request("POST", path, {"ids": ["MAIL#0:x"], "state": state})
    assert (status, body) == (400, {"error": f"state must be one of {allowed}"})
