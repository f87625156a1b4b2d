"""Job routes: create, bulk-enqueue, detail, retry, cancel, reschedule, with every message and status."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.api_world import FOREIGN_IDS, T0, World, quoted


async def test_create_answers_201_with_the_id_and_the_same_id_for_a_dedup_hit(world: World) -> None:
    first = await world.enqueue("MAIL", uniqueKey="welcome-1")
    again = await world.enqueue("MAIL", uniqueKey="welcome-1")
    assert first.startswith("MAIL#0:")
    assert again == first


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "{not json",
            {
                "error": "body must be valid JSON",
                "line": 1,
                "column": 2,
                "detail": "Expecting property name enclosed in double quotes",
            },
        ),
        ('{"binding": "MAIL", "payload": NaN}', {"error": "body must be valid JSON"}),
        ("[1, 2]", {"error": "body must be an object"}),
        (
            '{"binding": "MAIL", "payload": {}, "maxAttempts": 0}',
            {"error": "maxAttempts must be at least 1", "field": "maxAttempts", "rule": "must be at least 1"},
        ),
        ('{"payload": {}}', {"error": "binding is required", "field": "binding", "rule": "is required"}),
        ('{"binding": "MAIL"}', {"error": "payload is required", "field": "payload", "rule": "is required"}),
        (
            '{"binding": "Nope", "payload": 1}',
            {
                "error": "binding is not a registered performer: Nope",
                "field": "binding",
                "rule": "is not a registered performer: Nope",
            },
        ),
        (
            '{"binding": "MAIL", "payload": 1, "color": "red"}',
            {"error": "color is not an enqueue option", "field": "color", "rule": "is not an enqueue option"},
        ),
    ],
)
async def test_create_refuses_bad_bodies_naming_the_field(
    world: World, body: str, expected: dict[str, str]
) -> None:
    assert await world.request("POST", "/api/jobs", body) == (400, expected)


async def test_bulk_enqueue_answers_ids_in_input_order_and_refuses_without_items(world: World) -> None:
    items = [{"binding": "MAIL", "payload": i} for i in range(3)] + [
        {"binding": "SMS", "payload": 9, "partitionKey": "k"}
    ]
    status, body = await world.request("POST", "/api/jobs/bulk-enqueue", {"items": items})
    assert status == 201
    assert [i.split("#")[0] for i in body["ids"]] == ["MAIL", "MAIL", "MAIL", "SMS"]
    assert await world.request("POST", "/api/jobs/bulk-enqueue", {}) == (
        400,
        {"error": "items is required", "field": "items", "rule": "is required"},
    )
    status, body = await world.request("POST", "/api/jobs/bulk-enqueue", {"items": [{"binding": "MAIL"}]})
    assert (status, body["field"]) == (400, "items[0].payload")


async def test_detail_comes_from_the_shard_with_the_original_keys_and_ours(world: World) -> None:
    job_id = await world.enqueue("MAIL", priority=4, concurrencyKey="user-1")
    status, body = await world.request("GET", f"/api/jobs/{quoted(job_id)}")
    assert status == 200
    job = body["job"]
    assert (job["id"], job["state"], job["priority"], job["concurrency_key"]) == (
        job_id,
        "SCHEDULED",
        4,
        "user-1",
    )
    assert (job["run_after"], job["cancel_requested"], job["attempts_log"]) == (T0, False, [])


async def test_detail_falls_back_to_the_read_model_once_the_shard_swept_the_job(world: World) -> None:
    job_id = await world.enqueue("MAIL")
    await world.request("POST", f"/api/jobs/{quoted(job_id)}/cancel")
    await world.tick()  # projects CANCELLED into the read model
    world.clock.advance(10 * 60_000)  # past sweep_after_ms (5 min)
    await world.tick()
    assert world.shard("MAIL#0").host.engine("MAIL#0").get(job_id) is None  # type: ignore[union-attr]
    status, body = await world.request("GET", f"/api/jobs/{quoted(job_id)}")
    assert (status, body["job"]["state"], body["job"]["timeout_ms"]) == (200, "CANCELLED", None)


async def test_detail_answers_404_for_a_malformed_or_unknown_id(world: World) -> None:
    status, body = await world.request("GET", "/api/jobs/not-an-id")  # ADR-0059
    assert (status, body["error"]) == (404, "not found")
    assert body["detail"].startswith("'not-an-id' is not a whole job id")  # with a hint since issue 26
    assert await world.request("GET", f"/api/jobs/{quoted('MAIL#0:missing')}") == (
        404,
        {"error": "not found", "detail": "no job has the id 'MAIL#0:missing'"},
    )


async def test_retry_moves_a_failed_job_back_and_refuses_other_states(world: World) -> None:
    job_id = await world.enqueue("MAIL", maxAttempts=1)
    path = f"/api/jobs/{quoted(job_id)}/retry"
    assert await world.request("POST", path) == (
        409,
        {"ok": False, "reason": "invalid-state", "error": "not allowed in the current state"},
    )
    await world.fail(job_id)
    assert await world.request("POST", path) == (200, {"ok": True})
    assert (await world.request("GET", f"/api/jobs/{quoted(job_id)}"))[1]["job"]["state"] == "SCHEDULED"
    # An id no job ever had is not found (issue 26); 410 "gone" is for a job swept after retention
    # (tests/api/test_newcomer_api.py).
    never = {"error": "not found", "detail": "no job has the id 'MAIL#0:never'"}
    assert await world.request("POST", f"/api/jobs/{quoted('MAIL#0:never')}/retry") == (404, never)
    assert await world.request("POST", "/api/jobs/MAIL%230/retry") == (400, {"error": "invalid job id"})


async def test_cancel_is_immediate_when_scheduled_and_a_request_when_dispatched(world: World) -> None:
    waiting = await world.enqueue("MAIL")
    assert await world.request("POST", f"/api/jobs/{quoted(waiting)}/cancel") == (
        200,
        {"ok": True, "requested": False, "cancelled": True},
    )
    assert (await world.request("POST", f"/api/jobs/{quoted(waiting)}/cancel"))[0] == 409
    running = await world.enqueue("MAIL")
    await world.tick()  # dispatched: QUEUED
    assert await world.request("POST", f"/api/jobs/{quoted(running)}/cancel") == (
        200,
        {"ok": True, "requested": True, "cancelled": False},
    )
    job = (await world.request("GET", f"/api/jobs/{quoted(running)}"))[1]["job"]
    assert (job["state"], job["cancel_requested"]) == ("QUEUED", True)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("nope", "body must be valid JSON"),
        ('"x"', "body must be an object"),
        ('{"runAt": "soon"}', "runAt must be a number"),
        ('{"delayMs": true}', "delayMs must be a number"),
        ('{"runAt": 1, "priority": "high"}', "priority must be a number"),
        ('{"runAt": 1, "delayMs": 2}', "runAt and delayMs are mutually exclusive"),
        ("{}", "runAt or delayMs is required"),
        ('{"delayMs": -1}', "delayMs must not be negative"),
    ],
)
async def test_reschedule_refuses_bad_bodies_with_the_original_messages(
    world: World, body: str, message: str
) -> None:
    job_id = await world.enqueue("MAIL")
    status, answer = await world.request("POST", f"/api/jobs/{quoted(job_id)}/reschedule", body)
    where = ("line", "column", "detail")  # where text that is not JSON broke (issue 26)
    assert (status, {k: v for k, v in answer.items() if k not in where}) == (400, {"error": message})


async def test_reschedule_moves_run_after_and_priority_and_refuses_when_not_scheduled(world: World) -> None:
    job_id = await world.enqueue("MAIL")
    path = f"/api/jobs/{quoted(job_id)}/reschedule"
    assert await world.request("POST", path, {"delayMs": 5000, "priority": 7}) == (200, {"ok": True})
    job = (await world.request("GET", f"/api/jobs/{quoted(job_id)}"))[1]["job"]
    assert (job["run_after"], job["priority"]) == (T0 + 5000, 7)
    assert await world.request("POST", path, {"runAt": T0 - 1}) == (200, {"ok": True})
    await world.tick()
    assert (await world.request("POST", path, {"runAt": T0}))[0] == 409
    assert (await world.request("POST", f"/api/jobs/{quoted('MAIL#0:gone')}/reschedule", {"runAt": 1}))[
        0
    ] == 404  # no job ever had this id (issue 26)


@pytest.mark.parametrize("job_id", FOREIGN_IDS)
@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("GET", "", None),
        ("GET", "/explain", None),
        ("POST", "/retry", None),
        ("POST", "/cancel", None),
        ("POST", "/reschedule", {"delayMs": 1}),
    ],
)
async def test_an_id_of_a_binding_or_shard_we_lack_is_404_without_making_an_object(
    world: World, job_id: str, method: str, suffix: str, body: Any
) -> None:
    status, answer = await world.request(method, f"/api/jobs/{quoted(job_id)}{suffix}", body)
    # Reads add a "detail" since issue 26; the status and the original's text are as before.
    assert (status, answer["error"]) == (404, "not found")
    assert world.env.JOB_SHARD.objects == {}
