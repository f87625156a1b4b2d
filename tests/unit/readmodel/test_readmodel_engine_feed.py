"""The real shard feed projects: what the engine holds is what the read model shows, and replays change nothing."""

from __future__ import annotations

from tests.unit.readmodel.readmodel_world import T0
from tsumugi_core.options import EnqueueItem
from tsumugi_core.testing import FixedClock, FixedRandom, SequentialIds
from tsumugi_dev.d1 import D1Database
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.readmodel import JobQuery, get_job, list_jobs, project
from tsumugi_scheduler.shard.engine import JobShardEngine
from tsumugi_scheduler.shard.records import Failed, Succeeded


async def test_engine_changes_project_into_the_read_model(d1: D1Database) -> None:
    clock = FixedClock(T0)
    with SqlStorage() as sql:
        engine = JobShardEngine(
            sql, binding="MAIL", shard=1, clock=clock, ids=SequentialIds(), rand=FixedRandom(0.5)
        )
        ok_id, bad_id = (
            r.id
            for r in engine.enqueue_many(
                [
                    EnqueueItem(
                        binding="MAIL",
                        payload={"n": 1},
                        traceparent="00-" + "a" * 32 + "-" + "b" * 16 + "-01",
                    ),
                    EnqueueItem(binding="MAIL", payload={"n": 2}, concurrency_key="user-1"),
                ]
            )
        )
        clock.advance(10)
        assert len(engine.tick().dispatches) == 2
        clock.advance(10)
        assert engine.report(ok_id, 1, Succeeded(result={"sent": True})).accepted
        assert engine.report(bad_id, 1, Failed(error="smtp down")).accepted

        changes = engine.changes(200)
        assert await project(d1, changes) == 2

        for job_id in (ok_id, bad_id):
            stored = engine.get(job_id)
            detail = await get_job(d1, job_id)
            assert stored is not None
            assert detail is not None
            assert (detail.state, detail.attempts, detail.updated_at, detail.run_after) == (
                stored.state.value,
                stored.attempts,
                stored.updated_at,
                stored.run_after,
            )
            assert detail.shard == 1
        ok = await get_job(d1, ok_id)
        bad = await get_job(d1, bad_id)
        assert ok is not None
        assert bad is not None
        assert (ok.state, ok.result, ok.traceparent) == (
            "COMPLETED",
            '{"sent":true}',
            "00-" + "a" * 32 + "-" + "b" * 16 + "-01",
        )
        assert [e.state for e in ok.attempts_log] == ["COMPLETED"]
        assert (bad.state, bad.last_error, [e.error for e in bad.attempts_log]) == (
            "SCHEDULED",
            "smtp down",
            ["smtp down"],
        )

        # The feed is at-least-once: a replay after a lost ack must leave the model as it is.
        assert await project(d1, changes) == 0
        assert (await list_jobs(d1, JobQuery(concurrency_key="user-1"))).total == 1
