"""Each Durable Object works on the raw state workerd passes its constructor (issue 22, ADR-0100).

workerd constructs a Python Durable Object with the raw JS ``(state, env)``; the SDK wraps them on
``self.ctx`` / ``self.env``. On the raw state a SQL row is a JsProxy that Python cannot subscript and
``getAlarm()`` with no alarm resolves to JS null (``jsnull``, not ``None``). The objects here are built by the
runtime exactly so: the test first shows the state is raw-shaped, then that each object still works.
"""

from __future__ import annotations

import json

import pytest
from pyodide.ffi import jsnull
from system_driver import SCHEDULER, Driver

from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime


def _instance(system: LocalRuntime, class_name: str) -> object:
    hosts = [host for host in system.namespace(SCHEDULER, class_name).objects() if host.is_live]
    assert hosts, f"no live {class_name}"
    return hosts[0].instance()


async def _assert_raw_state(instance: object) -> None:
    raw = instance.ctx._ctx  # type: ignore[attr-defined]  # what the constructor received
    row = raw.storage.sql.exec("SELECT 1 AS v").one()
    with pytest.raises(TypeError, match="not subscriptable"):
        row["v"]
    assert row.to_py() == {"v": 1}
    alarm = await raw.storage.getAlarm()
    assert alarm is jsnull or isinstance(alarm, int)


async def test_the_job_shard_serves_jobs_on_the_raw_state(
    system: LocalRuntime, driver: Driver, clock: VirtualClock
) -> None:
    status, created = await driver.rest("POST", "/api/jobs", {"binding": "Hello", "payload": {"name": "Raw"}})
    assert status == 201
    await clock.advance(1_000)
    assert (await driver.job(created["id"])).state == "COMPLETED"
    await _assert_raw_state(_instance(system, "TsumugiJobShard"))


async def test_the_run_and_scheduler_objects_serve_on_the_raw_state(system: LocalRuntime, clock: VirtualClock) -> None:
    stub = system.env(SCHEDULER).RUN.getByName("raw-run")
    answer = dict(await stub.start("raw-run", "greetings", json.dumps({"names": ["A"]}), None, None, 0))
    assert answer["created"] is True
    await clock.advance(5_000)
    await _assert_raw_state(_instance(system, "TsumugiRun"))
    scheduler = system.env(SCHEDULER).SCHEDULER.getByName("raw-schedules")
    assert isinstance(await scheduler.sync(0), int)  # reconciles the code's schedules, arms its alarm
    await _assert_raw_state(_instance(system, "TsumugiScheduler"))


async def test_a_raw_alarm_of_null_is_no_alarm_for_the_hosts() -> None:
    from tsumugi_scheduler._runtime import current_alarm

    class RawStorage:
        async def getAlarm(self) -> object:
            return jsnull

    assert await current_alarm(RawStorage()) is None
