"""What a newcomer meets through REST (issue 26): the attempt in progress, counts that match the list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import httpx
import pytest

from tests.api.api_world import TOKEN, LocalMetrics, World, quoted, with_env
from tsumugi_client import AsyncTsumugiClient
from tsumugi_dev.analytics import AnalyticsStore
from tsumugi_scheduler.api import job_list


async def _detail(world: World, job_id: str) -> dict[str, object]:
    status, body = await world.request("GET", f"/api/jobs/{quoted(job_id)}")
    assert status == 200, body
    return body["job"]


async def _row(world: World, job_id: str) -> dict[str, object]:
    status, body = await world.request("GET", "/api/jobs", params={"id": job_id})
    assert status == 200, body
    [row] = body["jobs"]
    return row


async def test_a_job_in_flight_names_the_attempt_in_progress_in_its_detail_and_its_row(world: World) -> None:
    job_id = await world.enqueue("MAIL", maxAttempts=3)
    await world.tick()  # dispatched: QUEUED, its first attempt under way
    detail = await _detail(world, job_id)
    assert (detail["state"], detail["attempts"], detail["current_attempt"]) == ("QUEUED", 0, 1)
    await world.tick()  # projected
    row = await _row(world, job_id)
    assert (row["state"], row["attempts"], row["current_attempt"]) == ("QUEUED", 0, 1)
    name = job_id.split(":", 1)[0]
    await world.shard(name).host.report(name, job_id, 1, {"ok": False, "error": "boom"})
    detail = await _detail(world, job_id)
    assert (detail["state"], detail["attempts"], detail["current_attempt"]) == ("SCHEDULED", 1, None)
    world.clock.advance(600_000)
    await world.tick()  # the retry is dispatched: the second attempt is the one in progress
    detail = await _detail(world, job_id)
    assert (detail["state"], detail["attempts"], detail["current_attempt"]) == ("QUEUED", 1, 2)


async def test_stats_leave_out_the_bindings_the_list_leaves_out_so_counts_agree(world: World) -> None:
    # Issue 26 item 2: the chips said "COMPLETED 70" above a list of 38 jobs (hidden notice jobs counted).
    for _ in range(3):
        await world.enqueue("MAIL")
    for _ in range(2):
        await world.enqueue("Notify")
    await world.enqueue("SMS", partitionKey="k")
    await world.tick()
    await world.tick()
    status, everything = await world.request("GET", "/api/stats")
    assert status == 200
    assert sum(everything["byState"].values()) == 6
    status, body = await world.request("GET", "/api/stats", params={"exclude_bindings": "Notify,SMS"})
    assert status == 200, body
    status, listing = await world.request("GET", "/api/jobs", params={"exclude_bindings": "Notify,SMS"})
    assert sum(body["byState"].values()) == listing["total"] == 3
    assert set(body["byState"]) <= set(everything["byState"])
    status, only_mail = await world.request(
        "GET", "/api/stats", params={"exclude_bindings": "Notify,SMS,MAIL"}
    )
    assert only_mail["byState"] == {}


async def test_metrics_leave_out_the_notice_bindings_from_totals_and_the_failure_rate(
    world: World, tmp_path: Path
) -> None:
    # Issue 26 item 2: every failed job makes a (completed) notice job, which diluted the failure rate.
    with AnalyticsStore(tmp_path / "ae.sqlite", cast(Any, world.clock)) as store:
        dataset = LocalMetrics(store, "tsumugi_metrics")
        for state, binding in [("FAILED", "MAIL"), ("COMPLETED", "MAIL"), ("COMPLETED", "Notify")]:
            dataset.writeDataPoint(
                {"indexes": [binding], "blobs": [state, binding, "at-least-once"], "doubles": [1, 10]}
            )
        world.env.TSUMUGI_METRICS = dataset  # type: ignore[attr-defined]
        world.clock.advance(60_000)
        status, everything = await world.request("GET", "/api/metrics")
        assert status == 200
        assert (everything["series"][0]["total"], everything["series"][0]["failed"]) == (3, 1)
        status, body = await world.request("GET", "/api/metrics", params={"exclude_bindings": "Notify"})
        assert status == 200, body
        assert [b["binding"] for b in body["bindings"]] == ["MAIL"]
        assert (body["series"][0]["total"], body["series"][0]["failed"]) == (2, 1)
        status, body = await world.request("GET", "/api/metrics", params={"exclude_bindings": "Notify,x'y"})
        assert (status, body["field"]) == (400, "exclude_bindings")


async def test_option_and_binding_typos_are_named_as_sent_with_a_suggestion(world: World) -> None:
    # Item 7: max_attempt was reported as maxAttempt, and a binding typo got no "did you mean".
    status, body = await world.request(
        "POST", "/api/jobs", {"binding": "MAIL", "payload": {}, "max_attempt": 3}
    )
    assert (status, body["field"]) == (400, "max_attempt")
    assert body["error"] == "max_attempt is not an enqueue option (did you mean max_attempts?)"
    status, body = await world.request(
        "POST", "/api/jobs", {"binding": "MAIL", "payload": {}, "maxAttempt": 3}
    )
    assert body["error"] == "maxAttempt is not an enqueue option (did you mean maxAttempts?)"
    status, body = await world.request(
        "POST", "/api/jobs", {"binding": "MAIL", "payload": {}, "color": "red"}
    )
    assert body["error"] == "color is not an enqueue option"  # nothing near: no guess
    status, body = await world.request("POST", "/api/jobs", {"binding": "Mial", "payload": {}})
    assert (status, body["field"]) == (400, "binding")
    assert body["error"] == "binding is not a registered performer: Mial (did you mean MAIL?)"


async def test_invalid_json_says_where_it_broke(world: World) -> None:
    text = '{"binding": "MAIL",\n "payload": {},}'
    status, body = await world.request("POST", "/api/jobs", text)
    assert status == 400
    # The trailing comma on line 2: Python 3.11 points after it ("Expecting property name ..."), 3.13 at it
    # ("Illegal trailing comma ..."); the answer carries what this Python's parser says.
    with pytest.raises(json.JSONDecodeError) as parsed:
        json.loads(text)
    assert (body["error"], body["line"], body["column"]) == ("body must be valid JSON", 2, parsed.value.colno)
    assert parsed.value.colno in (15, 16)
    assert body["detail"] == parsed.value.msg


async def test_an_id_no_job_ever_had_is_not_found_not_removed_after_retention(world: World) -> None:
    never = "MAIL#0:neverexisted"
    for action in ("retry", "cancel"):
        status, body = await world.request("POST", f"/api/jobs/{quoted(never)}/{action}")
        assert (status, body["error"]) == (404, "not found"), body
        assert body["detail"] == f"no job has the id {never!r}"
    status, body = await world.request("GET", f"/api/jobs/{quoted(never)}")
    assert (status, body["detail"]) == (404, f"no job has the id {never!r}")


async def test_a_job_id_cut_at_an_unencoded_hash_gets_a_hint_to_encode_it(world: World) -> None:
    job_id = await world.enqueue("MAIL")
    status, body = await world.request(
        "GET", "/api/jobs/" + job_id.split("#")[0]
    )  # what a client sends for "#"
    assert (status, body["error"]) == (404, "not found")
    assert "percent-encode the id" in body["detail"]
    assert "a bare # starts the URL's fragment" in body["detail"]
    status, body = await world.request("GET", f"/api/jobs/{quoted(job_id)}")
    assert status == 200


async def test_cancelling_a_scheduled_job_says_it_is_cancelled_through_rest_and_the_client(
    world: World,
) -> None:
    # Item 8: the client answered requested=False for a job it had just cancelled, and nothing more.
    waiting = await world.enqueue("MAIL", delayMs=60_000)
    running = await world.enqueue("MAIL")
    await world.tick()  # `running` is dispatched; `waiting` still SCHEDULED
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=with_env(world.app, world.env)))
    client = AsyncTsumugiClient("http://scheduler.test", token=TOKEN, http_client=http)
    try:
        now = await client.cancel(waiting)
        asked = await client.cancel(running)
    finally:
        await client.aclose()
    assert (now.cancelled, now.requested) == (True, False)
    assert (asked.cancelled, asked.requested) == (False, True)
    assert (await _detail(world, waiting))["state"] == "CANCELLED"
    again = await world.enqueue("MAIL", delayMs=60_000)
    status, body = await world.request("POST", f"/api/jobs/{quoted(again)}/cancel")
    assert (status, body) == (200, {"ok": True, "requested": False, "cancelled": True})


async def test_a_job_swept_after_retention_is_still_gone_not_unknown(world: World) -> None:
    job_id = await world.enqueue("MAIL")
    await world.request("POST", f"/api/jobs/{quoted(job_id)}/cancel")
    await world.tick()
    world.clock.advance(600_000)
    await world.tick()  # swept from the shard, still in the read model
    status, body = await world.request("POST", f"/api/jobs/{quoted(job_id)}/retry")
    assert (status, body["reason"]) == (410, "gone")


async def test_search_finds_jobs_by_payload_or_error_text_within_a_bounded_window(world: World) -> None:
    # Item 12: search by payload or error text, through REST.
    ada = await world.request("POST", "/api/jobs", {"binding": "MAIL", "payload": {"to": "ada@example.com"}})
    bob = await world.request("POST", "/api/jobs", {"binding": "MAIL", "payload": {"to": "bob@example.com"}})
    failing = await world.enqueue("MAIL", maxAttempts=1)
    await world.fail(failing)  # its error: "boom"
    await world.tick()
    await world.tick()
    status, body = await world.request("GET", "/api/jobs", params={"text": "ADA@example"})
    assert status == 200, body
    assert ([j["id"] for j in body["jobs"]], body["total"], body["searched"]) == ([ada[1]["id"]], 1, 3)
    status, body = await world.request("GET", "/api/jobs", params={"text": "boom", "state": "FAILED"})
    assert ([j["id"] for j in body["jobs"]], body["searched"]) == ([failing], 1)
    status, body = await world.request("GET", "/api/jobs", params={"text": "example.com", "limit": "1"})
    assert (len(body["jobs"]), body["total"]) == (1, 2)
    assert bob[1]["id"] in {j["id"] for j in (await world.request("GET", "/api/jobs?text=bob"))[1]["jobs"]}
    status, plain = await world.request("GET", "/api/jobs")
    assert "searched" not in plain  # only a search says how far it read


async def test_search_reads_no_more_than_its_window(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    for n in range(5):
        await world.request("POST", "/api/jobs", {"binding": "MAIL", "payload": {"n": n, "tag": "x"}})
    await world.tick_and_project()
    monkeypatch.setattr(job_list, "SEARCH_WINDOW", 3)
    status, body = await world.request("GET", "/api/jobs", params={"text": "tag"})
    assert (status, body["searched"], body["total"], len(body["jobs"])) == (200, 3, 3, 3)


async def test_retry_all_failed_of_one_binding_through_rest(world: World) -> None:
    # Item 12: "retry all failed" for a binding is bulk-retry by filter; other bindings are left alone.
    mail = [await world.enqueue("MAIL", maxAttempts=1) for _ in range(3)]
    other = await world.enqueue("Notify", maxAttempts=1)
    for job_id in [*mail, other]:
        await world.fail(job_id)
    await world.tick()
    await world.tick()
    status, body = await world.request("POST", "/api/jobs/bulk-retry", {"binding": "MAIL", "state": "FAILED"})
    assert status == 200, body
    assert (sorted(body["ok"]), body["failed"], body["remaining"]) == (sorted(mail), [], 0)
    states = {j: (await _detail(world, j))["state"] for j in [*mail, other]}
    assert states == {**dict.fromkeys(mail, "SCHEDULED"), other: "FAILED"}


async def test_a_job_detail_shows_its_own_timeout_in_flight_and_after(world: World) -> None:
    # Issue 26 item 9: "Timeout 1 min" was shown on a job whose timeout is 600 s.
    # The detail view prints the detail's timeout_ms; it must be the job's own, before and after dispatch.
    job_id = await world.enqueue("MAIL", timeoutMs=600_000)
    assert (await _detail(world, job_id))["timeout_ms"] == 600_000
    await world.tick()
    await world.tick()
    assert (await _detail(world, job_id))["timeout_ms"] == 600_000
