# pyright: reportArgumentType=false, reportGeneralTypeIssues=false, reportAttributeAccessIssue=false, reportCallIssue=false
# (The SDK's annotations are narrower than its behaviour: str methods, awaitable wrapper results.)
"""REST answers inside the contract (issue 10 item 9): methods, runs / flows / schedules, ids, integers."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from workers import Request, Response

from tests.api.api_world import TOKEN, LocalMetrics, World, quoted
from tsumugi_dev.analytics import AnalyticsStore
from tsumugi_scheduler._runtime import serve_asgi

API_HEADERS = {"authorization": f"Bearer {TOKEN}"}


@pytest.mark.parametrize("method", ["QUERY", "PURGE", "PROPFIND", "BAN"])
async def test_a_method_workerd_passes_on_but_python_lacks_is_405_with_allow(
    world: World, method: str
) -> None:
    # The Worker's fetch hands the SDK-shaped request to the ASGI adapter; the wrapper's ``method`` is
    # ``HTTPMethod[name]``, which has no QUERY or PURGE: that KeyError was a 500.
    request = Request("http://scheduler.test/api/bindings", method=method, headers=API_HEADERS)
    response = Response(
        await serve_asgi(world.app, request, world.env)
    )  # the JS Response, as the SDK wraps it
    assert (response.status, await response.json()) == (405, {"error": "method not allowed"})
    assert {m.strip() for m in response.headers["allow"].split(",")} == {"GET", "HEAD"}


async def test_a_known_method_still_reaches_its_route_through_the_adapter(world: World) -> None:
    request = Request("http://scheduler.test/api/bindings", method="GET", headers=API_HEADERS)
    response = Response(
        await serve_asgi(world.app, request, world.env)
    )  # the JS Response, as the SDK wraps it
    assert (response.status, (await response.json())["bindings"]) == (200, ["MAIL", "Notify", "SMS"])


async def test_runs_and_flows_answer_the_originals_empty_shapes_when_none_are_defined(world: World) -> None:
    assert await world.request("GET", "/api/flows") == (200, {"flows": []})
    assert await world.request("GET", "/api/runs") == (200, {"runs": [], "total": 0})
    lenient = "/api/runs?state=RUNNING&flow=f&limit=abc&offset=-4"  # paging is lenient, as the jobs list's
    assert await world.request("GET", lenient) == (200, {"runs": [], "total": 0})
    assert await world.request("GET", f"/api/runs/{quoted('f:abc')}") == (404, {"error": "not found"})
    assert await world.request("GET", "/api/runs/garbage") == (404, {"error": "not found"})


async def test_schedules_and_run_control_keep_the_originals_501_without_the_feature(world: World) -> None:
    # The dashboard shows its schedules tab unless this is 501 (docs/reference/original.md §7.1): without a
    # Scheduler object.
    del world.env.SCHEDULER
    assert await world.request("GET", "/api/schedules") == (501, {"error": "schedules are not available"})
    assert await world.request("POST", "/api/runs", {"flow": "f", "input": 1}) == (
        501,
        {"error": "run creation is not available"},
    )
    assert await world.request("POST", f"/api/runs/{quoted('f:a')}/cancel") == (
        501,
        {"error": "run control is not available"},
    )


async def test_runs_are_read_from_the_read_model_with_filters_and_nodes(world: World) -> None:
    db = world.d1.connection
    for run_id, state, updated in (("f:a", "RUNNING", 3), ("f:b", "FAILED", 2), ("g:c", "RUNNING", 1)):
        db.execute(
            "INSERT INTO run (id, seq, flow, state, input, node_total, node_done, node_failed, created_at, "
            "updated_at) VALUES (?, 1, ?, ?, '{}', 2, 1, 0, 1, ?)",
            (run_id, run_id[0], state, updated),
        )
    db.execute(
        "INSERT INTO run_node (run_id, node_id, seq, binding, state, container, parent, origin, after, "
        "position, created_at, updated_at) VALUES ('f:b', 'n', 1, 'MAIL', 'FAILED', 0, NULL, 'static', "
        "'not json', 0, 1, 2)"
    )
    status, body = await world.request("GET", "/api/runs?state=RUNNING&limit=1")
    assert (status, [r["id"] for r in body["runs"]], body["total"]) == (200, ["f:a"], 2)
    status, body = await world.request("GET", "/api/runs?flow=f&offset=1")
    assert [r["id"] for r in body["runs"]] == ["f:b"]
    status, body = await world.request("GET", f"/api/runs/{quoted('f:b')}")
    assert (status, body["run"]["retryable"], body["run"]["input"]) == (200, True, "{}")
    assert [(n["id"], n["after"], n["container"]) for n in body["nodes"]] == [("n", [], False)]


@pytest.mark.parametrize("suffix", ["", "/explain"])
async def test_a_malformed_job_id_on_a_read_is_404_as_the_original(world: World, suffix: str) -> None:
    status, body = await world.request("GET", f"/api/jobs/0{suffix}")
    assert (status, body["error"]) == (404, "not found")  # and a "detail" hint since issue 26


async def test_mutations_keep_400_for_a_malformed_id_and_the_document_declares_the_patterns(
    world: World,
) -> None:
    assert await world.request("POST", "/api/jobs/0/retry") == (400, {"error": "invalid job id"})
    status, document = await world.request("GET", "/api/openapi.json")
    assert status == 200

    def pattern(path: str, method: str) -> str:
        (param,) = [p for p in document["paths"][path][method]["parameters"] if p["in"] == "path"]
        return str(param["schema"]["pattern"])

    assert pattern("/api/jobs/{id}", "get") == "^[A-Za-z_][A-Za-z0-9_]*#[0-9]+:[A-Za-z0-9_-]+$"
    assert pattern("/api/bindings/{binding}/policy", "post") == "^[A-Za-z_][A-Za-z0-9_]*$"
    assert pattern("/api/runs/{id}", "get") == "^[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$"


async def test_policy_integers_may_be_written_as_integral_floats(world: World) -> None:
    # JSON has one number type and JSON Schema's "integer" accepts 2.0; 2.5 stays refused.
    status, body = await world.request(
        "POST",
        "/api/bindings/MAIL/policy",
        {"per_key_concurrency": 2.0, "rate": {"tokens": 5.0, "interval_ms": 1000}},
    )
    assert status == 200, body
    settings = body["shards"][0]["settings"]
    assert (settings["per_key_concurrency"], settings["rate"]) == (2, {"tokens": 5, "interval_ms": 1000})
    assert await world.request("POST", "/api/bindings/MAIL/policy", {"concurrency": 2.5}) == (
        400,
        {"error": "concurrency must be an integer", "field": "concurrency", "rule": "must be an integer"},
    )


async def test_metrics_counts_are_json_integers(world: World, tmp_path: Path) -> None:
    with AnalyticsStore(tmp_path / "ae.sqlite", cast(Any, world.clock)) as store:  # reads only now_ms
        dataset = LocalMetrics(store, "tsumugi_metrics")
        for state in ("COMPLETED", "FAILED"):
            dataset.writeDataPoint(
                {"indexes": ["MAIL"], "blobs": [state, "MAIL", "at-least-once"], "doubles": [1, 10]}
            )
        world.env.TSUMUGI_METRICS = dataset  # type: ignore[attr-defined]
        response = await world.client.get("/api/metrics")
    assert response.status_code == 200
    assert '"total":2,"failed":1,' in response.text, response.text  # not 2.0 / 1.0


async def test_metrics_hours_floors_any_number_below_721(world: World) -> None:
    assert (await world.request("GET", "/api/metrics?hours=720.9"))[1] == {
        "error": "metrics is not configured"
    }
    assert await world.request("GET", "/api/metrics?hours=721") == (
        400,
        {"error": "hours must not exceed 720"},
    )


async def test_a_shard_from_another_bindings_config_is_409_with_the_rule(world: World) -> None:
    # Well-formed input that conflicts with this scheduler's configuration (ADR-0059), not a malformed one.
    rule = "must be 0, the scheduler's shard for this item: the caller's bindings config differs"
    assert await world.request("POST", "/api/jobs", {"binding": "MAIL", "payload": 1, "shard": 5}) == (
        409,
        {"error": f"shard {rule}", "field": "shard", "rule": rule},
    )
    assert (await world.request("POST", "/api/jobs", {"binding": "MAIL", "payload": 1, "shard": -1}))[
        0
    ] == 400


async def test_a_pinned_id_beyond_its_bindings_shards_is_refused(world: World) -> None:
    # It was accepted into an object no route serves: never readable, never steerable.
    assert await world.request("POST", "/api/jobs", {"binding": "SMS", "payload": 1, "id": "SMS#9:p"}) == (
        400,
        {
            "error": "id is invalid: shard 9 is beyond SMS's 2 shard(s)",
            "field": "id",
            "rule": "is invalid: shard 9 is beyond SMS's 2 shard(s)",
        },
    )


@pytest.mark.parametrize(
    ("backoff", "field", "rule"),
    [
        (
            {"kind": "fixed", "delayMs": 1, "maxMs": -1},
            "backoff.maxMs",
            "must be between 0 and 9007199254740991",
        ),
        (
            {"kind": "fixed", "delayMs": 1, "maxMs": 2**53},
            "backoff.maxMs",
            "must be between 0 and 9007199254740991",
        ),
        ({"kind": "fixed", "delayMs": 1, "factor": 0.5}, "backoff.factor", "must be at least 1"),
        ({"kind": "exponential", "maxMs": None}, "backoff.maxMs", "must be a number"),
        ({"kind": "exponential", "speed": 2}, "backoff.speed", "is not a backoff option"),
    ],
)
async def test_every_backoff_field_sent_is_checked_whatever_the_kind(
    world: World, backoff: dict[str, Any], field: str, rule: str
) -> None:
    assert await world.request(
        "POST", "/api/jobs", {"binding": "MAIL", "payload": 1, "backoff": backoff}
    ) == (400, {"error": f"{field} {rule}", "field": field, "rule": rule})


@pytest.mark.parametrize(
    ("path", "allow"), [("/api/jobs/bulk-retry", "POST"), ("/api/jobs/bulk-enqueue", "POST")]
)
async def test_another_method_on_a_path_of_its_own_is_405_not_a_job_lookup(
    world: World, path: str, allow: str
) -> None:
    response = await world.client.get(path)
    assert (response.status_code, response.headers["allow"]) == (405, allow)


async def test_bulk_bodies_refuse_unknown_fields(world: World) -> None:
    status, body = await world.request("POST", "/api/jobs/bulk-retry", {"state": "FAILED", "x": 1})
    assert (status, body["field"]) == (400, "x")
    status, body = await world.request(
        "POST", "/api/jobs/bulk-enqueue", {"items": [{"binding": "MAIL", "payload": 1}], "x": 1}
    )
    assert (status, body["field"]) == (400, "x")
