"""One tick over a random backlog dispatches exactly the reference batch chosen over the whole backlog.

The backlogs mix what broke dispatch before issue 10: hundreds of jobs on one busy key ahead of other keys
(item 2) and hundreds of priority levels with the oldest the lowest (item 3), with aging, delays and jobs
already in flight. The reference (``invariants.greedy_choice``) sorts every ready job; the engine reads indexes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.property.invariants import ReadyJob, greedy_choice, idle_slot_violations, priority_order_violations
from tsumugi_core.options import EnqueueItem
from tsumugi_core.policy import PolicyPatch
from tsumugi_core.priority import effective_priority
from tsumugi_core.testing import FixedClock, FixedRandom, SequentialIds
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.shard.engine import JobShardEngine
from tsumugi_scheduler.shard.records import Succeeded
from tsumugi_scheduler.shard.tick import MAX_DISPATCH_PER_TICK

EXAMPLES = int(os.environ.get("TSUMUGI_PROPERTY_EXAMPLES", "60"))
START_MS = 1_700_000_000_000
DAY_MS = 86_400_000


@dataclass(frozen=True)
class Burst:
    count: int
    key: str | None
    first_priority: int
    spread: int
    """0: every job at ``first_priority``; +1/-1: one level per job, ascending or descending."""
    delay_ms: int
    advance_ms: int


bursts = st.builds(
    Burst,
    count=st.sampled_from([1, 2, 7, 60, 320]),
    key=st.sampled_from([None, "hot", "hot", "k1", "k2"]),
    first_priority=st.integers(-5, 5),
    spread=st.sampled_from([0, 0, 1, -1]),
    delay_ms=st.sampled_from([0, 0, 0, 3_000]),
    advance_ms=st.sampled_from([0, 1, 700, 61_000, 3_600_000]),
)


def _enqueue(engine: JobShardEngine, clock: FixedClock, burst: Burst) -> list[str]:
    clock.advance(burst.advance_ms)
    items = [
        EnqueueItem(
            binding="MAIL",
            payload=n,
            concurrency_key=burst.key,
            priority=burst.first_priority + burst.spread * n,
            delay_ms=burst.delay_ms or None,
        )
        for n in range(burst.count)
    ]
    return [r.id for r in engine.enqueue_many(items)]


@given(
    plan=st.lists(bursts, min_size=1, max_size=4),
    concurrency=st.integers(1, 120),
    per_key=st.integers(1, 3),
    aging=st.sampled_from([None, 1_000, 60_000]),
    warm_up=st.booleans(),
    finish=st.integers(0, 5),
    last_advance=st.sampled_from([0, 1, 5_000, 120_000]),
)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_tick_dispatches_the_reference_batch_over_the_whole_backlog(
    plan: list[Burst],
    concurrency: int,
    per_key: int,
    aging: int | None,
    warm_up: bool,
    finish: int,
    last_advance: int,
) -> None:
    clock = FixedClock(START_MS)
    with SqlStorage() as sql:
        engine = JobShardEngine(
            sql, binding="MAIL", shard=0, clock=clock, ids=SequentialIds(), rand=FixedRandom(0.5)
        )
        engine.configure(
            PolicyPatch(
                concurrency=concurrency,
                per_key_concurrency=per_key,
                aging_interval_ms=aging,
                reaper_grace_ms=10 * DAY_MS,
            )
        )  # the warm-up's jobs stay in flight
        ids = _enqueue(engine, clock, plan[0])
        if warm_up:  # some jobs in flight, some finished, before the rest arrive
            for message in engine.tick().dispatches[:finish]:
                engine.report(message.job_id, message.attempt, Succeeded(result=None))
        for burst in plan[1:]:
            ids += _enqueue(engine, clock, burst)
        clock.advance(last_advance)
        now = clock.now_ms()
        records = [r for r in map(engine.get, ids) if r is not None]
        ready = [
            ReadyJob(
                id=r.id,
                score=effective_priority(r.priority, r.eligible_at, now, aging),
                eligible_at=r.eligible_at,
                created_at=r.created_at,
                key=r.concurrency_key,
            )
            for r in records
            if r.state == "SCHEDULED" and r.eligible_at <= now
        ]
        live = [r for r in records if r.state in ("QUEUED", "RUNNING")]
        keys = {job.key for job in ready if job.key is not None}
        room = {key: per_key - sum(1 for r in live if r.concurrency_key == key) for key in keys}
        slots = min(MAX_DISPATCH_PER_TICK, concurrency - len(live))

        sent = {m.job_id for m in engine.tick().dispatches}

        assert sent == greedy_choice(ready, slots=slots, room=room)
        left = [job for job in ready if job.id not in sent]
        chosen = [job for job in ready if job.id in sent]
        taken = {key: sum(1 for job in chosen if job.key == key) for key in keys}
        blocked = {key for key in keys if taken[key] >= room[key]}
        assert not priority_order_violations(left, chosen, blocked_keys=blocked)
        assert not idle_slot_violations(left, free_slots=slots - len(sent), blocked_keys=blocked)
