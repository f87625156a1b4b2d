"""REST routes of schedules, and ``define_tsumugi(schedules=...)`` validation."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.api_world import T0, SteppedClock, World
from tests.support.derived_ids import readable
from tsumugi_scheduler.definition import DefinitionError, define_tsumugi

BODY = {
    "name": "nightly",
    "binding": "MAIL",
    "payload": {"k": 1},
    "cron": "0 3 * * *",
    "timezone": "Asia/Tokyo",
}


@pytest.fixture
async def code_world(tmp_path: Path, clock: SteppedClock) -> AsyncIterator[World]:
    built = World(
        tmp_path,
        clock,
        define_tsumugi(
            performers=["MAIL", "SMS", "Notify"],
            bindings={"SMS": {"shards": 2}},
            schedules={"code-one": {"binding": "Notify", "payload": None, "every_ms": 60_000}},
        ),
    )
    yield built
    await built.aclose()


async def test_list_is_an_empty_list_when_none_exist(world: World) -> None:
    assert await world.request("GET", "/api/schedules") == (200, {"schedules": []})


async def test_without_a_scheduler_binding_routes_answer_501(world: World) -> None:
    del world.env.SCHEDULER
    for method, path in (("GET", "/api/schedules"), ("POST", "/api/schedules/x/pause")):
        assert await world.request(method, path) == (501, {"error": "schedules are not available"})


async def test_create_read_change_pause_resume_trigger_delete(world: World) -> None:
    status, created = await world.request("POST", "/api/schedules", BODY)
    assert status == 201
    schedule = created["schedule"]
    assert (schedule["description"], schedule["source"], schedule["next_occurrences"][:2]) == (
        "every day at 03:00, Asia/Tokyo",
        "runtime",
        [T0 + 18 * 3_600_000, T0 + 42 * 3_600_000],
    )
    assert (await world.request("POST", "/api/schedules", BODY))[0] == 409
    status, one = await world.request("GET", "/api/schedules/nightly")
    assert (status, one["name"], one["timezone"]) == (200, "nightly", "Asia/Tokyo")
    status, changed = await world.request("PATCH", "/api/schedules/nightly", {"overlap": "overlap"})
    assert (status, changed["schedule"]["overlap"]) == (200, "overlap")
    status, paused = await world.request("POST", "/api/schedules/nightly/pause")
    assert (status, paused["schedule"]["paused"], paused["schedule"]["next_occurrences"]) == (200, True, [])
    assert (await world.request("POST", "/api/schedules/nightly/resume"))[1]["schedule"]["paused"] is False
    status, triggered = await world.request("POST", "/api/schedules/nightly/trigger")
    assert (status, readable(triggered["job_id"])) == (200, f"MAIL#0:nightly-now-{T0}")
    assert (await world.request("GET", f"/api/jobs/{triggered['job_id'].replace('#', '%23')}"))[0] == 200
    assert await world.request("DELETE", "/api/schedules/nightly") == (200, {"ok": True, "name": "nightly"})
    assert await world.request("GET", "/api/schedules/nightly") == (
        404,
        {"error": "schedule not found: nightly"},
    )
    assert await world.request("GET", "/api/schedules") == (200, {"schedules": []})


async def test_invalid_bodies_answer_400_naming_the_field_as_sent(world: World) -> None:
    status, body = await world.request("POST", "/api/schedules", {**BODY, "cron": None, "everyMs": 1000})
    assert (status, body) == (
        400,
        {
            "error": "timezone applies to cron only: every_ms is a period in real time",
            "field": "timezone",
            "rule": "applies to cron only: every_ms is a period in real time",
        },
    )
    status, body = await world.request(
        "POST", "/api/schedules", {**BODY, "timezone": None, "cron": None, "everyMs": 10}
    )
    assert (status, body["field"]) == (400, "everyMs")
    status, body = await world.request("POST", "/api/schedules", {**BODY, "delayMs": 5})
    assert (status, body["field"]) == (400, "delayMs")
    status, body = await world.request("POST", "/api/schedules", {**BODY, "backoff": {"kind": "fixed"}})
    assert (status, body["field"]) == (400, "backoff.delayMs")
    await world.request("POST", "/api/schedules", BODY)
    status, body = await world.request("PATCH", "/api/schedules/nightly", {"timezone": "Europe/Paris"})
    assert (status, body["field"]) == (400, "timezone")
    status, body = await world.request("PATCH", "/api/schedules/nightly", {})
    assert (status, body["field"]) == (400, "body")


async def test_code_schedules_are_listed_and_read_only(code_world: World) -> None:
    status, listing = await code_world.request("GET", "/api/schedules")
    assert (status, [(s["name"], s["source"]) for s in listing["schedules"]]) == (200, [("code-one", "code")])
    status, body = await code_world.request("DELETE", "/api/schedules/code-one")
    assert (status, body["error"].startswith("schedule code-one is defined in code and is read-only")) == (
        409,
        True,
    )
    assert (await code_world.request("POST", "/api/schedules/code-one/pause"))[0] == 200


@pytest.mark.parametrize(
    ("schedules", "message"),
    [
        ({"a b": {}}, "schedules key must match ^[A-Za-z0-9_-]+$ and be at most 64 characters, got 'a b'"),
        ({"s": 3}, "schedules.s must be a mapping of options"),
        ({"s": {"binding": "MAIL", "payload": 1}}, "schedules.s.every_ms or cron: exactly one is required"),
        (
            {"s": {"binding": "MAIL", "payload": 1, "every_ms": 10}},
            "schedules.s.every_ms must be an integer of at least 1000, got 10",
        ),
        (
            {"s": {"binding": "MAIL", "payload": 1, "cron": "0 0 30 2 *"}},
            "schedules.s.cron is invalid: no occurrence within 1830 days",
        ),
        (
            {"s": {"binding": "MAIL", "payload": 1, "cron": "0 3 * * *", "timezone": "Asia/Tokio"}},
            "schedules.s.timezone must be an IANA time zone such as Asia/Tokyo, got 'Asia/Tokio'",
        ),
        (
            {"s": {"binding": "Other", "payload": 1, "every_ms": 1000}},
            "schedules.s.binding is not a registered performer: Other",
        ),
        (
            {"s": {"binding": "SMS", "payload": 1, "every_ms": 1000}},
            "schedules.s.partition_key is required: SMS is split into 2 shards",
        ),
        ({"s": {"binding": "MAIL", "every_ms": 1000}}, "schedules.s.payload is required"),
        (
            {"s": {"binding": "MAIL", "payload": 1, "every_ms": 1000, "run_at": 5}},
            "schedules.s.run_at is not allowed in a schedule: the occurrence sets the job's id and time",
        ),
        (
            {"s": {"binding": "MAIL", "payload": 1, "every_ms": 1000, "overlap": "queue"}},
            "schedules.s.overlap must be 'skip' or 'overlap', got 'queue'",
        ),
        (
            {"s": {"binding": "MAIL", "payload": 1, "every_ms": 1000, "colour": "red"}},
            "schedules.s.colour is not a schedule option",
        ),
    ],
)
def test_define_tsumugi_refuses_each_rule_naming_the_option(schedules: dict[str, Any], message: str) -> None:
    with pytest.raises(DefinitionError) as caught:
        define_tsumugi(performers=["MAIL", "SMS"], bindings={"SMS": {"shards": 2}}, schedules=schedules)
    assert str(caught.value) == message


def test_schedule_shards_must_be_a_positive_integer() -> None:
    with pytest.raises(DefinitionError, match="schedule_shards must be an integer of at least 1, got 0"):
        define_tsumugi(schedule_shards=0)
