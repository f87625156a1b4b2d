"""The client's schedule calls over HTTP against the real REST app (in process, httpx ASGI transport)."""

from __future__ import annotations

import httpx
import pytest

from tests.api.api_world import T0, TOKEN, World, with_env
from tsumugi_client import ScheduleError, create_schedule_client


async def test_the_http_client_round_trips_every_call(world: World) -> None:
    transport = httpx.ASGITransport(app=with_env(world.app, world.env))
    async with httpx.AsyncClient(transport=transport) as http:
        schedules = create_schedule_client(base_url="http://scheduler.test/", token=TOKEN, http_client=http)
        made = await schedules.create(
            None,
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
        assert [s["name"] for s in await schedules.list()] == ["tokyo"]
        assert (await schedules.pause(None, "tokyo"))["paused"] is True
        assert (await schedules.resume(None, "tokyo"))["paused"] is False
        assert await schedules.trigger(None, "tokyo") == f"MAIL#0:tokyo-now-{T0}"
        assert (await schedules.update(None, "tokyo", every_ms=60_000))["every_ms"] == 60_000
        with pytest.raises(ScheduleError) as caught:
            await schedules.update(None, "tokyo", timezone="Europe/Paris")
        assert (caught.value.status, caught.value.field) == (400, "timezone")
        await schedules.delete(None, "tokyo")
        assert await schedules.get(None, "tokyo") is None
        with pytest.raises(ScheduleError) as caught:
            await schedules.delete(None, "tokyo")
        assert caught.value.status == 404


async def test_a_wrong_token_is_a_401_schedule_error(world: World) -> None:
    transport = httpx.ASGITransport(app=with_env(world.app, world.env))
    async with httpx.AsyncClient(transport=transport) as http:
        schedules = create_schedule_client(base_url="http://scheduler.test", token="wrong", http_client=http)
        with pytest.raises(ScheduleError) as caught:
            await schedules.list()
    assert (caught.value.status, caught.value.message) == (401, "unauthorized")
