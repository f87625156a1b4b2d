"""The job feed's rows as JSON arrays (ADR-0180): the same jobs as a plain read, whatever the values."""

from __future__ import annotations

import json

from tests.unit.shard.shard_world import World
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.shard import queries
from tsumugi_scheduler.shard.records import Failed, Succeeded
from tsumugi_scheduler.shard.sql_store import SqlShardStore


def test_the_feed_reads_every_field_as_a_plain_read_does(world: World) -> None:
    store = SqlShardStore(world.sql)
    done = world.enqueue(concurrency_key="k]", unique_key="u", priority=-3, traceparent=None)
    failed = world.enqueue(payload={"text": 'ends in "]"', "n": [1, 2.5, None]}, max_attempts=1)
    waiting = world.enqueue(delay_ms=5_000, expires_at=world.clock.now_ms() + 10**6)
    world.dispatch()
    world.engine.heartbeat(done, 1, 0.25)
    world.engine.report(done, 1, Succeeded(result={"r": "]"}))
    world.engine.report(failed, 1, Failed(error="boom ]", retryable=False))
    feed = store.job_feed(0, 10)
    assert {row.id for row in feed} == {done, failed, waiting}
    for row in feed:
        assert row == store.job(row.id)
        assert type(row.state) is type(store.job(row.id).state)  # pyright: ignore[reportOptionalMemberAccess]


def test_a_row_longer_than_one_call_is_spliced_into_one_array() -> None:
    # workerd allows 32 arguments a call: a longer row is built in parts and spliced (ADR-0180).
    columns = tuple(f"c{i}" for i in range(7))
    with SqlStorage() as sql:
        sql.exec(f"CREATE TABLE t ({', '.join(columns)})")
        values = ["]", None, 1, 2.5, '"]"', "[]", -7]
        sql.exec(f"INSERT INTO t VALUES ({', '.join('?' * len(columns))})", *values)
        expression = queries._row_as_json_array(columns, per_call=3)  # pyright: ignore[reportPrivateUsage]
        assert expression.count("json_array(") == 3
        [row] = sql.exec(f"SELECT {expression} AS a FROM t").toArray()
        assert json.loads(row["a"]) == values
