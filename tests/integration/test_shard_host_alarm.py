"""The shard host arms one alarm: a due alarm absorbs a burst of commands; dispatch bodies carry max_attempts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.support.clock import START_MS, installed
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.d1 import D1Database, apply_d1_migrations
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.consumer import QueuedDispatch
from tsumugi_scheduler.definition import define_tsumugi
from tsumugi_scheduler.shard.engine import PROJECTION_HOLD_MS
from tsumugi_scheduler.shard_host import JobShardHost

NOW = START_MS
MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"
SHARD = "Hello#0"


class Storage:
    """The alarm half of ``ctx.storage``."""

    def __init__(self, alarm: int | None) -> None:
        self.alarm = alarm
        self.set_calls: list[int] = []

    async def getAlarm(self) -> int | None:
        return self.alarm

    async def setAlarm(self, at: int) -> None:
        self.set_calls.append(at)
        self.alarm = at

    async def deleteAlarm(self) -> None:
        self.alarm = None


class Queue:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def sendBatch(self, messages: list[dict[str, Any]]) -> None:
        # A dispatch crosses as its JSON text (ADR-0166): kept here decoded, with its content type.
        self.sent.extend({**m, "body": json.loads(m["body"])} for m in messages)


OPENED: list[SqlStorage | D1Database] = []
"""Databases a test's host opened; closed when the test ends."""


class Env:
    def __init__(self) -> None:
        self.TSUMUGI_QUEUE = Queue()
        self.TSUMUGI_DB = D1Database(":memory:")
        OPENED.append(self.TSUMUGI_DB)
        apply_d1_migrations(self.TSUMUGI_DB, MIGRATIONS)


@pytest.fixture(autouse=True)
def clock() -> Iterator[VirtualClock]:
    with installed(VirtualClock(NOW)) as virtual:
        yield virtual
    while OPENED:
        OPENED.pop().close()


def host_with(alarm: int | None) -> tuple[JobShardHost, Storage, list[int]]:
    storage = Storage(alarm)
    sql = SqlStorage()
    OPENED.append(sql)
    host = JobShardHost(storage, sql, Env(), define_tsumugi(performers=["Hello"]))
    engine = host.engine(SHARD)
    assert engine is not None
    computed: list[int] = []
    original = engine.next_wake_at

    def counting() -> int | None:
        computed.append(1)
        return original()

    engine.next_wake_at = counting
    return host, storage, computed


def item(name: str, **options: Any) -> dict[str, Any]:
    return {"binding": "Hello", "payload": {"name": name}, **options}


async def test_a_due_alarm_absorbs_a_burst_of_commands_without_recomputing_the_wake() -> None:
    host, storage, computed = host_with(alarm=NOW - 5)
    for i in range(10):
        await host.enqueue_many(SHARD, [item(f"n{i}")])
    assert computed == []
    assert storage.set_calls == []
    assert storage.alarm == NOW - 5


async def test_without_an_alarm_a_command_arms_one_at_the_wake_instant() -> None:
    host, storage, computed = host_with(alarm=None)
    await host.enqueue_many(SHARD, [item("a")])
    assert computed == [1]
    assert storage.set_calls == [NOW]


async def test_a_later_alarm_is_moved_earlier_when_work_is_due_now() -> None:
    host, storage, _ = host_with(alarm=NOW + 60_000)
    await host.enqueue_many(SHARD, [item("a")])
    assert storage.set_calls == [NOW]


async def test_dispatch_bodies_carry_each_jobs_max_attempts() -> None:
    host, storage, _ = host_with(alarm=None)
    ids = await host.enqueue_many(SHARD, [item("a", maxAttempts=7), item("b")])
    storage.alarm = None  # the alarm is running: getAlarm answers None
    await host.alarm()
    queue = host._env.TSUMUGI_QUEUE  # pyright: ignore[reportPrivateUsage]
    attempts = {m["body"]["jobId"]: m["body"]["maxAttempts"] for m in queue.sent}
    assert attempts == {ids[0]: 7, ids[1]: 3}
    assert NOW + 5_000 not in storage.set_calls  # the tick did not fail


