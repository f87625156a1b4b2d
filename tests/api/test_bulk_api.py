"""Bulk retry / cancel: by ids (per-id refusals) or by filter (oldest first, 200 cap, ``remaining``)."""

from __future__ import annotations

import pytest

from tests.api.api_world import FOREIGN_IDS, T0, World


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("oops", "body must be valid JSON"),
        ("[]", "body must be an object"),
        ('{"ids": "MAIL#0:a"}', "ids must be an array"),
        ('{"ids": []}', "ids must not be empty"),
        ('{"ids": [' + ",".join('"x"' for _ in range(201)) + "]}", "ids must not exceed 200 entries"),
        ('{"ids": ["a", ""]}', "ids must be non-empty strings"),
        ('{"ids": ["a", 3]}', "ids must be non-empty strings"),
        ('{"binding": 5}', "binding must be a string"),
        ('{"unique_key": false}', "unique_key must be a string"),
        ('{"concurrency_key": []}', "concurrency_key must be a string"),
        ('{"created_from": "yesterday"}', "created_from must be a number"),
        ('{"created_to": true}', "created_to must be a number"),
        ('{"limit": "all"}', "limit must be a number"),
        ('{"limit": 0}', "limit must be at least 1"),
        ('{"state": "SCHEDULED"}', "state must be one of FAILED, STALLED for retry"),
    ],
)
async def test_bulk_retry_refuses_bad_bodies_with_the_original_messages(
    world: World, body: str, message: str
) -> None:
    status, answer = await world.request("POST", "/api/jobs/bulk-retry", body)
    where = ("line", "column", "detail")  # where text that is not JSON broke (issue 26)
    assert (status, {k: v for k, v in answer.items() if k not in where}) == (400, {"error": message})


async def test_bulk_cancel_allows_only_scheduled_by_filter(world: World) -> None:
    assert await world.request("POST", "/api/jobs/bulk-cancel", {"state": "FAILED"}) == (
        400,
        {"error": "state must be one of SCHEDULED for cancel"},
    )


async def test_a_filter_acts_only_on_jobs_its_shard_still_holds_in_the_filters_state(world: World) -> None:
    # The read model chose the job as SCHEDULED; its shard has dispatched it since (the projection's hold).
    await world.request("POST", "/api/bindings/MAIL/policy", {"paused": True})
    job_id = await world.enqueue("MAIL")
    await world.tick()
    await world.request("POST", "/api/bindings/MAIL/policy", {"paused": False})
    await world.tick()
    _, listed = await world.request("GET", "/api/jobs?binding=MAIL&state=SCHEDULED")
    assert [j["id"] for j in listed["jobs"]] == [job_id]
    engine = world.shard("MAIL#0").host.engine("MAIL#0")
    assert engine is not None
    held = engine.get(job_id)
    assert held is not None
    assert held.state.value == "QUEUED"

    status, body = await world.request(
        "POST", "/api/jobs/bulk-cancel", {"binding": "MAIL", "state": "SCHEDULED"}
    )
    assert (status, body) == (
        200,
        {"ok": [], "failed": [{"id": job_id, "reason": "invalid-state"}], "remaining": 0},
    )
    held = engine.get(job_id)
    assert held is not None
    assert (held.state.value, held.cancel_requested_at) == ("QUEUED", None)  # not asked to stop


async def test_bulk_by_ids_reports_each_refusal_and_changes_the_rest(world: World) -> None:
    cancellable = await world.enqueue("MAIL")
    sms = await world.enqueue("SMS", partitionKey="p")
    done = await world.enqueue("MAIL")
    await world.request("POST", f"/api/jobs/{done.replace('#', '%23')}/cancel")
    ids = [cancellable, "bad-id", "MAIL#0:never", done, sms, cancellable]
    status, body = await world.request("POST", "/api/jobs/bulk-cancel", {"ids": ids, "state": "SCHEDULED"})
    assert status == 200
    assert body == {
        "ok": [cancellable, sms],
        "failed": [
            {"id": "bad-id", "reason": "invalid-id"},
            {"id": "MAIL#0:never", "reason": "gone"},
            {"id": done, "reason": "invalid-state"},
        ],
        "remaining": 0,
    }


async def test_bulk_by_filter_takes_the_oldest_up_to_limit_and_estimates_the_rest(world: World) -> None:
    ids = []
    for _ in range(5):
        ids.append(await world.enqueue("MAIL", maxAttempts=1))
        world.clock.advance(1)
    for job_id in ids:
        await world.fail(job_id)
    await world.tick()  # project FAILED into the read model
    status, body = await world.request("POST", "/api/jobs/bulk-retry", {"binding": "MAIL", "limit": 3})
    assert (status, body["ok"], body["failed"], body["remaining"]) == (200, ids[:3], [], 2)
    await world.tick()
    status, body = await world.request(
        "POST", "/api/jobs/bulk-retry", {"binding": "MAIL", "state": "FAILED", "created_from": T0 + 4}
    )
    assert (status, body["ok"], body["remaining"]) == (200, ids[4:], 0)


async def test_a_filter_never_selects_more_than_200(world: World) -> None:
    await world.request("POST", "/api/bindings/MAIL/policy", {"paused": True})
    items = [{"binding": "MAIL", "payload": i} for i in range(250)]
    assert (await world.request("POST", "/api/jobs/bulk-enqueue", {"items": items}))[0] == 201
    await world.tick()  # projects all 250 as SCHEDULED; nothing dispatches while paused
    status, body = await world.request("POST", "/api/jobs/bulk-cancel", {"binding": "MAIL", "limit": 1000})
    assert (status, len(body["ok"]), body["remaining"]) == (200, 200, 50)


async def test_huge_numbers_are_clamped_not_a_server_error(world: World) -> None:
    # Found by the schemathesis run: SQLite cannot bind integers beyond 64 bits.
    body = {"created_from": -1.9e18, "created_to": 7.1e70, "limit": 1e300}
    assert await world.request("POST", "/api/jobs/bulk-retry", body) == (
        200,
        {"ok": [], "failed": [], "remaining": 0},
    )
    job_id = await world.enqueue("MAIL")
    path = f"/api/jobs/{job_id.replace('#', '%23')}/reschedule"
    # A reschedule is refused instead (issue 15 item 7): clamping moved the job to the year 287396.
    status, answer = await world.request("POST", path, {"runAt": 1e300, "priority": -1e300})
    assert (status, answer["field"]) == (400, "runAt")


async def test_bulk_refuses_ids_we_cannot_hold_as_invalid_id_without_making_objects(world: World) -> None:
    status, body = await world.request(
        "POST", "/api/jobs/bulk-cancel", {"ids": [*FOREIGN_IDS, "MAIL#0:x", "junk"]}
    )
    assert status == 200
    reasons = {f["id"]: f["reason"] for f in body["failed"]}
    assert reasons == {
        "Foo#0:x": "invalid-id",
        "SMS#2:x": "invalid-id",
        "MAIL#1:x": "invalid-id",
        "MAIL#0:x": "gone",
        "junk": "invalid-id",
    }
    assert sorted(world.env.JOB_SHARD.objects) == ["MAIL#0"]
