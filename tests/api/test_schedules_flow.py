"""Flow schedules on the Scheduler Durable Object (virtual clock): each occurrence starts one run of the flow.

The Run objects are real `RunHost`s over DO SQL (``env.RUN`` of `api_world`); their alarms are not run, so a
started run stays RUNNING until a test ends it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from tests.api.api_world import T0, TOKEN, RunObject, SchedulerObject, SteppedClock, World, with_env
from tests.support.derived_ids import readable
from tsumugi_client import AsyncTsumugiClient, ScheduleError
from tsumugi_core.flow_spec import MAX_DEADLINE_MS
from tsumugi_examples.greetings import greetings
from tsumugi_scheduler.definition import DefinitionError, TsumugiDefinition, define_tsumugi

MIN = 60_000
PERFORMERS = ["Hello", "ListNames", "ReportGreetings", "NotifyFailure", "NotifySettled", "MAIL"]


def definition(schedules: dict[str, Any] | None = None) -> TsumugiDefinition:
    return define_tsumugi(performers=PERFORMERS, flows=[greetings], schedules=schedules)


def code(**extra: Any) -> dict[str, Any]:
    return {
        "greet": {"flow": "greetings", "input": lambda at: {"names": [f"at-{at}"]}, "every_ms": MIN, **extra}
    }


@pytest.fixture
async def world(tmp_path: Path, clock: SteppedClock) -> AsyncIterator[World]:
    built = World(tmp_path, clock, definition(code()))
    yield built
    await built.aclose()


def scheduler(world: World) -> SchedulerObject:
    return world.env.SCHEDULER.getByName("scheduler#0")


def runs(world: World) -> dict[str, RunObject]:
    return {readable(run_id): run for run_id, run in world.env.RUN.objects.items()}


async def fire_at(world: World, at: int) -> None:
    world.clock.set(at)
    await scheduler(world).host.alarm()


async def view(world: World, name: str = "greet") -> dict[str, Any]:
    found = await scheduler(world).host.get(0, name)
    assert found is not None
    return found


def end_run(run: RunObject) -> None:
    run.sql.exec("UPDATE run SET state = 'SUCCEEDED'")


class TestFiring:
    async def test_each_occurrence_starts_one_run_with_its_deterministic_id_and_input(
        self, world: World
    ) -> None:
        await scheduler(world).host.sync(0)
        await fire_at(world, T0 + MIN)
        first = f"greetings:greet-{T0 + MIN}"
        assert list(runs(world)) == [first]
        run = runs(world)[first].host.engine.run()
        assert run is not None
        assert (run.flow, run.state, run.input) == (
            "greetings",
            "RUNNING",
            f'{{"names":["at-{T0 + MIN}"]}}',
        )
        greet = await view(world)
        assert (
            greet["kind"],
            greet["target"],
            greet["flow"],
            readable(greet["last_run_id"]),
            greet["last_job_id"],
        ) == (
            "flow",
            "greetings",
            "greetings",
            first,
            None,
        )
        end_run(runs(world)[first])
        await fire_at(world, T0 + 2 * MIN)
        assert list(runs(world)) == [first, f"greetings:greet-{T0 + 2 * MIN}"]

    async def test_an_alarm_run_twice_starts_the_run_once(self, world: World) -> None:
        await scheduler(world).host.sync(0)
        world.clock.set(T0 + MIN)
        fired = f"greetings:greet-{T0 + MIN}"
        # The same occurrence fired by two alarms (the row recorded after the first is set back, as when the
        # object restarts before its write): the Run object is asked twice and creates one run.
        await scheduler(world).host.alarm()
        scheduler(world).sql.exec("UPDATE schedule SET next_run_at = ?, last_run_id = NULL", T0 + MIN)
        await scheduler(world).host.alarm()
        assert list(runs(world)) == [fired]
        assert runs(world)[fired].starts == 2
        assert (
            runs(world)[fired].host.engine.store.sql.exec("SELECT count(*) AS n FROM run").toArray()[0]["n"]
            == 1
        )

    async def test_overlap_skip_skips_while_the_previous_run_is_running(self, world: World) -> None:
        await scheduler(world).host.sync(0)
        await fire_at(world, T0 + MIN)
        await fire_at(world, T0 + 2 * MIN)
        first = f"greetings:greet-{T0 + MIN}"
        assert list(runs(world)) == [first]
        greet = await view(world)
        assert (greet["skipped_count"], readable(greet["last_run_id"]), greet["next_run_at"]) == (
            1,
            first,
            T0 + 3 * MIN,
        )
        end_run(runs(world)[first])
        await fire_at(world, T0 + 3 * MIN)
        assert list(runs(world)) == [first, f"greetings:greet-{T0 + 3 * MIN}"]
        assert (await view(world))["skipped_count"] == 1

    async def test_overlap_overlap_starts_while_the_previous_run_is_running(
        self, tmp_path: Path, clock: SteppedClock
    ) -> None:
        built = World(tmp_path, clock, definition(code(overlap="overlap")))
        try:
            await scheduler(built).host.sync(0)
            await fire_at(built, T0 + MIN)
            await fire_at(built, T0 + 2 * MIN)
            assert list(runs(built)) == [f"greetings:greet-{T0 + MIN}", f"greetings:greet-{T0 + 2 * MIN}"]
            assert (await view(built))["skipped_count"] == 0
        finally:
            await built.aclose()

    async def test_trigger_starts_a_run_now_and_records_it(self, world: World) -> None:
        world.clock.set(T0 + 5)
        answer = await scheduler(world).host.trigger(0, "greet")
        assert answer["ok"] is True
        assert readable(answer["run_id"]) == f"greetings:greet-now-{T0 + 5}"
        assert list(runs(world)) == [readable(answer["run_id"])]
        assert answer["schedule"]["last_run_id"] == answer["run_id"]


class TestValidation:
    @pytest.mark.parametrize(
        ("options", "field", "rule"),
        [
            ({"binding": "MAIL", "payload": {}}, "schedules.greet.flow", "cannot be set with binding"),
            ({"flow": None}, "schedules.greet.flow", "must be a flow name"),
            ({"flow": "nope"}, "schedules.greet.flow", "is not a registered flow: nope"),
            ({"max_attempts": 3}, "schedules.greet.max_attempts", "is not allowed with a flow"),
            ({"payload": {}}, "schedules.greet.payload", "is not allowed with a flow"),
            ({"deadline_ms": 0}, "schedules.greet.deadline_ms", "must be a positive integer"),
        ],
    )
    def test_a_bad_flow_schedule_is_refused_naming_the_field(
        self, options: dict[str, Any], field: str, rule: str
    ) -> None:
        with pytest.raises(DefinitionError) as caught:
            definition(code(**options))
        assert caught.value.args[0].startswith(f"{field} {rule}") or f"{field} {rule}" in str(caught.value)

    def test_a_schedule_without_binding_or_flow_is_refused(self) -> None:
        with pytest.raises(DefinitionError, match=r"schedules\.x\.binding or flow is required"):
            definition({"x": {"payload": {}, "every_ms": MIN}})

    def test_input_belongs_to_a_flow(self) -> None:
        with pytest.raises(DefinitionError, match=r"schedules\.x\.input is allowed only with a flow"):
            definition({"x": {"binding": "MAIL", "payload": {}, "input": {}, "every_ms": MIN}})


class TestRest:
    async def test_post_creates_a_flow_schedule_that_fires_a_run(self, world: World) -> None:
        body = {
            "name": "nightly",
            "flow": "greetings",
            "input": {"names": ["a"]},
            "everyMs": MIN,
            "deadlineMs": 5_000,
        }
        status, created = await world.request("POST", "/api/schedules", body)
        assert status == 201, created
        created = created["schedule"]
        assert (created["kind"], created["flow"], created["input"], created["deadline_ms"]) == (
            "flow",
            "greetings",
            {"names": ["a"]},
            5_000,
        )
        await fire_at(world, T0 + MIN)
        run = runs(world)[f"greetings:nightly-{T0 + MIN}"].host.engine.run()
        assert run is not None
        assert (run.input, run.deadline_ms) == ('{"names":["a"]}', 5_000)

    @pytest.mark.parametrize(
        ("body", "field"),
        [
            ({"binding": "MAIL", "flow": "greetings", "input": 1}, "flow"),
            ({"flow": "nope", "input": 1}, "flow"),
            ({"flow": "greetings", "input": 1, "maxAttempts": 2}, "maxAttempts"),
            ({"flow": "greetings"}, "input"),
        ],
    )
    async def test_post_refuses_a_bad_flow_schedule_naming_the_field(
        self, world: World, body: dict[str, Any], field: str
    ) -> None:
        status, answer = await world.request(
            "POST", "/api/schedules", {"name": "bad", "everyMs": MIN, **body}
        )
        assert status in (400, 422), answer
        assert field in str(answer)


class TestDocument:
    async def test_the_document_allows_a_flow_target_or_a_binding_target_never_both(
        self, world: World
    ) -> None:
        status, document = await world.request("GET", "/api/openapi.json")
        assert status == 200
        schema = {"$ref": "#/components/schemas/ScheduleCreateBody", "components": document["components"]}
        check = jsonschema.Draft202012Validator(schema)
        timing = {"name": "n", "everyMs": MIN}
        assert check.is_valid({**timing, "flow": "greetings", "input": {"names": []}, "deadlineMs": 10})
        assert check.is_valid({**timing, "binding": "MAIL", "payload": None})
        assert not check.is_valid({**timing, "flow": "nope", "input": 1})
        assert not check.is_valid(
            {**timing, "flow": "greetings", "input": 1, "binding": "MAIL", "payload": 1}
        )
        assert not check.is_valid({**timing, "flow": "greetings", "input": 1, "maxAttempts": 2})
        assert not check.is_valid({**timing, "binding": "MAIL", "payload": 1, "input": 1})
        assert not check.is_valid(timing)


class TestClient:
    async def test_the_client_creates_and_triggers_a_flow_schedule(self, world: World) -> None:
        transport = httpx.ASGITransport(app=with_env(world.app, world.env))
        async with httpx.AsyncClient(transport=transport) as http:
            schedules = AsyncTsumugiClient("http://scheduler.test/", token=TOKEN, http_client=http)
            made = await schedules.create_schedule(
                "hourly", flow="greetings", input={"names": ["h"]}, cron="0 * * * *", deadline_ms=60_000
            )
            assert (made["kind"], made["input"], made["deadline_ms"]) == ("flow", {"names": ["h"]}, 60_000)
            assert readable(await schedules.trigger_schedule("hourly")) == f"greetings:hourly-now-{T0}"
            with pytest.raises(ScheduleError) as caught:
                await schedules.create_schedule("bad", flow="greetings", input=1, every_ms=MIN, priority=3)
        assert (caught.value.status, caught.value.field) == (400, "priority")
        assert list(runs(world)) == [f"greetings:hourly-now-{T0}"]


async def test_a_job_field_for_a_flow_schedule_is_a_conflict_with_it(world: World) -> None:
    # The body alone is valid for PATCH; it conflicts with the stored flow schedule: 409 (issue 25).
    body = {"name": "nightly", "flow": "greetings", "input": {"names": ["a"]}, "everyMs": 60_000}
    assert (await world.request("POST", "/api/schedules", body))[0] == 201
    rule = "cannot be set on a flow schedule: a schedule targets exactly one of them"
    moved = await world.request("PATCH", "/api/schedules/nightly", {"binding": "MAIL"})
    assert moved == (409, {"error": f"binding {rule}", "field": "binding", "rule": rule})
    rule = "is not allowed with a flow: send the run's input as input"
    given = await world.request("PATCH", "/api/schedules/nightly", {"payload": {}})
    assert given == (409, {"error": f"payload {rule}", "field": "payload", "rule": rule})


@pytest.mark.parametrize("option", ["partitionKey", "maxAttempts", "priority"])
async def test_a_job_option_for_a_stored_flow_schedule_is_a_conflict_with_it(
    world: World, option: str
) -> None:
    # Found by the live schemathesis run: PATCH {"partitionKey": ..., "cron": ...} is valid by the document
    # (a body alone cannot know the schedule is a flow's) and answered 400; what it conflicts with is stored.
    body = {"name": "nightly", "flow": "greetings", "input": {"names": ["a"]}, "everyMs": 60_000}
    assert (await world.request("POST", "/api/schedules", body))[0] == 201
    rule = "is not allowed with a flow: the flow's nodes set their options"
    changed = await world.request(
        "PATCH",
        "/api/schedules/nightly",
        {option: "p" if option == "partitionKey" else 2, "cron": "9 */5 18 11 *"},
    )
    assert changed == (409, {"error": f"{option} {rule}", "field": option, "rule": rule})
    assert (await view(world, "nightly"))["cron"] is None  # nothing changed


async def test_a_deadline_longer_than_a_run_takes_is_refused_at_definition(world: World) -> None:
    # Found by the live schemathesis run: a schedule stored deadlineMs 1340716791695, which the Run object
    # refuses at every start (its trigger answered 502). The bound is the run's (MAX_DEADLINE_MS), and the
    # document says it.
    body = {"name": "nightly", "flow": "greetings", "input": {"names": ["a"]}, "everyMs": 60_000}
    rule = f"must be at most {MAX_DEADLINE_MS}, got 1340716791695"
    refused = await world.request("POST", "/api/schedules", {**body, "deadlineMs": 1_340_716_791_695})
    assert refused == (400, {"error": f"deadlineMs {rule}", "field": "deadlineMs", "rule": rule})
    assert await world.request("GET", "/api/schedules/nightly") == (
        404,
        {"error": "schedule not found: nightly"},
    )
    created = await world.request("POST", "/api/schedules", {**body, "deadlineMs": MAX_DEADLINE_MS})
    assert created[0] == 201, created
    status, triggered = await world.request("POST", "/api/schedules/nightly/trigger")
    assert (status, readable(triggered["run_id"])) == (200, f"greetings:nightly-now-{T0}")
    _, document = await world.request("GET", "/api/openapi.json")
    deadline = document["components"]["schemas"]["ScheduleCreateBody"]["properties"]["deadlineMs"]
    assert deadline["maximum"] == MAX_DEADLINE_MS
    with pytest.raises(
        DefinitionError, match=rf"schedules\.greet\.deadline_ms must be at most {MAX_DEADLINE_MS}"
    ):
        definition(code(deadline_ms=MAX_DEADLINE_MS + 1))


async def test_an_input_function_answering_what_a_run_could_not_hold_records_the_error_and_starts_nothing(
    tmp_path: Path, clock: SteppedClock
) -> None:
    schedules = {
        "greet": {"flow": "greetings", "input": lambda at: {"names": ["a"], "n": 2**64}, "every_ms": MIN}
    }
    built = World(tmp_path, clock, definition(schedules))
    try:
        await scheduler(built).host.sync(0)
        await fire_at(built, T0 + MIN)
        greet = await view(built)
        assert runs(built) == {}
        assert greet["next_run_at"] == T0 + 2 * MIN
        assert greet["last_error"].startswith("InvalidScheduleError: input.n must be an integer between"), (
            greet
        )
        assert greet["last_error"].endswith("(the input function of schedule greet answered it)")
    finally:
        await built.aclose()


class TestInputRules:
    """A flow schedule's input keeps every rule of a run's input (ADR-0175), as each occurrence's start would."""

    async def test_a_stored_input_of_the_wrong_type_or_size_is_refused_naming_the_field(
        self, world: World
    ) -> None:
        refused = {"names": "64"}
        assert (await world.request("POST", "/api/runs", {"flow": "greetings", "input": refused}))[0] == 400
        body = {"name": "typed", "flow": "greetings", "input": refused, "everyMs": MIN}
        status, answer = await world.request("POST", "/api/schedules", body)
        assert (status, answer["field"]) == (400, "input.names")
        body = {"name": "large", "flow": "greetings", "input": {"names": ["x" * 110_000]}, "everyMs": MIN}
        status, answer = await world.request("POST", "/api/schedules", body)
        assert (status, answer["field"]) == (400, "input")
        assert answer["error"].startswith("input must be at most 102400 bytes as JSON")
        status, listed = await world.request("GET", "/api/schedules")
        assert [s["name"] for s in listed["schedules"]] == ["greet"]  # nothing stored

    def test_a_code_schedules_input_of_the_wrong_type_is_a_definition_error(self) -> None:
        with pytest.raises(DefinitionError) as caught:
            definition({"bad": {"flow": "greetings", "input": {"names": "64"}, "every_ms": MIN}})
        assert caught.value.field == "schedules.bad.input.names"

    async def test_an_input_function_answering_the_wrong_type_records_the_error_and_starts_nothing(
        self, tmp_path: Path, clock: SteppedClock
    ) -> None:
        built = World(
            tmp_path,
            clock,
            definition({"greet": {"flow": "greetings", "input": lambda at: {"names": at}, "every_ms": MIN}}),
        )
        try:
            await scheduler(built).host.sync(0)
            await fire_at(built, T0 + MIN)
            greet = await view(built)
            assert runs(built) == {}
            assert greet["last_error"].startswith("InvalidScheduleError: input.names must be an array")
            assert greet["last_error"].endswith("(the input function of schedule greet answered it)")
        finally:
            await built.aclose()
