"""Stats, diagnostics, explain and metrics.

Source: docs/reference/original.md §4.4, docs/reference/additions.md A10, A11, C4.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
import respx
from jsonschema import Draft202012Validator

from tests.api.api_world import T0, LocalMetrics, World, quoted
from tsumugi_core.liveness import MAX_INVOCATION_MS
from tsumugi_core.states import JobState
from tsumugi_dev.analytics import AnalyticsStore
from tsumugi_scheduler.api import OPERATIONS, build_document
from tsumugi_scheduler.api.metrics import aggregate_points
from tsumugi_scheduler.shard.records import Failed


async def test_stats_count_states_and_the_longest_wait_from_the_read_model(world: World) -> None:
    await world.enqueue("MAIL")
    world.clock.advance(4_000)
    await world.tick()  # the MAIL job is dispatched (QUEUED) and projected
    await world.enqueue("SMS", partitionKey="k", delayMs=1_000)
    await world.request("POST", "/api/bindings/SMS/policy", {"paused": True})
    await world.tick()
    world.clock.advance(3_000)
    assert await world.request("GET", "/api/stats") == (
        200,
        {"byState": {"QUEUED": 1, "SCHEDULED": 1}, "oldestScheduledMs": 2_000},
    )


async def test_diagnostics_say_what_holds_each_binding_back_per_shard(world: World) -> None:
    await world.request("POST", "/api/bindings/MAIL/policy", {"concurrency": 1})
    for _ in range(3):
        await world.enqueue("MAIL")
    await world.tick()
    status, body = await world.request("GET", "/api/diagnostics")
    assert status == 200
    assert set(body["bindings"]) == {"MAIL", "Notify", "SMS"}
    mail = body["bindings"]["MAIL"]
    assert (body["shard"], mail["active"], mail["blocked"]["capacity"], mail["held_back_by"]) == (
        0,
        3,
        True,
        ["capacity"],
    )
    assert mail["shards"][0]["counts"]["QUEUED"] == 1
    assert mail["shards"][0]["blocked"]["capacity"] == 2
    assert [s["shard"] for s in body["bindings"]["SMS"]["shards"]] == [0, 1]
    await world.request("POST", "/api/bindings/SMS/policy", {"paused": True})
    status, body = await world.request("GET", "/api/diagnostics")
    sms = body["bindings"]["SMS"]
    # Paused with nothing waiting: paused in the settings, but nothing is held back.
    assert (sms["held_back_by"], sms["shards"][0]["settings"]["paused"]) == ([], True)


async def test_explain_names_a_key_kept_for_an_attempt_given_up_and_when_it_frees(world: World) -> None:
    # ADR-0185: the holder's call was lost, so it ended STALLED at once, but it may run until its claim's hard end
    # and its key stays taken until then; explain says so instead of "nothing holds the job back".
    holder = await world.enqueue("MAIL", concurrencyKey="user-1", guarantee="at-most-once")
    await world.tick()
    name = holder.split(":", 1)[0]
    engine = world.shard(name).host.engine(name)
    assert engine is not None
    assert engine.claim(holder, 1)
    world.clock.advance(1_000)
    assert engine.report(holder, 1, Failed(error="lost", unknown=True)).state == JobState.STALLED
    waiting = await world.enqueue("MAIL", concurrencyKey="user-1")
    status, body = await world.request("GET", f"/api/jobs/{quoted(waiting)}/explain")
    assert status == 200
    (blocker,) = body["explain"]["blockers"]
    free_at = T0 + MAX_INVOCATION_MS
    assert (blocker["kind"], blocker["holders"], blocker["count"], blocker["limit"]) == (
        "per_key_concurrency",
        [holder],
        1,
        1,
    )
    assert blocker["clears_at"] == free_at
    assert blocker["message"] == (
        f"waits for job {holder} of concurrency_key 'user-1' (per-key concurrency 1): attempt 1 of job {holder} "
        "was given up but may still run, so its slot stays taken, free in 14 min 59 s (2026-01-01T00:15:00Z)"
    )
    world.clock.set(free_at)
    status, body = await world.request("GET", f"/api/jobs/{quoted(waiting)}/explain")
    assert body["explain"]["blockers"] == []


async def test_diagnostics_count_what_a_pause_holds_back_before_the_next_tick(world: World) -> None:
    await world.enqueue("MAIL")
    await world.request("POST", "/api/bindings/MAIL/policy", {"paused": True})
    status, body = await world.request("GET", "/api/diagnostics")
    assert status == 200
    [shard] = body["bindings"]["MAIL"]["shards"]
    # No tick ran since the pause: "paused" is named with the job it holds, never beside a count of 0.
    assert (shard["held_back_by"], shard["blocked"]["paused"]) == (["paused"], 1)


async def test_explain_names_every_blocker_and_when_it_clears(world: World) -> None:
    await world.request(
        "POST", "/api/bindings/MAIL/policy", {"per_key_rate": {"tokens": 1, "interval_ms": 10_000}}
    )
    holder = await world.enqueue("MAIL", concurrencyKey="user-1")
    await world.tick()  # holder dispatched: holds user-1 and spent its token
    waiting = await world.enqueue("MAIL", concurrencyKey="user-1", delayMs=500)
    await world.request("POST", "/api/bindings/MAIL/policy", {"paused": True})
    status, body = await world.request("GET", f"/api/jobs/{quoted(waiting)}/explain")
    assert status == 200
    explain = body["explain"]
    kinds = {b["kind"]: b for b in explain["blockers"]}
    assert list(kinds) == ["run_after", "paused", "per_key_concurrency", "per_key_rate"]
    assert kinds["run_after"]["clears_at"] == T0 + 500
    assert kinds["per_key_concurrency"]["holders"] == [holder]
    assert kinds["per_key_rate"]["clears_at"] == T0 + 10_000
    assert explain["waiting"] is True
    # Words with relative times for people (no raw epoch ms, no phrase twice); the key beside the holders.
    assert (
        kinds["run_after"]["message"] == "run_after is in the future: ready in 500 ms (2026-01-01T00:00:00Z)"
    )
    assert kinds["per_key_concurrency"]["message"] == (
        f"waits for job {holder} of concurrency_key 'user-1' (per-key concurrency 1)"
    )
    assert (kinds["per_key_concurrency"]["key"], kinds["per_key_concurrency"]["limit"]) == ("user-1", 1)
    assert kinds["per_key_rate"]["message"] == (
        "concurrency_key 'user-1' has no token left: the next one comes in 10 s (2026-01-01T00:00:10Z)"
    )
    assert str(T0)[:6] not in explain["summary"]


async def test_explain_counts_higher_priority_jobs_ahead_when_capacity_is_short(world: World) -> None:
    await world.request("POST", "/api/bindings/MAIL/policy", {"concurrency": 0})
    low = await world.enqueue("MAIL", priority=1)
    for _ in range(2):
        await world.enqueue("MAIL", priority=5)
    explain = (await world.request("GET", f"/api/jobs/{quoted(low)}/explain"))[1]["explain"]
    kinds = {b["kind"]: b for b in explain["blockers"]}
    assert (explain["jobs_ahead"], kinds["priority"]["count"], kinds["concurrency"]["count"]) == (2, 2, 0)


async def test_explain_of_a_ready_job_with_room_has_no_blocker_and_a_running_job_is_not_waiting(
    world: World,
) -> None:
    job_id = await world.enqueue("MAIL")
    explain = (await world.request("GET", f"/api/jobs/{quoted(job_id)}/explain"))[1]["explain"]
    assert (explain["blockers"], explain["waiting"]) == ([], True)
    await world.tick()
    explain = (await world.request("GET", f"/api/jobs/{quoted(job_id)}/explain"))[1]["explain"]
    assert (explain["state"], explain["waiting"], explain["blockers"]) == ("QUEUED", False, [])


async def test_explain_answers_404_unknown_or_malformed_and_410_swept(world: World) -> None:
    assert await world.request("GET", f"/api/jobs/{quoted('MAIL#0:never')}/explain") == (
        404,
        {"error": "not found", "detail": "no job has the id 'MAIL#0:never'"},
    )
    status, body = await world.request("GET", "/api/jobs/MAIL/explain")  # ADR-0059
    assert (status, body["error"]) == (404, "not found")
    job_id = await world.enqueue("MAIL")
    await world.request("POST", f"/api/jobs/{quoted(job_id)}/cancel")
    await world.tick()
    world.clock.advance(600_000)
    await world.tick()  # swept from the shard, still in the read model
    status, body = await world.request("GET", f"/api/jobs/{quoted(job_id)}/explain")
    assert (status, body["reason"]) == (410, "gone")


async def test_metrics_is_501_until_configured_and_validates_its_query(world: World) -> None:
    assert await world.request("GET", "/api/metrics") == (501, {"error": "metrics is not configured"})
    for query, message in [
        ("hours=0", "hours must be at least 1"),
        ("hours=721", "hours must not exceed 720"),
        ("hours=abc", "hours must be a number"),
        ("binding=x';--", "binding is not a valid name"),
    ]:
        assert await world.request("GET", f"/api/metrics?{query}") == (400, {"error": message})


@pytest.fixture
def store(world: World, tmp_path: Path) -> Iterator[AnalyticsStore]:
    with AnalyticsStore(tmp_path / "ae.sqlite", cast(Any, world.clock)) as opened:  # reads only now_ms
        yield opened


async def test_metrics_read_back_local_points_weighted_per_binding_and_hour(
    world: World, store: AnalyticsStore
) -> None:
    dataset = LocalMetrics(store, "tsumugi_metrics")
    points = [("COMPLETED", "MAIL", 1, 100), ("FAILED", "MAIL", 3, 300), ("COMPLETED", "SMS", 1, 50)]
    for state, binding, attempts, duration in points:
        dataset.writeDataPoint(
            {
                "indexes": [binding],
                "blobs": [state, binding, "at-least-once"],
                "doubles": [attempts, duration],
            }
        )
    world.env.TSUMUGI_METRICS = dataset  # type: ignore[attr-defined]
    world.clock.advance(60_000)
    status, body = await world.request("GET", "/api/metrics?hours=2")
    assert status == 200
    assert body["hours"] == 2
    mail = body["bindings"][0]
    assert (mail["binding"], mail["total"], mail["failed"], mail["failureRate"]) == ("MAIL", 2, 1, 0.5)
    assert (mail["avgDurationMs"], mail["maxDurationMs"], mail["p95DurationMs"], mail["avgAttempts"]) == (
        200,
        300,
        300,
        2,
    )
    assert body["series"] == [
        {
            "at": T0,
            "total": 3,
            "failed": 1,
            "avgDurationMs": 150,
            "p50DurationMs": 100,
            "p95DurationMs": 300,
            "p99DurationMs": 300,
        }
    ]
    assert (mail["p50DurationMs"], mail["p99DurationMs"], body["bucketMs"]) == (100, 300, 3_600_000)
    status, body = await world.request("GET", "/api/metrics?binding=SMS")
    assert [b["binding"] for b in body["bindings"]] == ["SMS"]
    store.close()


def test_the_series_falls_in_the_asked_buckets_with_weighted_percentiles() -> None:
    minute = 60_000
    points = [
        {"state": "COMPLETED", "binding": "A", "attempts": 1, "duration": d, "weight": 1, "at_ms": T0 + at}
        for d, at in [(10, 0), (20, minute), (30, 4 * minute), (1000, 5 * minute), (40, 6 * minute)]
    ]
    points.append(
        {"state": "FAILED", "binding": "A", "attempts": 2, "duration": 50, "weight": 98, "at_ms": T0}
    )
    report = aggregate_points(points, hours=1, bucket_ms=5 * minute)
    assert [(b.at, b.total, b.failed) for b in report.series] == [(T0, 101, 98), (T0 + 5 * minute, 2, 0)]
    first = report.series[0]
    assert (first.p50_duration_ms, first.p95_duration_ms, first.p99_duration_ms) == (50, 50, 50)
    assert (report.series[1].p50_duration_ms, report.series[1].p99_duration_ms) == (40, 1000)
    [a] = report.bindings
    assert (a.p50_duration_ms, a.p95_duration_ms, a.p99_duration_ms, a.max_duration_ms) == (50, 50, 50, 1000)
    assert report.bucket_ms == 5 * minute


async def test_metrics_buckets_are_asked_in_whole_minutes(world: World, tmp_path: Path) -> None:
    store = AnalyticsStore(tmp_path / "ae.sqlite", cast(Any, world.clock))
    dataset = LocalMetrics(store, "tsumugi_metrics")
    for _ in range(2):
        dataset.writeDataPoint(
            {"indexes": ["MAIL"], "blobs": ["COMPLETED", "MAIL", "at-least-once"], "doubles": [1, 10]}
        )
        world.clock.advance(300_000)
    world.env.TSUMUGI_METRICS = dataset  # type: ignore[attr-defined]
    status, body = await world.request("GET", "/api/metrics?hours=1&bucket_minutes=5")
    assert (status, body["bucketMs"], [p["at"] for p in body["series"]]) == (200, 300_000, [T0, T0 + 300_000])
    for query, message in [
        ("bucket_minutes=0", "bucket_minutes must be 1..1440"),
        ("bucket_minutes=1441", "bucket_minutes must be 1..1440"),
        ("bucket_minutes=1.5", "bucket_minutes must be a whole number"),
    ]:
        assert await world.request("GET", f"/api/metrics?{query}") == (400, {"error": message})
    store.close()


def test_sampled_points_weigh_by_their_sample_interval() -> None:
    report = aggregate_points(
        [
            {"state": "FAILED", "binding": "A", "attempts": 1, "duration": 10, "weight": 9, "at_ms": 0},
            {"state": "COMPLETED", "binding": "A", "attempts": 1, "duration": 1000, "weight": 1, "at_ms": 0},
        ],
        hours=1,
    )
    assert (report.bindings[0].failure_rate, report.bindings[0].avg_duration_ms) == (0.9, 109.0)
    assert report.bindings[0].p95_duration_ms == 1000


async def test_metrics_on_cloudflare_query_the_account_sql_api(world: World) -> None:
    world.env.CF_ACCOUNT_ID, world.env.CF_API_TOKEN = "acc1", "tok"  # type: ignore[attr-defined]
    world.env.TSUMUGI_METRICS_DATASET = "tsumugi"  # type: ignore[attr-defined]
    url = "https://api.cloudflare.com/client/v4/accounts/acc1/analytics_engine/sql"
    by_binding = {
        "data": [
            {
                "binding": "MAIL",
                "total": "4",
                "failed": "1",
                "avg_duration": 20,
                "max_duration": 40,
                "p95_duration": 39.5,
                "avg_attempts": "1.25",
            }
        ]
    }
    by_hour = {"data": [{"at": "2026-01-01 00:00:00", "total": 4, "failed": 1, "avg_duration": "NaN"}]}
    with respx.mock(assert_all_called=True) as mock:
        route = mock.post(url).mock(
            side_effect=[httpx.Response(200, json=by_binding), httpx.Response(200, json=by_hour)]
        )
        status, body = await world.request("GET", "/api/metrics?hours=6&binding=MAIL")
    assert status == 200
    sql = route.calls[0].request.content.decode()
    assert "INTERVAL '6' HOUR" in sql
    assert "blob2 = 'MAIL'" in sql
    assert sql.endswith("FORMAT JSON")
    assert route.calls[0].request.headers["authorization"] == "Bearer tok"
    assert body["bindings"][0]["failureRate"] == 0.25
    assert body["series"] == [
        {
            "at": T0,
            "total": 4,
            "failed": 1,
            "avgDurationMs": 0,
            "p50DurationMs": 0,
            "p95DurationMs": 0,
            "p99DurationMs": 0,
        }
    ]
    assert "INTERVAL '60' MINUTE" in route.calls[1].request.content.decode()
    assert "quantileWeighted(0.99)(double2, _sample_interval) AS p99_duration" in sql
    with respx.mock() as mock:
        mock.post(url).respond(403, text="x" * 600)
        status, body = await world.request("GET", "/api/metrics")
    assert (status, len(body["error"])) == (502, 500)


@pytest.mark.parametrize(
    ("method", "path", "message"),
    [
        ("POST", "/api/runs", "run creation is not available"),
        ("POST", "/api/runs/f:1/retry", "run control is not available"),
        ("POST", "/api/runs/f:1/cancel", "run control is not available"),
    ],
)
async def test_run_control_answers_501_until_it_exists(
    world: World, method: str, path: str, message: str
) -> None:
    assert await world.request(method, path) == (501, {"error": message})


async def test_metrics_takes_an_empty_hours_or_bucket_as_the_default_and_the_document_says_so(
    world: World, store: AnalyticsStore
) -> None:
    # The live schemathesis run sent bucket_minutes= (empty), which the handler reads as absent (as every list
    # parameter): the document called that a schema violation. Both now say the same.
    world.env.TSUMUGI_METRICS = LocalMetrics(store, "tsumugi_metrics")  # type: ignore[attr-defined]
    status, body = await world.request("GET", "/api/metrics?hours=&bucket_minutes=&binding=")
    assert (status, body["hours"], body["bucketMs"]) == (200, 24, 3_600_000)
    document = build_document(OPERATIONS, bindings={"MAIL": 1})
    parameters = {p["name"]: p["schema"] for p in document["paths"]["/api/metrics"]["get"]["parameters"]}
    for name in ("hours", "bucket_minutes", "binding"):
        assert Draft202012Validator(parameters[name]).is_valid(""), name
    assert not Draft202012Validator(parameters["bucket_minutes"]).is_valid("x")
    assert not Draft202012Validator(parameters["hours"]).is_valid(0)


async def test_explain_names_the_binding_rate_blocker_and_when_a_token_returns(world: World) -> None:
    await world.request("POST", "/api/bindings/MAIL/policy", {"rate": {"tokens": 1, "interval_ms": 10_000}})
    jobs = {await world.enqueue("MAIL"), await world.enqueue("MAIL")}
    await world.tick()  # one of them takes the only token
    (sent,) = [m["jobId"] for m in world.env.TSUMUGI_QUEUE.sent]
    (waiting,) = jobs - {sent}
    status, body = await world.request("GET", f"/api/jobs/{quoted(waiting)}/explain")
    assert status == 200
    assert [(b["kind"], b["clears_at"]) for b in body["explain"]["blockers"]] == [("rate", T0 + 10_000)]
    diagnostics = (await world.request("GET", "/api/diagnostics"))[1]["bindings"]["MAIL"]
    assert (diagnostics["held_back_by"], diagnostics["blocked"]["tokens"]) == (["rate"], True)
