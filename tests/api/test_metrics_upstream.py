"""Every way Cloudflare's Analytics Engine SQL API can fail answers 502, never a 500 (issue 5 audit)."""

from __future__ import annotations

import httpx
import pytest
import respx

from tests.api.api_world import T0, World

URL = "https://api.cloudflare.com/client/v4/accounts/acc1/analytics_engine/sql"
BY_BINDING = {"data": [{"binding": "MAIL", "total": 1, "failed": 0}]}


def _configure(world: World, account: str = "acc1") -> None:
    world.env.CF_ACCOUNT_ID, world.env.CF_API_TOKEN = account, "tok"  # type: ignore[attr-defined]
    world.env.TSUMUGI_METRICS_DATASET = "tsumugi"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        ([httpx.Response(200, text="<html>cloudflare error page</html>")], "metrics query answered no JSON"),
        ([httpx.Response(200, json=[1, 2])], "metrics query answered no JSON"),
        ([httpx.Response(200, json={"data": {"oops": 1}})], "not a list of rows"),
        ([httpx.Response(200, json={"data": ["row"]})], "not a list of rows"),
        (
            [httpx.Response(200, json=BY_BINDING), httpx.Response(200, json={"data": [{"at": "yesterday"}]})],
            "unreadable row",
        ),
        (
            [httpx.Response(200, json=BY_BINDING), httpx.Response(200, json={"data": [{"at": None}]})],
            "unreadable row",
        ),
    ],
    ids=["html-200", "json-not-object", "data-object", "data-not-rows", "at-unparseable", "at-null"],
)
async def test_an_unreadable_upstream_answer_is_502_naming_the_problem(
    world: World, answers: list[httpx.Response], message: str
) -> None:
    _configure(world)
    with respx.mock() as mock:
        mock.post(URL).mock(side_effect=answers)
        status, body = await world.request("GET", "/api/metrics")
    assert status == 502
    assert message in body["error"]


async def test_an_iso_hour_is_read_as_utc(world: World) -> None:
    _configure(world)
    by_hour = {"data": [{"at": "2026-01-01T00:00:00Z", "total": 2, "failed": 1, "avg_duration": 5}]}
    with respx.mock() as mock:
        mock.post(URL).mock(
            side_effect=[httpx.Response(200, json=BY_BINDING), httpx.Response(200, json=by_hour)]
        )
        status, body = await world.request("GET", "/api/metrics")
    assert (status, body["series"]) == (
        200,
        [
            {
                "at": T0,
                "total": 2,
                "failed": 1,
                "avgDurationMs": 5,
                "p50DurationMs": 0,
                "p95DurationMs": 0,
                "p99DurationMs": 0,
            }
        ],
    )


async def test_a_connection_failure_and_an_unusable_account_id_are_502(world: World) -> None:
    _configure(world)
    with respx.mock() as mock:
        mock.post(URL).mock(side_effect=httpx.ConnectError("refused"))
        status, body = await world.request("GET", "/api/metrics")
    assert (status, body["error"]) == (502, "metrics query failed: refused")
    _configure(world, account="acc\x00")
    status, body = await world.request("GET", "/api/metrics")
    assert status == 502


async def test_local_rows_that_are_not_points_are_502(world: World) -> None:
    class Broken:
        dataset = "tsumugi_metrics"

        def query(self, sql: str) -> list[object]:
            return ["not a point"]

    world.env.TSUMUGI_METRICS = Broken()  # type: ignore[attr-defined]
    status, body = await world.request("GET", "/api/metrics")
    assert status == 502
    assert "unreadable rows" in body["error"]