async def test_dispatch_bodies_have_exactly_the_queued_dispatch_fields_the_consumer_decodes() -> None:
    host, storage, _ = host_with(alarm=None)
    ids = await host.enqueue_many(SHARD, [item("a", maxAttempts=4), item("b")])
    storage.alarm = None
    await host.alarm()
    queue = host._env.TSUMUGI_QUEUE  # pyright: ignore[reportPrivateUsage]
    assert sorted(m["body"]["jobId"] for m in queue.sent) == sorted(ids)
    assert [set(m) for m in queue.sent] == [{"body", "contentType"}, {"body", "contentType"}]
    assert {m["contentType"] for m in queue.sent} == {"text"}
    (body,) = [m["body"] for m in queue.sent if m["body"]["jobId"] == ids[0]]
    assert set(body) == {f.encode_name for f in msgspec.structs.fields(QueuedDispatch)}
    decoded = msgspec.convert(body, QueuedDispatch)
    assert (decoded.attempt, decoded.max_attempts, decoded.claim_required) == (1, 4, False)
    assert decoded.deadline_at is not None
    assert decoded.deadline_at > NOW


async def dispatched(count: int) -> tuple[JobShardHost, Storage, list[str]]:
    host, storage, _ = host_with(alarm=None)
    ids = await host.enqueue_many(SHARD, [item(f"n{i}") for i in range(count)])
    storage.alarm = None
    await host.alarm()
    return host, storage, ids


def count_outer_transactions(host: JobShardHost) -> list[int]:
    sql = host._sql  # pyright: ignore[reportPrivateUsage]
    calls: list[int] = []
    depth = [0]
    original = sql.transaction_sync

    def counting(fn: Any) -> Any:
        if depth[0] == 0:
            calls.append(1)  # an outermost transaction: one commit
        depth[0] += 1
        try:
            return original(fn)
        finally:
            depth[0] -= 1

    sql.transaction_sync = counting
    return calls


async def test_reports_arriving_together_commit_as_one_group() -> None:
    host, _, ids = await dispatched(5)
    outer = count_outer_transactions(host)
    answers = await asyncio.gather(*(host.report(SHARD, i, 1, {"ok": True, "result": None}) for i in ids))
    assert answers == [{"accepted": True, "state": "COMPLETED"}] * 5
    assert len(outer) == 1
    engine = host.engine()
    assert engine is not None
    assert {engine.get(i).state.value for i in ids} == {"COMPLETED"}  # type: ignore[union-attr]


def failing_report_for(host: JobShardHost, failing_id: str) -> Any:
    """The host's engine, whose store fails to complete ``failing_id``, alone or in a group (the others apply
    as usual: a group holding it rolls back and its reports are applied one by one, ADR-0153)."""
    engine = host.engine()
    assert engine is not None
    store = engine._store  # pyright: ignore[reportPrivateUsage]
    complete, complete_many = store.complete, store.complete_many

    def one(job_id: str, *args: Any, **kwargs: Any) -> Any:
        if job_id == failing_id:
            raise RuntimeError("disk on fire")
        return complete(job_id, *args, **kwargs)

    def many(reports: Any, *args: Any) -> Any:
        if any(job_id == failing_id for job_id, _, _ in reports):
            raise RuntimeError("disk on fire")
        return complete_many(reports, *args)

    store.complete, store.complete_many = one, many  # pyright: ignore[reportAttributeAccessIssue]
    return engine


async def test_a_refused_or_failing_report_leaves_the_rest_of_its_group_applied() -> None:
    host, _, ids = await dispatched(3)
    engine = failing_report_for(host, ids[2])
    ok = {"ok": True, "result": None}
    results = await asyncio.gather(
        host.report(SHARD, ids[0], 1, ok),
        host.report(SHARD, ids[1], 9, ok),
        host.report(SHARD, ids[2], 1, ok),
        return_exceptions=True,
    )
    assert results[0] == {"accepted": True, "state": "COMPLETED"}
    assert results[1] == {"accepted": False, "state": "QUEUED"}  # a stale attempt is refused
    assert isinstance(results[2], RuntimeError)
    assert [engine.get(i).state.value for i in ids] == ["COMPLETED", "QUEUED", "QUEUED"]  # type: ignore[union-attr]


async def test_a_cancelled_first_report_still_applies_the_reports_waiting_on_it() -> None:
    host, _, ids = await dispatched(2)
    ok = {"ok": True, "result": None}
    first = asyncio.ensure_future(host.report(SHARD, ids[0], 1, ok))
    second = asyncio.ensure_future(host.report(SHARD, ids[1], 1, ok))
    await asyncio.sleep(0)  # one turn: the first now leads a group the second has joined
    first.cancel()
    assert await second == {"accepted": True, "state": "COMPLETED"}
    with pytest.raises(asyncio.CancelledError):
        await first
    engine = host.engine()
    assert engine is not None
    assert [engine.get(i).state.value for i in ids] == ["COMPLETED", "COMPLETED"]  # type: ignore[union-attr]


