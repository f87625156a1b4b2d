"""Each Durable Object works on the raw state workerd passes its constructor (issue 22, ADR-0100).

workerd constructs a Python Durable Object with the raw JS ``(state, env)``; the SDK wraps them on
``self.ctx`` / ``self.env``. On the raw state a SQL row is a JsProxy that Python cannot subscript and
``getAlarm()`` with no alarm resolves to JS null (``jsnull``, not ``None``). The objects here are built by the
runtime exactly so: the test first shows the state is raw-shaped, then that each object still works.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pyodide.ffi import jsnull

from tests.integration.system_driver import SCHEDULER, Driver
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


async def test_the_run_and_scheduler_objects_serve_on_the_raw_state(
    system: LocalRuntime, clock: VirtualClock
) -> None:
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


async def test_the_sql_port_reads_rows_exactly_as_the_sdks_storage_wrapper_does(
    system: LocalRuntime, driver: Driver, clock: VirtualClock
) -> None:
    """ADR-0101: statements go to the raw SQL API; what comes back must equal the SDK wrapper's answer."""
    from tsumugi_scheduler._runtime import DurableObjectSql

    await driver.rest("POST", "/api/jobs", {"binding": "Hello", "payload": {"name": "Port"}})
    await clock.advance(1_000)
    shard = _instance(system, "TsumugiJobShard")
    wrapped = shard.ctx.storage  # type: ignore[attr-defined]
    port = DurableObjectSql(wrapped, shard.ctx._ctx.storage.sql)  # type: ignore[attr-defined]
    port.exec("CREATE TABLE IF NOT EXISTS port_check (i INTEGER, r REAL, t TEXT, b BLOB, n)")
    values = [(1, 1.5, "x", b"\x00\x01", None), (2**53 - 1, -0.25, "ü𝄞", None, None), (0, 3.0, "", b"", "s")]
    for row in values:
        port.exec("INSERT INTO port_check VALUES (?, ?, ?, ?, ?)", *row)
    query = "SELECT i, r, t, b, n FROM port_check ORDER BY rowid"
    through_sdk = [dict(row) for row in wrapped.sql.exec(query).toArray()]
    through_port = [dict(row) for row in port.exec(query).toArray()]
    assert through_port == through_sdk
    assert [type(row).__name__ for row in port.exec(query).toArray()] == ["JsDict"] * 3
    assert through_port[0]["n"] is None
    assert through_port[1]["b"] is None
    # Rows are read as value arrays and named by columnNames (ADR-0128): names in the same order, a repeated
    # name once with its last value, an array-index name first, as the wrapper's row objects have them.
    for named in (
        "SELECT t AS z, i AS a, r AS z, n FROM port_check ORDER BY rowid",
        'SELECT t AS "b", i AS "10", r AS "2", b AS "a" FROM port_check ORDER BY rowid',
        "SELECT i FROM port_check WHERE i < 0",
    ):
        expected = [list(row.items()) for row in wrapped.sql.exec(named).toArray()]
        assert [list(row.items()) for row in port.exec(named).toArray()] == expected
        assert [list(row.items()) for row in port.exec(named)] == expected
        for name in {name for row in expected for name, _ in row}:  # one column alone, no row made
            assert port.exec(named).column(name) == [dict(row)[name] for row in expected]
    assert port.exec(query).column("b") == [row["b"] for row in through_sdk]
    assert [k for k, _ in expected_keys(wrapped, 'SELECT 1 AS "b", 2 AS "10", 3 AS "2"')] == ["2", "10", "b"]
    one = "SELECT count(*) AS c, NULL AS z FROM port_check"
    assert dict(port.exec(one).one()) == dict(wrapped.sql.exec(one).one()) == {"c": 3, "z": None}


def expected_keys(wrapped: Any, query: str) -> list[tuple[str, Any]]:
    """The one row of ``query`` through the SDK's wrapped storage, as its items in order."""
    return list(wrapped.sql.exec(query).one().items())


async def test_the_sql_port_binds_the_largest_safe_integers_as_numbers(
    system: LocalRuntime, driver: Driver, clock: VirtualClock
) -> None:
    """Pyodide sends +-(2**53 - 1) as a BigInt, which workerd's SQL refuses (tests/ffi): the port sends the float
    it equals (the engine binds 2**53 - 1 as "every bucket" on each tick); past it, a BigInt is refused."""
    from pyodide.ffi import JsException

    from tsumugi_scheduler._runtime import DurableObjectSql

    await driver.rest("POST", "/api/jobs", {"binding": "Hello", "payload": {"name": "Bound"}})
    await clock.advance(1_000)
    shard = _instance(system, "TsumugiJobShard")
    port = DurableObjectSql(shard.ctx.storage, shard.ctx._ctx.storage.sql)  # type: ignore[attr-defined]
    for value in (2**53 - 1, -(2**53 - 1)):
        assert port.exec("SELECT ? AS v", value).one()["v"] == value
    with pytest.raises(JsException, match="Cannot convert a BigInt value to a number"):
        port.exec("SELECT ? AS v", 2**53)
