"""Schemathesis over the runs routes of a scheduler with flows registered: no 5xx, and every answer (its code and
body) fits the document. The general fuzz run (test_openapi_fuzz.py) has no flows, so these routes answer 501
there."""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.core.parameters import ParameterLocation

from tests.api.api_world import T0, TOKEN, SteppedClock, World, with_env
from tests.support.clock import installed
from tsumugi_examples.greetings import greetings
from tsumugi_scheduler.api import OPERATIONS, build_document
from tsumugi_scheduler.definition import define_tsumugi

load_all_checks()
DEFINITION = define_tsumugi(performers=["Hello", "ListNames", "ReportGreetings"], flows=[greetings])
RUN_OPERATIONS = [op for op in OPERATIONS if op.tag == "runs"]
schema = schemathesis.openapi.from_dict(
    build_document(
        RUN_OPERATIONS, flows=["greetings"], flow_inputs={"greetings": greetings.spec.input_schema}
    )
)
WORLD: list[World] = []


@pytest.fixture(scope="module")
def runs_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with installed(SteppedClock(T0)) as clock:
        world = World(tmp_path_factory.mktemp("runs-fuzz"), clock, DEFINITION)

        async def seed() -> None:
            for local in ("a", "b"):
                await world.request(
                    "POST", "/api/runs", {"flow": "greetings", "input": {"names": [local]}, "id": local}
                )

        asyncio.run(seed())
        WORLD[:] = [world]
        yield world
        asyncio.run(world.aclose())


async def _asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await with_env(WORLD[0].app, WORLD[0].env)(scope, receive, send)


schema.app = _asgi


@schema.auth()
class _BearerToken:
    def get(self, case: Any, context: Any) -> str:
        return TOKEN

    def set(self, case: Any, data: str, context: Any) -> None:
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
def test_the_run_routes_answer_inside_the_document(case: Any, runs_world: World) -> None:
    negative_path = case.meta is not None and case.meta.is_negative_at(ParameterLocation.PATH)
    for name in list(case.path_parameters or {}):
        if (
            not negative_path
            and name == "id"
            and zlib.crc32(repr(case.path_parameters[name]).encode()) % 3 == 0
        ):
            case.path_parameters[name] = (
                "greetings%3Aa"  # a run that exists, so 200 / 409 answers are fuzzed too
            )
    response = case.call()
    checks = CHECKS.get_all()
    if response.status_code == 410:  # a run id nobody started is gone (declared): not a refusal of its syntax
        checks = [c for c in checks if c.__name__ != "positive_data_acceptance"]
    case.validate_response(response, checks=checks)
