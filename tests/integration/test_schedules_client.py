"""The client's schedule calls over Service Binding RPC, through the local runtime's real Workers and clock.

A producer Worker's env reaches the scheduler's ``TsumugiRpc`` entrypoint (copy semantics across the
binding); the Scheduler object fires on the virtual clock and Hello runs the jobs.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.system_driver import Driver
from tests.support.derived_ids import readable
from tsumugi_client import ScheduleError, create_client
from tsumugi_dev.clock import VirtualClock

START = 1_767_225_600_000


async def test_create_fire_pause_resume_trigger_delete_over_rpc(clock: VirtualClock, driver: Driver) -> None:
    schedules = create_client()
    env = driver.producer_env
    created = await schedules.create_schedule(
        env, "every-2s", binding="Hello", payload={"name": "rpc"}, every_ms=2000
    )
    assert (created["source"], created["next_run_at"], created["description"]) == (
        "runtime",
        START + 2000,
        "every 2 seconds",
    )
    await clock.advance(4_100)
    hello = [j["id"] for j in await driver.jobs_of("Hello")]
    assert [readable(j) for j in hello] == [
        f"Hello#0:every-2s-{START + 2000}",
        f"Hello#0:every-2s-{START + 4000}",
    ]
    assert (await driver.job(hello[0])).state == "COMPLETED"

    assert (await schedules.pause_schedule(env, "every-2s"))["paused"] is True
    await clock.advance(10_000)
    assert len(await driver.jobs_of("Hello")) == 2
    job_id = await schedules.trigger_schedule(env, "every-2s")
    assert readable(job_id) == f"Hello#0:every-2s-now-{START + 14_100}"
    resumed = await schedules.resume_schedule(env, "every-2s")
    assert resumed["next_run_at"] == START + 16_000  # the phase of the first occurrence
    changed = await schedules.update_schedule(env, "every-2s", payload={"name": "changed"})
    assert (changed["payload"], changed["next_run_at"]) == ({"name": "changed"}, START + 16_000)

    listed = [s["name"] for s in await schedules.list_schedules(env)]
    assert listed == ["every-2s", "hello-every-10-minutes"]
    await schedules.delete_schedule(env, "every-2s")
    assert await schedules.get_schedule(env, "every-2s") is None


async def test_refusals_raise_schedule_error_with_status_field_and_rule(driver: Driver) -> None:
    schedules = create_client()
    env = driver.producer_env
    with pytest.raises(ScheduleError) as caught:
        await schedules.create_schedule(env, "bad", binding="Hello", payload=None, every_ms=10)
    assert (caught.value.status, caught.value.field, caught.value.rule) == (
        400,
        "everyMs",
        "must be an integer of at least 1000, got 10",
    )
    with pytest.raises(ScheduleError) as caught:
        await schedules.delete_schedule(env, "hello-every-10-minutes")
    assert caught.value.status == 409
    with pytest.raises(ScheduleError) as caught:
        await schedules.pause_schedule(env, "missing")
    assert (caught.value.status, caught.value.message) == (404, "schedule not found: missing")
    unknown: dict[str, Any] = {
        "delay_ms": 5
    }  # not a schedule option: pyright refuses it, the run-time check too
    with pytest.raises(ValueError, match="delay_ms is not a schedule option"):
        await schedules.create_schedule(env, "x", binding="Hello", payload=None, every_ms=1000, **unknown)


async def test_a_cron_is_stored_with_its_fields_one_space_apart(driver: Driver) -> None:
    schedules = create_client()
    env = driver.producer_env
    created = await schedules.create_schedule(
        env, "spaced", binding="Hello", payload=None, cron=" 0  9 * * *\n"
    )
    assert created["cron"] == "0 9 * * *"
    changed = await schedules.update_schedule(env, "spaced", cron="30\t10 * * 1-5 ")
    assert changed["cron"] == "30 10 * * 1-5"
    stored = await schedules.get_schedule(env, "spaced")
    assert stored is not None
    assert stored["cron"] == "30 10 * * 1-5"
