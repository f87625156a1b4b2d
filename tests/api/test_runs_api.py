"""Runs over REST as users meet them (issue 24 item 12): readable at once after their start, their input
checked at start like a job's payload, and every code these routes answer declared in the OpenAPI document."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.api_world import SteppedClock, World, quoted
from tsumugi_examples.greetings import greetings
from tsumugi_scheduler.definition import define_tsumugi

PERFORMERS = ["Hello", "ListNames", "ReportGreetings"]


@pytest.fixture
async def world(tmp_path: Path, clock: SteppedClock) -> AsyncIterator[World]:
    built = World(tmp_path, clock, define_tsumugi(performers=PERFORMERS, flows=[greetings]))
    yield built
    await built.aclose()


async def test_a_run_is_readable_as_soon_as_its_start_answers(world: World) -> None:
    status, created = await world.request(
        "POST", "/api/runs", {"flow": "greetings", "input": {"names": ["a"]}}
    )
    assert status == 201, created
    status, found = await world.request("GET", f"/api/runs/{quoted(created['id'])}")
    assert status == 200, found
    assert (found["run"]["state"], [n["id"] for n in found["nodes"]]) == (
        "RUNNING",
        ["names", "hello", "report"],
    )
    status, listed = await world.request("GET", "/api/runs")
    assert [r["id"] for r in listed["runs"]] == [created["id"]]


@pytest.mark.parametrize(
    ("run_input", "field", "rule"),
    [
        ({"names": "64"}, "input.names", "must be an array, got a string"),
        ({"names": ["a", 5]}, "input.names[1]", "must be a string, got an integer"),
        ({}, "input.names", "is required"),
        ([1], "input", "must be an object, got an array"),
    ],
)
async def test_a_run_input_the_flows_type_refuses_is_a_400_naming_the_field_and_the_rule(
    world: World, run_input: Any, field: str, rule: str
) -> None:
    answer = await world.request("POST", "/api/runs", {"flow": "greetings", "input": run_input, "id": "bad"})
    assert answer == (400, {"error": f"{field} {rule}", "field": field, "rule": rule})
    assert world.env.RUN.objects == {}  # refused before any Run object is asked


async def test_every_code_the_run_routes_answer_is_declared(world: World) -> None:
    _, document = await world.request("GET", "/api/openapi.json")
    answers = [
        ("post", "/api/runs", await world.request("POST", "/api/runs", {"flow": "nope", "input": {}})),
        (
            "post",
            "/api/runs",
            await world.request("POST", "/api/runs", {"flow": "greetings", "input": {"names": 1}}),
        ),
        ("get", "/api/runs/{id}", await world.request("GET", f"/api/runs/{quoted('greetings:none')}")),
        (
            "post",
            "/api/runs/{id}/cancel",
            await world.request("POST", f"/api/runs/{quoted('greetings:none')}/cancel"),
        ),
        (
            "post",
            "/api/runs/{id}/retry",
            await world.request("POST", f"/api/runs/{quoted('greetings:none')}/retry"),
        ),
        ("post", "/api/runs/{id}/retry", await world.request("POST", "/api/runs/bad/retry")),
    ]
    undeclared = [
        (method, path, status)
        for method, path, (status, _) in answers
        if str(status) not in document["paths"][path][method]["responses"]
    ]
    assert undeclared == []
    assert [status for _, _, (status, _) in answers] == [400, 400, 404, 410, 410, 400]


async def test_a_failed_run_says_why_in_one_line(world: World) -> None:
    db = world.d1.connection
    db.execute(
        "INSERT INTO run (id, seq, flow, state, input, node_total, node_done, node_failed, created_at, "
        "updated_at) VALUES ('greetings:f', 1, 'greetings', 'FAILED', '{}', 3, 3, 1, 1, 2)"
    )
    for position, (node, state, error) in enumerate(
        [
            ("names", "COMPLETED", None),
            ("hello", "FAILED", "fan-out failed: boom\nTraceback ..."),
            ("report", "SKIPPED", None),
        ]
    ):
        db.execute(
            "INSERT INTO run_node (run_id, node_id, seq, binding, state, container, origin, after, error, "
            "position, created_at, updated_at) VALUES ('greetings:f', ?, 1, 'Hello', ?, 0, 'static', '[]', ?, "
            "?, 1, 2)",
            (node, state, error, position),
        )
    status, found = await world.request("GET", f"/api/runs/{quoted('greetings:f')}")
    assert (status, found["run"]["failure"]) == (200, "node hello failed: fan-out failed: boom")
    db.execute(
        "UPDATE run_node SET state = 'COMPLETED', error = NULL"
    )  # every node ended well: the deadline did it
    status, found = await world.request("GET", f"/api/runs/{quoted('greetings:f')}")
    assert found["run"]["failure"] == "the run's deadline passed before every node ended"
    db.execute("UPDATE run SET state = 'COMPLETED'")
    status, found = await world.request("GET", f"/api/runs/{quoted('greetings:f')}")
    assert found["run"]["failure"] is None
