"""The store's use-case methods: per-key buckets travel with the dispatch read and write; success bookkeeping."""

from __future__ import annotations

from tests.unit.shard.shard_world import T0, World
from tsumugi_core.options import RateLimit
from tsumugi_core.policy import PolicyPatch
from tsumugi_core.throttle import TokenBucket
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.shard.changes import NoticeWriter, completion
from tsumugi_scheduler.shard.port import CompletedJob, FeedStore, JobChange, ShardStore
from tsumugi_scheduler.shard.records import NoticeConfig
from tsumugi_scheduler.shard.sql_store import SqlShardStore


def test_one_store_serves_both_ports_and_the_window_brings_its_keys_buckets(world: World) -> None:
    store = SqlShardStore(world.sql)
    commands: ShardStore = store
    feeds: FeedStore = store
    world.enqueue(concurrency_key="a")
    store.save_buckets(
        {"a": TokenBucket(tokens=0.25, refilled_at=T0), "unrelated": TokenBucket(tokens=1, refilled_at=0)}
    )
    window = commands.ready_window(T0, 10, None, key_buckets=True)
    assert window.key_buckets == {"a": TokenBucket(tokens=0.25, refilled_at=T0)}
    assert commands.ready_window(T0, 10, None).key_buckets == {}
    assert feeds.counts()["SCHEDULED"] == 1


def test_dispatch_stores_the_key_buckets_that_paid_for_a_batch_and_none_for_an_empty_one() -> None:
    with SqlStorage() as sql:
        store = SqlShardStore(sql)
        spent = {"a": TokenBucket(tokens=0.0, refilled_at=5)}
        assert store.dispatch([], 5, spent) == {}
        assert store.buckets(["a"]) == {}
        store.dispatch(["MAIL#0:gone"], 5, spent)  # the batch is attempted, so its tokens count
        assert store.buckets(["a"]) == spent


def test_per_key_rate_is_paid_once_across_ticks(world: World) -> None:
    world.engine.configure(
        PolicyPatch(per_key_concurrency=5, per_key_rate=RateLimit(tokens=1, interval_ms=1000))
    )
    world.enqueue(concurrency_key="a")
    world.enqueue(concurrency_key="a")
    assert len(world.dispatch()) == 1
    assert world.dispatch() == []  # the key's bucket was stored with the first dispatch
    world.clock.advance(1000)
    assert len(world.dispatch()) == 1


def test_complete_appends_the_bookkeeping_rows_only_when_the_attempt_was_live(world: World) -> None:
    store = SqlShardStore(world.sql)
    job_id = world.enqueue(run_id="flow:r", node_id="n")
    world.dispatch()
    writer = NoticeWriter(NoticeConfig(), "MAIL")
    seen: list[str] = []

    def bookkeeping(job: CompletedJob) -> JobChange:
        seen.append(job.id)
        return completion(job, T0, writer)

    assert store.complete(job_id, 2, T0, None, bookkeeping) is None  # not the live attempt
    assert (seen, world.engine.run_events()) == ([], [])
    done = store.complete(job_id, 1, T0, '"r"', bookkeeping)
    assert (done is not None, seen) == (True, [job_id])
    [event] = world.engine.run_events()  # the run event was written by the same call
    assert (event.job_id, event.result) == (job_id, '"r"')
