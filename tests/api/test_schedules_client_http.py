"""The HTTP client's schedule calls against the real REST app (in process, httpx ASGI transport)."""

from __future__ import annotations

import httpx
import pytest

from tests.api.api_world import T0, TOKEN, World, with_env
from tests.support.derived_ids import readable
from tsumugi_client import AsyncTsumugiClient, ScheduleError


async def test_the_http_client_round_trips_every_call(world: World) -> None:
    transport = httpx.ASGITransport(app=with_env(world.app, world.env))
    async with httpx.AsyncClient(transport=transport) as http:
        schedules = AsyncTsumugiClient("http://scheduler.test/", token=TOKEN, http_client=http)
        made = await schedules.create_schedule(
            "tokyo",
            binding="MAIL",
            payload={"a": 1},
            cron="0 9 * * *",
            timezone="Asia/Tokyo",
            max_attempts=4,
        )
        assert (made["description"], made["options"]) == (
            "every day at 09:00, Asia/Tokyo",
            {"maxAttempts": 4},
        )
        assert [s["name"] for s in await schedules.list_schedules()] == ["tokyo"]
        assert (await schedules.pause_schedule("tokyo"))["paused"] is True
        assert (await schedules.resume_schedule("tokyo"))["paused"] is False
        assert readable(await schedules.trigger_schedule("tokyo")) == f"MAIL#0:tokyo-now-{T0}"
        assert (await schedules.update_schedule("tokyo", every_ms=60_000))["every_ms"] == 60_000
        with pytest.raises(ScheduleError) as caught:
            await schedules.update_schedule("tokyo", timezone="Europe/Paris")
        assert (caught.value.status, caught.value.field) == (400, "timezone")
        await schedules.delete_schedule("tokyo")
        assert await schedules.get_schedule("tokyo") is None
        with pytest.raises(ScheduleError) as caught:
            await schedules.delete_schedule("tokyo")
        assert caught.value.status == 404


async def test_a_wrong_token_is_a_401_schedule_error(world: World) -> None:
    transport = httpx.ASGITransport(app=with_env(world.app, world.env))
    async with httpx.AsyncClient(transport=transport) as http:
        schedules = AsyncTsumugiClient("http://scheduler.test", token="wrong", http_client=http)
        with pytest.raises(ScheduleError) as caught:
            await schedules.list_schedules()
    assert (caught.value.status, caught.value.message) == (401, "unauthorized")
