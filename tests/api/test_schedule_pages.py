"""Run-time schedules have a limit and the list pages like the job list (issue 25 item 8).

With 11,002 schedules ``GET /api/schedules`` answered 18 MB and held the process about 1.5 s, and the dashboard
asked for all of them every 3 s. A shard now holds at most `MAX_RUNTIME_SCHEDULES` run-time schedules, and
``limit`` / ``after`` return one page by name with ``next``; the dashboard asks for one page.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.api.api_world import World
from tsumugi_scheduler.schedules import host

JS = Path(host.__file__).resolve().parents[1] / "dashboard" / "assets" / "js" / "schedules.js"


async def _create(world: World, *names: str) -> None:
    for name in names:
        body = {"name": name, "binding": "MAIL", "payload": None, "cron": "0 3 * * *"}
        status, answer = await world.request("POST", "/api/schedules", body)
        assert status == 201, answer


async def test_pages_by_name_follow_next_to_the_end(world: World) -> None:
    await _create(world, "e", "a", "d", "b", "c")
    seen: list[list[str]] = []
    after = ""
    while True:
        status, page = await world.request("GET", f"/api/schedules?limit=2&after={after}")
        assert status == 200
        seen.append([s["name"] for s in page["schedules"]])
        if page["next"] is None:
            break
        after = page["next"]
    assert seen == [["a", "b"], ["c", "d"], ["e"]]
    status, everything = await world.request("GET", "/api/schedules")  # without paging: the original's list
    assert (status, [s["name"] for s in everything["schedules"]], "next" in everything) == (
        200,
        ["a", "b", "c", "d", "e"],
        False,
    )


@pytest.mark.parametrize("limit", ["0", "501", "x", "", "\u0661"])
async def test_a_limit_outside_1_to_500_is_a_400(world: World, limit: str) -> None:
    status, body = await world.request("GET", f"/api/schedules?limit={limit}")
    assert (status, body["field"], body["rule"]) == (400, "limit", "must be an integer from 1 to 500")


async def test_a_shard_holds_a_bounded_number_of_run_time_schedules(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(host, "MAX_RUNTIME_SCHEDULES", 2)
    await _create(world, "one", "two")
    status, body = await world.request(
        "POST", "/api/schedules", {"name": "three", "binding": "MAIL", "payload": None, "cron": "0 3 * * *"}
    )
    assert status == 409
    assert body["error"].startswith("this scheduler shard holds 2 run-time schedules, its most")
    assert [s["name"] for s in (await world.request("GET", "/api/schedules"))[1]["schedules"]] == [
        "one",
        "two",
    ]


def test_the_dashboard_asks_for_one_page_of_schedules() -> None:
    script = JS.read_text()
    calls = re.findall(r"apiCall\(([^;]*API\.schedules[^;]*?)\)", script)
    reads = [call for call in calls if "method: 'POST'" not in call]
    assert reads == ["withQuery(API.schedules, { limit: SCHEDULE_PAGE, after: schedulePages.after }"]
    assert "const SCHEDULE_PAGE = 50;" in script