async def read_model_states(host: JobShardHost) -> dict[str, str]:
    d1 = host._env.TSUMUGI_DB  # pyright: ignore[reportPrivateUsage]
    answer = await d1.prepare("SELECT id, state FROM job").all()
    return {row["id"]: row["state"] for row in answer.results}


async def test_a_short_job_dispatched_by_the_tick_that_read_it_is_projected_once_completed() -> None:
    host, storage, [job_id] = await dispatched(1)
    # Read SCHEDULED before the tick, but the tick dispatched it: that snapshot is left out (ADR-0132).
    assert await read_model_states(host) == {}
    assert storage.alarm == NOW + PROJECTION_HOLD_MS  # the dispatch alone does not wake the shard
    assert await host.report(SHARD, job_id, 1, {"ok": True, "result": "hi"}) == {
        "accepted": True,
        "state": "COMPLETED",
    }
    assert storage.alarm == NOW  # the report does, at once
    storage.alarm = None
    engine = host.engine()
    assert engine is not None
    assert [s.job.state.value for s in engine.changes()] == ["COMPLETED"]  # QUEUED was overtaken
    await host.alarm()
    assert await read_model_states(host) == {job_id: "COMPLETED"}


async def test_a_job_still_running_when_the_hold_ends_is_projected_queued(clock: VirtualClock) -> None:
    host, storage, [job_id] = await dispatched(1)
    await clock.advance(PROJECTION_HOLD_MS)
    assert storage.alarm == NOW + PROJECTION_HOLD_MS  # due now
    storage.alarm = None
    await host.alarm()
    assert await read_model_states(host) == {job_id: "QUEUED"}


async def test_report_many_applies_one_group_and_answers_each_report_in_order() -> None:
    host, _, ids = await dispatched(3)
    engine = failing_report_for(host, ids[2])
    outer = count_outer_transactions(host)
    ok = {"ok": True, "result": None}
    answers = await host.report_many(
        SHARD,
        [
            {"jobId": ids[0], "attempt": 1, "outcome": ok},
            {"jobId": ids[1], "attempt": 9, "outcome": ok},
            {"jobId": ids[2], "attempt": 1, "outcome": ok},
        ],
    )
    assert answers == [
        {"accepted": True, "state": "COMPLETED"},
        {"accepted": False, "state": "QUEUED"},  # a stale attempt is refused
        {"error": "RuntimeError: disk on fire"},
    ]
    assert len(outer) == 1
    assert [engine.get(i).state.value for i in ids] == ["COMPLETED", "QUEUED", "QUEUED"]  # type: ignore[union-attr]


async def test_dispatches_are_sent_before_the_projection_is_awaited() -> None:
    host, storage, _ = host_with(alarm=None)
    # A delayed job gives the alarm something to project (a dispatched job's pre-tick snapshot is left out).
    [job_id, later] = await host.enqueue_many(SHARD, [item("a"), item("b", delayMs=60_000)])
    env = host._env  # pyright: ignore[reportPrivateUsage]
    d1, gate, seen_in_queue = env.TSUMUGI_DB, asyncio.Event(), []

    class SlowD1:
        def prepare(self, sql: str) -> Any:
            return d1.prepare(sql)

        async def batch(self, statements: Any) -> Any:
            seen_in_queue.append([m["body"]["jobId"] for m in env.TSUMUGI_QUEUE.sent])
            await gate.wait()  # D1 is slow: the consumer must already have the work
            return await d1.batch(statements)

    env.TSUMUGI_DB = SlowD1()
    storage.alarm = None
    alarm = asyncio.ensure_future(host.alarm())
    for _ in range(100):  # loop turns, not time: the alarm reaches D1 within a few
        if seen_in_queue:
            break
        await asyncio.sleep(0)
    assert seen_in_queue == [[job_id]]
    gate.set()
    await alarm
    env.TSUMUGI_DB = d1
    assert await read_model_states(host) == {later: "SCHEDULED"}  # the change read before the tick


async def test_the_feed_can_stop_at_a_position() -> None:
    host, _, _ = host_with(alarm=None)
    engine = host.engine()
    assert engine is not None
    [first] = await host.enqueue_many(SHARD, [item("a")])
    head = engine.feed_head()
    [second] = await host.enqueue_many(SHARD, [item("b")])
    assert [s.job.id for s in engine.changes(10, head)] == [first]
    assert [s.job.id for s in engine.changes(10)] == [first, second]
    assert engine.feed_head() > head
