"""Per-key token buckets keep storage bounded: a full bucket is a missing one, so full rows go (ADR-0057)."""

from __future__ import annotations

from tests.unit.shard.shard_world import T0, World
from tsumugi_core.options import RateLimit
from tsumugi_core.policy import PolicyPatch
from tsumugi_scheduler.shard.records import Succeeded

INTERVAL = 1_000
PER_KEY = PolicyPatch(concurrency=500, per_key_rate=RateLimit(tokens=2, interval_ms=INTERVAL))


def bucket_rows(world: World) -> int:
    return int(world.sql.exec("SELECT COUNT(*) AS n FROM key_bucket").one()["n"])


def run_due_ticks(world: World, until: int) -> None:
    """Tick at every instant the shard asks to wake, up to ``until`` (acking the feeds, as the alarm does)."""
    for _ in range(200):
        changes = world.engine.changes()
        if changes:
            world.engine.ack_changes(changes[-1].job.seq)
        wake = world.engine.next_wake_at()
        if wake is None or wake > until:
            return
        world.clock.set(max(wake, world.clock.now_ms()))
        world.engine.tick()


def test_keys_used_once_leave_no_bucket_rows_behind(world: World) -> None:
    world.engine.configure(PER_KEY)
    jobs = [world.enqueue(concurrency_key=f"user-{i}") for i in range(3_000)]
    done = 0
    while done < len(jobs):
        batch = world.dispatch()
        assert batch
        for message in batch:
            world.engine.report(message.job_id, 1, Succeeded())
        done += len(batch)
    assert bucket_rows(world) == 3_000  # one spent token each: not full, so kept
    run_due_ticks(world, until=T0 + 60_000)  # 200 rows a tick, ticks at least 1 s apart when idle
    assert bucket_rows(world) == 0


def test_a_bucket_stays_while_it_is_not_full_and_a_dropped_one_acts_as_full(world: World) -> None:
    world.engine.configure(PER_KEY)
    for _ in range(3):
        world.enqueue(concurrency_key="k")
    world.engine.configure(PolicyPatch(per_key_concurrency=5))
    assert len(world.dispatch()) == 2  # two tokens, the third job waits for a refill
    world.clock.advance(INTERVAL // 2 - 1)
    world.engine.tick()
    assert bucket_rows(world) == 1  # not full yet: dropping it now would hand out tokens early
    world.clock.set(T0 + INTERVAL)
    assert len(world.dispatch()) == 1  # the refill is honoured, the bucket spent again
    world.clock.set(T0 + 2 * INTERVAL)
    world.engine.tick()
    assert bucket_rows(world) == 0  # a whole interval since its last refill: certainly full
    for _ in range(3):
        world.enqueue(concurrency_key="k")
    assert len(world.dispatch()) == 2  # a missing bucket is a full one: capacity 2, not more


def test_an_idle_shard_wakes_to_drop_full_buckets(world: World) -> None:
    world.engine.configure(PER_KEY)
    job_id = world.enqueue(concurrency_key="k")
    [message] = world.dispatch()
    world.engine.report(message.job_id, 1, Succeeded())
    world.engine.ack_changes(world.engine.changes()[-1].job.seq)
    world.engine.tick()
    wake = world.engine.next_wake_at()
    assert wake == T0 + 2 * INTERVAL  # the job's own retention would be 5 min away
    world.clock.set(wake)
    world.engine.tick()
    assert bucket_rows(world) == 0
    assert world.engine.get(job_id) is not None  # only the bucket went; the job waits for its retention


def test_removing_the_per_key_rate_drops_every_bucket(world: World) -> None:
    world.engine.configure(PER_KEY)
    world.enqueue(concurrency_key="a")
    world.enqueue(concurrency_key="b")
    world.dispatch()
    assert bucket_rows(world) == 2
    world.engine.configure(PolicyPatch(per_key_rate=None))
    world.engine.tick()
    assert bucket_rows(world) == 0


def test_finding_full_buckets_and_the_oldest_one_reads_the_refill_index(world: World) -> None:
    queries = [
        ("SELECT key FROM key_bucket WHERE refilled_at <= ? ORDER BY refilled_at LIMIT ?", (5, 200)),
        ("SELECT EXISTS (SELECT 1 FROM key_bucket WHERE refilled_at <= ?) AS v", (5,)),
        ("SELECT MIN(refilled_at) FROM key_bucket", ()),
    ]
    for query, params in queries:
        plan = " | ".join(str(r["detail"]) for r in world.sql.exec(f"EXPLAIN QUERY PLAN {query}", *params))
        assert "key_bucket_refilled" in plan, plan
