"""The OpenAPI document is one schemathesis reads whole (issue 25 item 11).

With eight bindings, the enqueue item's schema used to be an ``anyOf`` per binding multiplied by its rules
across fields: schemathesis stopped with "Schema Error" on ``POST /api/jobs`` and ``/api/jobs/bulk-enqueue``,
so the two operations that matter most were never fuzzed. And the served document now carries each
performer's payload type, so a schedule's generated payload fits it.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.generation import GenerationMode
from test_payload_schema import typed  # noqa: F401 - the fixture: Order publishes its payload type

from tests.api.api_world import World
from tsumugi_scheduler.api import OPERATIONS, build_document

_NAMES = ("Boom", "Hello", "ListNames", "NotifyFailure", "NotifySettled", "Report", "Mail")
EIGHT: dict[str, int] = {**dict.fromkeys(_NAMES, 1), "Sharded": 2}


def _operation(document: dict[str, Any], operation_id: str) -> Any:
    for result in schemathesis.openapi.from_dict(document).get_all_operations():
        operation = result.ok()  # pyright: ignore[reportAttributeAccessIssue] - an Err raises, failing the test
        if operation.definition.raw["operationId"] == operation_id:
            return operation
    raise AssertionError(operation_id)


@pytest.mark.parametrize("operation_id", ["createJob", "bulkEnqueueJobs", "createSchedule"])
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_schemathesis_generates_every_body_of_a_scheduler_with_eight_bindings(
    operation_id: str, mode: GenerationMode
) -> None:
    operation = _operation(build_document(OPERATIONS, bindings=EIGHT, flows=("f",)), operation_id)
    seen: list[Any] = []

    @given(operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=5,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
        database=None,
    )
    def generate(case: Any) -> None:
        seen.append(case.body)

    generate()
    assert len(seen) == 5


async def test_the_served_document_names_each_performers_payload_type(
    typed: World,  # noqa: F811 - the imported fixture
) -> None:
    status, document = await typed.request("GET", "/api/openapi.json", headers={"authorization": ""})
    assert status == 200
    components = document["components"]["schemas"]
    order = {"$ref": "#/components/schemas/Order.Order"}  # the performer's $defs, renamed under its binding
    assert components["Order.Order"]["required"] == ["name", "address"]
    assert components["Order.Address"]["properties"]["city"] == {"type": "string"}
    assert components["EnqueueBody"]["x-tsumugi-payload-types"]["Order"] == order
    alternatives = components["ScheduleCreateBody"]["allOf"][-1]["anyOf"]
    by_binding = {
        a["properties"]["binding"].get("const"): a["properties"].get("payload") for a in alternatives
    }
    assert by_binding["Order"] == order
    assert by_binding["Any"] == {"$ref": "#/components/schemas/JsonValue"}  # a performer typed Any


def test_a_run_input_is_documented_as_the_route_takes_it_in_every_field() -> None:
    # POST /api/runs refuses an integer past JavaScript's safe range anywhere in the input; the runs-only
    # document (test_runs_fuzz.py) showed the extra fields of a typed input allowing one, and no JsonValue.
    flow_input = {
        "$ref": "#/$defs/In",
        "$defs": {"In": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}},
    }
    runs = [op for op in OPERATIONS if op.tag == "runs"]
    schemas = build_document(runs, flows=["f"], flow_inputs={"f": flow_input})["components"]["schemas"]
    json_value = {"$ref": "#/components/schemas/JsonValue"}
    assert "JsonValue" in schemas
    assert schemas["StartRunBody"]["properties"]["input"] == json_value
    typed_input = schemas["RunInput_f_In"]
    assert typed_input["additionalProperties"] == json_value
    assert typed_input["properties"]["n"] == {
        "type": "integer",
        "minimum": -(2**53 - 1),
        "maximum": 2**53 - 1,
    }
