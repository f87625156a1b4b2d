"""The Scheduler Durable Object on a virtual clock: every timing rule, reconcile on deploy, run-time schedules.

The object's host runs over real SQLite (the local runtime's DO SQL) and enqueues into real JobShard hosts;
``alarm()`` is called as Cloudflare would when the armed instant comes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.api_world import T0, SchedulerObject, SteppedClock, World
from tests.support.derived_ids import readable
from tsumugi_scheduler.definition import TsumugiDefinition, define_tsumugi
from tsumugi_scheduler.schedules.host import SchedulerHost

MIN = 60_000


def definition(schedules: dict[str, Any] | None = None, **extra: Any) -> TsumugiDefinition:
    return define_tsumugi(
        performers=["MAIL", "SMS", "Notify"], bindings={"SMS": {"shards": 2}}, schedules=schedules, **extra
    )


EVERY_MINUTE = {"tick": {"binding": "MAIL", "payload": {"n": 1}, "every_ms": MIN}}


@pytest.fixture
async def code_world(tmp_path: Path, clock: SteppedClock) -> AsyncIterator[World]:
    built = World(tmp_path, clock, definition(EVERY_MINUTE))
    yield built
    await built.aclose()


def scheduler(world: World) -> SchedulerObject:
    return world.env.SCHEDULER.getByName("scheduler#0")


def jobs(world: World, binding: str = "MAIL") -> list[str]:
    name = f"{binding}#0"
    engine = world.shard(name).host.engine(name)
    if engine is None:
        return []
    rows = world.shard(name).sql.exec("SELECT id FROM job ORDER BY id").toArray()
    return [readable(str(r["id"])) for r in rows]


async def fire_at(world: World, at: int) -> None:
    world.clock.set(at)
    await scheduler(world).host.alarm()


async def view(world: World, name: str) -> dict[str, Any]:
    found = await scheduler(world).host.get(0, name)
    assert found is not None
    return found


class TestTiming:
    async def test_first_fire_is_one_period_after_registration_and_the_alarm_is_armed_for_it(
        self, code_world: World
    ) -> None:
        assert await scheduler(code_world).host.sync(0) == 1
        assert (await view(code_world, "tick"))["next_run_at"] == T0 + MIN
        assert scheduler(code_world).storage.alarm == T0 + MIN
        await fire_at(code_world, T0 + MIN - 1)
        assert jobs(code_world) == []
        await fire_at(code_world, T0 + MIN)
        assert jobs(code_world) == [f"MAIL#0:tick-{T0 + MIN}"]
        tick = await view(code_world, "tick")
        assert (tick["last_run_at"], readable(tick["last_job_id"]), tick["next_run_at"]) == (
            T0 + MIN,
            f"MAIL#0:tick-{T0 + MIN}",
            T0 + 2 * MIN,
        )
        assert scheduler(code_world).storage.alarm == T0 + 2 * MIN

    async def test_a_late_alarm_fires_only_the_oldest_missed_occurrence_and_keeps_the_phase(
        self, code_world: World
    ) -> None:
        await scheduler(code_world).host.sync(0)
        # The original's example: woken 3 periods + 1 s after registration.
        await fire_at(code_world, T0 + 3 * MIN + 1_000)
        assert jobs(code_world) == [f"MAIL#0:tick-{T0 + MIN}"]
        tick = await view(code_world, "tick")
        assert (tick["last_run_at"], tick["last_fired_at"], tick["next_run_at"]) == (
            T0 + MIN,
            T0 + 3 * MIN + 1_000,
            T0 + 4 * MIN,
        )

    async def test_overlap_skip_counts_a_skip_while_the_previous_job_is_active(
        self, code_world: World
    ) -> None:
        await scheduler(code_world).host.sync(0)
        await fire_at(code_world, T0 + MIN)
        # The first job was never dispatched: still SCHEDULED, so the next occurrence is skipped.
        await fire_at(code_world, T0 + 2 * MIN)
        tick = await view(code_world, "tick")
        assert jobs(code_world) == [f"MAIL#0:tick-{T0 + MIN}"]
        assert (tick["skipped_count"], tick["last_skipped_at"], tick["next_run_at"]) == (
            1,
            T0 + 2 * MIN,
            T0 + 3 * MIN,
        )

    async def test_overlap_skip_fires_again_once_the_previous_job_finished(self, code_world: World) -> None:
        await scheduler(code_world).host.sync(0)
        await fire_at(code_world, T0 + MIN)
        first = (await view(code_world, "tick"))["last_job_id"]
        assert readable(first) == f"MAIL#0:tick-{T0 + MIN}"
        assert (await code_world.shard("MAIL#0").host.cancel("MAIL#0", first))["ok"] is True  # now CANCELLED
        await fire_at(code_world, T0 + 2 * MIN)
        assert f"MAIL#0:tick-{T0 + 2 * MIN}" in jobs(code_world)

    async def test_overlap_overlap_fires_while_the_previous_job_is_active(
        self, tmp_path: Path, clock: SteppedClock
    ) -> None:
        schedules = {"tick": {**EVERY_MINUTE["tick"], "overlap": "overlap"}}
        world = World(tmp_path, clock, definition(schedules))
        try:
            await scheduler(world).host.sync(0)
            await fire_at(world, T0 + MIN)
            await fire_at(world, T0 + 2 * MIN)
            assert jobs(world) == [f"MAIL#0:tick-{T0 + MIN}", f"MAIL#0:tick-{T0 + 2 * MIN}"]
            assert (await view(world, "tick"))["skipped_count"] == 0
        finally:
            await world.aclose()

    async def test_an_alarm_that_runs_twice_enqueues_once(
        self, code_world: World, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        await scheduler(code_world).host.sync(0)
        host = scheduler(code_world).host
        store = host._store  # pyright: ignore[reportPrivateUsage]
        assert store is not None
        real_record = store.record
        calls: list[int] = []

        def crash_once(records: Any, now: int) -> None:
            calls.append(now)
            if len(calls) == 1:
                raise RuntimeError("object evicted after the enqueue, before the bookkeeping")
            real_record(records, now)

        monkeypatch.setattr(store, "record", crash_once)
        code_world.clock.set(T0 + MIN)
        with pytest.raises(RuntimeError):
            await host.alarm()
        await host.alarm()  # Cloudflare retries the alarm: the same occurrence fires again
        assert jobs(code_world) == [f"MAIL#0:tick-{T0 + MIN}"]
        assert (await view(code_world, "tick"))["next_run_at"] == T0 + 2 * MIN

    async def test_payload_as_a_function_of_scheduled_at_and_job_options(
        self, tmp_path: Path, clock: SteppedClock
    ) -> None:
        schedules = {
            "report": {
                "binding": "SMS",
                "payload": lambda at: {"at": at},
                "every_ms": MIN,
                "partition_key": "p",
                "max_attempts": 7,
                "priority": 4,
            }
        }
        world = World(tmp_path, clock, definition(schedules))
        try:
            await scheduler(world).host.sync(0)
            await fire_at(world, T0 + MIN)
            job_id = (await view(world, "report"))["last_job_id"]
            shard = job_id.split(":")[0]
            engine = world.shard(shard).host.engine(shard)
            assert engine is not None
            job = engine.get(job_id)
            assert job is not None
            assert (json.loads(job.payload), job.max_attempts, job.priority) == ({"at": T0 + MIN}, 7, 4)
        finally:
            await world.aclose()

    async def test_a_failing_payload_function_records_the_error_and_moves_on(
        self, tmp_path: Path, clock: SteppedClock
    ) -> None:
        def broken(at: int) -> Any:
            raise ValueError("no data yet")

        world = World(
            tmp_path, clock, definition({"b": {"binding": "MAIL", "payload": broken, "every_ms": MIN}})
        )
        try:
            await scheduler(world).host.sync(0)
            await fire_at(world, T0 + MIN)
            b = await view(world, "b")
            assert (b["last_error"], b["next_run_at"], jobs(world)) == (
                "ValueError: no data yet",
                T0 + 2 * MIN,
                [],
            )
        finally:
            await world.aclose()

    async def test_cron_across_a_daylight_saving_gap_fires_once_at_the_first_valid_minute(
        self, tmp_path: Path, clock: SteppedClock
    ) -> None:
        # Berlin: 2026-03-29 02:00 CET -> 03:00 CEST. 02:30 does not exist: it fires at 03:00 CEST = 01:00Z.
        schedules = {
            "night": {"binding": "MAIL", "payload": None, "cron": "30 2 * * *", "timezone": "Europe/Berlin"}
        }
        before = 1_774_728_000_000  # 2026-03-28T20:00Z
        clock.set(before)
        world = World(tmp_path, clock, definition(schedules))
        try:
            await scheduler(world).host.sync(0)
            gap_end = 1_774_746_000_000  # 2026-03-29T01:00Z
            assert (await view(world, "night"))["next_run_at"] == gap_end
            await fire_at(world, gap_end)
            assert jobs(world) == [f"MAIL#0:night-{gap_end}"]
            assert (await view(world, "night"))["next_run_at"] == gap_end + 23 * 3_600_000 + 30 * MIN
        finally:
            await world.aclose()


class TestReconcile:
    async def deploy(self, world: World, schedules: dict[str, Any]) -> SchedulerHost:
        """A new version of the code over the same object storage, as a deploy restarts the object."""
        obj = scheduler(world)
        world.env.SCHEDULER.definition = definition(schedules)
        obj.host = SchedulerHost(obj.storage, obj.sql, world.env, definition(schedules))
        return obj.host

    async def test_new_changed_timing_changed_target_and_removed(self, code_world: World) -> None:
        await scheduler(code_world).host.sync(0)
        await fire_at(code_world, T0 + MIN)  # next run T0 + 2 min: the phase
        code_world.clock.set(T0 + MIN + 5_000)
        host = await self.deploy(
            code_world,
            {
                "tick": {"binding": "Notify", "payload": {"n": 2}, "every_ms": MIN},  # target changed
                "new": {"binding": "MAIL", "payload": None, "every_ms": 10 * MIN},
            },
        )
        await host.sync(0)
        tick, new = await view(code_world, "tick"), await view(code_world, "new")
        assert (tick["target"], tick["payload"], tick["next_run_at"]) == ("Notify", {"n": 2}, T0 + 2 * MIN)
        assert readable(tick["last_job_id"]) == f"MAIL#0:tick-{T0 + MIN}"  # bookkeeping kept
        assert new["next_run_at"] == T0 + MIN + 5_000 + 10 * MIN
        host = await self.deploy(
            code_world, {"tick": {"binding": "Notify", "payload": {"n": 2}, "every_ms": 5 * MIN}}
        )
        await host.sync(0)
        assert (await view(code_world, "tick"))["next_run_at"] == T0 + MIN + 5_000 + 5 * MIN  # timing changed
        assert await host.get(0, "new") is None  # removed from the code
        host = await self.deploy(code_world, {})
        assert await host.sync(0) == 0
        assert scheduler(code_world).storage.alarm is None

    async def test_pause_survives_a_deploy_and_runtime_schedules_are_kept(self, code_world: World) -> None:
        host = scheduler(code_world).host
        await host.sync(0)
        assert (await host.pause(0, "tick"))["schedule"]["paused"] is True
        created = await host.create(0, {"name": "rt", "binding": "MAIL", "payload": 1, "everyMs": 2 * MIN})
        assert created["ok"] is True
        host = await self.deploy(
            code_world, {"tick": {"binding": "MAIL", "payload": {"n": 3}, "every_ms": MIN}}
        )
        await host.sync(0)
        assert (await view(code_world, "tick"))["paused"] is True
        assert (await view(code_world, "rt"))["source"] == "runtime"
        await fire_at(code_world, T0 + 5 * MIN)
        assert jobs(code_world) == [f"MAIL#0:rt-{T0 + 2 * MIN}"]  # the paused one did not fire

    async def test_an_unchanged_definition_is_not_rewritten(self, code_world: World) -> None:
        host = scheduler(code_world).host
        await host.sync(0)
        before = await view(code_world, "tick")
        code_world.clock.advance(30_000)
        host = await self.deploy(code_world, EVERY_MINUTE)
        await host.sync(0)
        assert await view(code_world, "tick") == {**before, "next_occurrences": before["next_occurrences"]}


class TestControls:
    async def test_pause_stops_resume_restarts_from_the_next_boundary(self, code_world: World) -> None:
        host = scheduler(code_world).host
        await host.sync(0)
        await host.pause(0, "tick")
        assert scheduler(code_world).storage.alarm is None
        await fire_at(code_world, T0 + 3 * MIN + 10)
        assert jobs(code_world) == []
        resumed = await host.resume(0, "tick")
        assert resumed["schedule"]["next_run_at"] == T0 + 4 * MIN  # phase kept, nothing missed fires
        assert scheduler(code_world).storage.alarm == T0 + 4 * MIN

    async def test_trigger_fires_once_at_once_and_keeps_the_next_run(self, code_world: World) -> None:
        host = scheduler(code_world).host
        await host.sync(0)
        code_world.clock.set(T0 + 1_234)
        answer = await host.trigger(0, "tick")
        assert readable(answer["job_id"]) == f"MAIL#0:tick-now-{T0 + 1_234}"
        assert jobs(code_world) == [readable(answer["job_id"])]
        assert (answer["schedule"]["next_run_at"], answer["schedule"]["last_job_id"]) == (
            T0 + MIN,
            answer["job_id"],
        )

    async def test_runtime_create_update_delete(self, code_world: World) -> None:
        host = scheduler(code_world).host
        body = {
            "name": "cust-7",
            "binding": "MAIL",
            "payload": {"c": 7},
            "cron": "0 9 * * *",
            "timezone": "Asia/Tokyo",
            "maxAttempts": 2,
        }
        created = await host.create(0, body)
        assert created["ok"] is True
        schedule = created["schedule"]
        day = 86_400_000  # T0 is 09:00 in Tokyo exactly: the first fire is the next day's
        assert (schedule["next_run_at"], schedule["description"], schedule["options"]) == (
            T0 + day,
            "every day at 09:00, Asia/Tokyo",
            {"maxAttempts": 2},
        )
        assert (await host.create(0, body))["status"] == 409
        changed = await host.update(0, "cust-7", {"payload": {"c": 8}})
        assert (changed["schedule"]["payload"], changed["schedule"]["next_run_at"]) == ({"c": 8}, T0 + day)
        changed = await host.update(0, "cust-7", {"everyMs": 5 * MIN})
        assert (
            changed["schedule"]["every_ms"],
            changed["schedule"]["cron"],
            changed["schedule"]["timezone"],
            changed["schedule"]["next_run_at"],
        ) == (5 * MIN, None, "UTC", T0 + 5 * MIN)
        assert (await host.delete(0, "cust-7"))["ok"] is True
        assert await host.get(0, "cust-7") is None
        assert (await host.delete(0, "cust-7"))["status"] == 404

    async def test_code_schedules_are_read_only_at_run_time(self, code_world: World) -> None:
        host = scheduler(code_world).host
        await host.sync(0)
        for answer in (await host.update(0, "tick", {"payload": 2}), await host.delete(0, "tick")):
            assert (answer["status"], answer["error"]) == (
                409,
                "schedule tick is defined in code and is read-only; pause, resume and trigger it, "
                "or change it in the code",
            )
        assert (await host.create(0, {"name": "tick", "binding": "MAIL", "payload": 1, "everyMs": 1000}))[
            "status"
        ] == 409

    @pytest.mark.parametrize(
        ("body", "field", "rule"),
        [
            ({"binding": "MAIL", "payload": 1, "everyMs": 1000}, "name", "is required"),
            (
                {"name": "a", "binding": "MAIL", "payload": 1, "everyMs": 999},
                "everyMs",
                "must be an integer of at least 1000, got 999",
            ),
            ({"name": "a", "binding": "MAIL", "payload": 1}, "everyMs", "or cron: exactly one is required"),
            (
                {"name": "a", "binding": "MAIL", "payload": 1, "cron": "0 0 31 2 *"},
                "cron",
                "is invalid: no occurrence within 1830 days",
            ),
            (
                {"name": "a", "binding": "MAIL", "payload": 1, "cron": "0 3 * * *", "timezone": "Moon/Base"},
                "timezone",
                "must be an IANA time zone such as Asia/Tokyo, got 'Moon/Base'",
            ),
            (
                {"name": "a", "binding": "MAIL", "payload": 1, "everyMs": 1000, "uniqueKey": "u"},
                "uniqueKey",
                "is not allowed in a schedule: the occurrence sets the job's id and time",
            ),
            (
                {"name": "a", "binding": "MAIL", "payload": 1, "everyMs": 1000, "maxAttempts": 0},
                "maxAttempts",
                "must be at least 1",
            ),
            (
                {"name": "a", "binding": "SMS", "payload": 1, "everyMs": 1000},
                "partitionKey",
                "is required: SMS is split into 2 shards",
            ),
            (
                {"name": "a", "binding": "Nope", "payload": 1, "everyMs": 1000},
                "binding",
                "is not a registered performer: Nope",
            ),
            ({"name": "a", "binding": "MAIL", "everyMs": 1000}, "payload", "is required"),
            (
                {"name": "a", "binding": "MAIL", "payload": 1, "everyMs": 1000, "overlap": "never"},
                "overlap",
                "must be 'skip' or 'overlap', got 'never'",
            ),
        ],
    )
    async def test_invalid_bodies_name_the_field_as_sent(
        self, code_world: World, body: dict[str, Any], field: str, rule: str
    ) -> None:
        answer = await scheduler(code_world).host.create(0, body)
        assert (answer["status"], answer["field"], answer["rule"]) == (400, field, rule)
        assert await scheduler(code_world).host.get(0, "a") is None


async def test_schedules_shard_by_name_across_objects(tmp_path: Path, clock: SteppedClock) -> None:
    names = [f"s{i}" for i in range(12)]
    schedules = {n: {"binding": "MAIL", "payload": n, "every_ms": MIN} for n in names}
    world = World(tmp_path, clock, definition(schedules, schedule_shards=3))
    try:
        from tsumugi_scheduler.schedules.directory import ScheduleDirectory

        directory = ScheduleDirectory(world.env, world.env.SCHEDULER.definition)
        await directory.sync()
        held = {
            name: len(await obj.host.list(int(name.split("#")[1])))
            for name, obj in world.env.SCHEDULER.objects.items()
        }
        assert sorted(held) == ["scheduler#0", "scheduler#1", "scheduler#2"]
        assert sum(held.values()) == 12
        assert all(count > 0 for count in held.values())
        assert [v["name"] for v in await directory.list()] == sorted(names)
        assert (await directory.call("pause", "s5"))["schedule"]["paused"] is True
    finally:
        await world.aclose()
