"""Roles, driven from the route table (issue 30, ADR-0151): every route declares the least role that may call
it, and for each role every route answers 403 where the role falls short and 2xx where it suffices.

Each operation has a case here that makes, as the admin, what the call needs (a failed job to retry, a
schedule to pause) and answers the request; a route added to the table without a case fails
`test_every_route_declares_a_role_and_has_a_case`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import pytest

from tests.api.api_world import TOKEN, LocalMetrics, SteppedClock, World, quoted
from tsumugi_dev.analytics import AnalyticsStore
from tsumugi_examples.greetings import greetings
from tsumugi_scheduler.api import OPERATIONS, Operation
from tsumugi_scheduler.definition import define_tsumugi
from tsumugi_scheduler.identity import Role

TOKENS = {Role.VIEWER: "viewer-token", Role.OPERATOR: "operator-token", Role.ADMIN: TOKEN}
PERFORMERS = ["MAIL", "SMS", "Notify", "Hello", "ListNames", "ReportGreetings"]
SCHEDULE = {"name": "nightly", "binding": "MAIL", "payload": {}, "cron": "0 3 * * *"}
Request = tuple[str, str, Any]
Case = Callable[[World], Awaitable[Request]]


async def _job(world: World, **options: Any) -> str:
    return quoted(await world.enqueue("MAIL", **options))


async def _failed_job(world: World) -> str:
    job_id = await world.enqueue("MAIL", maxAttempts=1)
    await world.fail(job_id)
    return quoted(job_id)


async def _schedule(world: World) -> str:
    status, body = await world.request("POST", "/api/schedules", SCHEDULE)
    assert status == 201, body
    return "nightly"


async def _run(world: World) -> str:
    status, body = await world.request("POST", "/api/runs", {"flow": "greetings", "input": {"names": ["a"]}})
    assert status == 201, body
    return quoted(str(body["id"]))


async def _failed_run(world: World) -> str:
    run_id = await _run(world)
    run_object = world.env.RUN.objects[_raw(run_id)]
    await run_object.host.alarm()  # the first node's job is enqueued
    _, run = await world.request("GET", f"/api/runs/{run_id}")
    first = run["nodes"][0]
    # The job's shard reports its end to the run: here it failed for good.
    await run_object.host.notify(
        [
            {
                "nodeId": first["id"],
                "jobId": first["job_id"],
                "state": "FAILED",
                "result": None,
                "error": "boom",
            }
        ]
    )
    await run_object.host.alarm()
    _, run = await world.request("GET", f"/api/runs/{run_id}")
    assert run["run"]["state"] == "FAILED", run
    return run_id


async def _metrics(world: World) -> Request:
    store = AnalyticsStore(world.folder / "ae.sqlite", cast(Any, world.clock))
    world.closing.append(store.close)
    world.env.TSUMUGI_METRICS = LocalMetrics(store, "tsumugi_metrics")  # type: ignore[attr-defined]
    return "GET", "/api/metrics?hours=1", None


CASES: dict[str, Case] = {
    "listJobs": lambda w: _same(("GET", "/api/jobs", None)),
    "createJob": lambda w: _same(("POST", "/api/jobs", {"binding": "MAIL", "payload": {}})),
    "bulkEnqueueJobs": lambda w: _same(
        ("POST", "/api/jobs/bulk-enqueue", {"items": [{"binding": "MAIL", "payload": {}}]})
    ),
    "bulkRetryJobs": lambda w: _then(
        _failed_job(w), lambda j: ("POST", "/api/jobs/bulk-retry", {"ids": [_raw(j)]})
    ),
    "bulkCancelJobs": lambda w: _then(
        _job(w), lambda j: ("POST", "/api/jobs/bulk-cancel", {"ids": [_raw(j)]})
    ),
    "getJob": lambda w: _then(_job(w), lambda j: ("GET", f"/api/jobs/{j}", None)),
    "explainJob": lambda w: _then(_job(w), lambda j: ("GET", f"/api/jobs/{j}/explain", None)),
    "retryJob": lambda w: _then(_failed_job(w), lambda j: ("POST", f"/api/jobs/{j}/retry", None)),
    "cancelJob": lambda w: _then(_job(w), lambda j: ("POST", f"/api/jobs/{j}/cancel", None)),
    "rescheduleJob": lambda w: _then(
        _job(w, delayMs=60_000), lambda j: ("POST", f"/api/jobs/{j}/reschedule", {"delayMs": 1_000})
    ),
    "listBindings": lambda w: _same(("GET", "/api/bindings", None)),
    "setBindingPolicy": lambda w: _same(("POST", "/api/bindings/MAIL/policy", {"concurrency": 3})),
    "resetBindingPolicy": lambda w: _same(("POST", "/api/bindings/MAIL/policy/reset", None)),
    "getStats": lambda w: _same(("GET", "/api/stats", None)),
    "getDiagnostics": lambda w: _same(("GET", "/api/diagnostics", None)),
    "getMetrics": _metrics,
    "listSchedules": lambda w: _same(("GET", "/api/schedules", None)),
    "createSchedule": lambda w: _same(("POST", "/api/schedules", SCHEDULE)),
    "getSchedule": lambda w: _then(_schedule(w), lambda n: ("GET", f"/api/schedules/{n}", None)),
    "updateSchedule": lambda w: _then(
        _schedule(w), lambda n: ("PATCH", f"/api/schedules/{n}", {"overlap": "overlap"})
    ),
    "deleteSchedule": lambda w: _then(_schedule(w), lambda n: ("DELETE", f"/api/schedules/{n}", None)),
    "pauseSchedule": lambda w: _then(_schedule(w), lambda n: ("POST", f"/api/schedules/{n}/pause", None)),
    "resumeSchedule": lambda w: _then(_schedule(w), lambda n: ("POST", f"/api/schedules/{n}/resume", None)),
    "triggerSchedule": lambda w: _then(_schedule(w), lambda n: ("POST", f"/api/schedules/{n}/trigger", None)),
    "listRuns": lambda w: _same(("GET", "/api/runs", None)),
    "startRun": lambda w: _same(("POST", "/api/runs", {"flow": "greetings", "input": {"names": ["a"]}})),
    "getRun": lambda w: _then(_run(w), lambda r: ("GET", f"/api/runs/{r}", None)),
    "retryRun": lambda w: _then(_failed_run(w), lambda r: ("POST", f"/api/runs/{r}/retry", None)),
    "cancelRun": lambda w: _then(_run(w), lambda r: ("POST", f"/api/runs/{r}/cancel", None)),
    "listFlows": lambda w: _same(("GET", "/api/flows", None)),
    "sendEvent": lambda w: _same(("POST", "/api/events", {"name": "approved", "key": "order-42"})),
}


async def _same(request: Request) -> Request:
    return request


async def _then(made: Awaitable[str], request: Callable[[str], Request]) -> Request:
    return request(await made)


def _raw(quoted_id: str) -> str:
    from urllib.parse import unquote

    return unquote(quoted_id)


@pytest.fixture
async def world(tmp_path: Path, clock: SteppedClock) -> AsyncIterator[World]:
    built = World(tmp_path, clock, define_tsumugi(performers=PERFORMERS, flows=[greetings]))
    built.env.TSUMUGI_OPERATOR_TOKEN = TOKENS[Role.OPERATOR]  # type: ignore[attr-defined]
    built.env.TSUMUGI_VIEWER_TOKEN = TOKENS[Role.VIEWER]  # type: ignore[attr-defined]
    yield built
    await built.aclose()


def test_every_route_declares_a_role_and_has_a_case() -> None:
    assert {op.operation_id for op in OPERATIONS} == set(CASES)
    assert all(isinstance(op.role, Role) for op in OPERATIONS)
    reads = {op.operation_id for op in OPERATIONS if op.method == "GET"}
    assert {op.operation_id for op in OPERATIONS if op.role is Role.VIEWER} == reads


@pytest.mark.parametrize("role", list(Role), ids=lambda r: r.value)
@pytest.mark.parametrize("op", OPERATIONS, ids=lambda op: op.operation_id)
async def test_a_route_refuses_a_role_below_its_own_and_serves_the_rest(
    world: World, op: Operation, role: Role
) -> None:
    method, path, body = await CASES[op.operation_id](world)
    status, answer = await world.request(
        method, path, body, headers={"authorization": f"Bearer {TOKENS[role]}"}
    )
    if role.allows(op.role):
        assert 200 <= status < 300, (status, answer)
    else:
        assert (status, answer["needs"], answer["role"]) == (403, op.role.value, role.value), answer
        assert answer["reason"] == (
            f"{op.operation_id} needs the {op.role.value} role; "
            f"TSUMUGI_{role.value.upper()}_TOKEN has the {role.value} role"
        )


async def test_the_openapi_document_says_each_routes_role(world: World) -> None:
    status, document = await world.request("GET", "/api/openapi.json")
    assert status == 200
    for op in OPERATIONS:
        entry = document["paths"][op.path][op.method.lower()]
        assert entry["x-tsumugi-role"] == op.role.value
        assert "403" in entry["responses"]
