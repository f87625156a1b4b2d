"""Pins the exact subset of the Durable Object SQL API the engine touches.

A recording proxy wraps ``SqlStorage`` and every cursor it returns; running every engine command must
touch exactly ``ENGINE_SQL_SURFACE``. Growing the surface is a deliberate change: update the constant and
check the production adapter over ``ctx.storage`` supports the new member.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tsumugi_core.options import EnqueueItem, Guarantee, RateLimit
from tsumugi_core.policy import PolicyPatch, ShardSettings
from tsumugi_core.testing import FixedClock, FixedRandom, SequentialIds
from tsumugi_dev.do_sql import MAX_BOUND_PARAMETERS, SqlStorage
from tsumugi_scheduler.shard.engine import JobShardEngine
from tsumugi_scheduler.shard.records import Failed, NoticeConfig, Succeeded

ENGINE_SQL_SURFACE = frozenset(
    {"storage.exec", "storage.transaction_sync", "cursor.toArray", "cursor.one", "cursor.column"}
)
"""``cursor.column`` is looked up, not required: the production adapter's one-column read (`_runtime._SqlCursor`);
a cursor without it (Cloudflare's own, this shim) is read with ``toArray`` (`json_rows.decoded_rows`)."""


class _Recorder:
    def __init__(self, target: Any, kind: str, touched: set[str]) -> None:
        self._target, self._kind, self._touched = target, kind, touched

    def __getattr__(self, name: str) -> Any:
        self._touched.add(f"{self._kind}.{name}")
        value = getattr(self._target, name)
        if name == "exec":

            def exec_(*args: Any) -> _Recorder:
                return _Recorder(value(*args), "cursor", self._touched)

            return exec_
        return value

    def __iter__(self) -> Any:
        self._touched.add(f"{self._kind}.__iter__")
        return iter(self._target)


def _every_command(engine: JobShardEngine, clock: FixedClock) -> None:
    steps: list[Callable[[], object]] = []
    ids = [
        r.id
        for r in engine.enqueue_many(
            [
                EnqueueItem(
                    binding="MAIL",
                    payload=i,
                    unique_key=f"u{i}",
                    concurrency_key="k" if i else None,
                    guarantee=Guarantee.AT_MOST_ONCE if i == 2 else None,
                    max_attempts=1,
                )
                for i in range(4)
            ],
            settings=ShardSettings(),
        )
    ]
    engine.configure(PolicyPatch(concurrency=10))
    messages = {m.job_id: m for m in engine.tick().dispatches}
    steps += [
        lambda: engine.claim(ids[2], 1),
        lambda: engine.heartbeat(ids[0], 1, 0.5),
        lambda: engine.report(ids[0], 1, Succeeded(result=1)),
        lambda: engine.report(ids[2], 1, Failed(error="e")),
        lambda: engine.cancel(ids[3]),
        lambda: engine.retry(ids[2]),
        lambda: engine.reschedule(ids[2], 5),
        lambda: engine.mutate_many("cancel", [ids[2]]),
        lambda: engine.get(ids[0]),
        lambda: engine.attempts_of(ids[2]),
        lambda: engine.diagnostics(),
        lambda: engine.next_wake_at(),
        lambda: engine.reset_policy(),
    ]
    for step in steps:
        step()
    assert messages
    clock.advance(10**9)
    engine.tick()
    engine.ack_changes(engine.changes()[-1].job.seq)
    engine.ack_notices(max([n.seq for n in engine.notices()] or [0]))
    engine.ack_run_events(0)
    engine.run_events()
    engine.tick()


def test_the_engine_touches_exactly_the_pinned_surface() -> None:
    touched: set[str] = set()
    clock = FixedClock(1000)
    with SqlStorage() as storage:
        sql = _Recorder(storage, "storage", touched)
        engine = JobShardEngine(
            sql,  # type: ignore[arg-type]
            binding="MAIL",
            shard=0,
            clock=clock,
            ids=SequentialIds(),
            rand=FixedRandom(),
            notices=NoticeConfig(on_failure="N"),
        )
        _every_command(engine, clock)
        assert touched == ENGINE_SQL_SURFACE


class _Widest:
    """The DO SQL shape over a SqlStorage, remembering the most bound parameters of any one statement."""

    def __init__(self, target: SqlStorage) -> None:
        self.target = target
        self.most = 0

    def exec(self, query: str, *params: Any) -> Any:
        self.most = max(self.most, len(params))
        return self.target.exec(query, *params)

    def transaction_sync(self, fn: Callable[[], Any]) -> Any:
        return self.target.transaction_sync(fn)


def test_no_engine_statement_binds_more_than_workerd_allows() -> None:
    # Wide enough to cross every chunk size: attempts and buckets by id / key lists, per-key buckets saved.
    with SqlStorage() as storage:
        sql = _Widest(storage)
        clock = FixedClock(1000)
        engine = JobShardEngine(
            sql, binding="MAIL", shard=0, clock=clock, ids=SequentialIds(), rand=FixedRandom()
        )  # type: ignore[arg-type]
        engine.configure(PolicyPatch(concurrency=250, per_key_rate=RateLimit(tokens=1, interval_ms=1000)))
        ids = [
            r.id
            for r in engine.enqueue_many(
                [EnqueueItem(binding="MAIL", payload=i, concurrency_key=f"k{i}") for i in range(250)]
            )
        ]
        messages = engine.tick().dispatches
        assert len(messages) == 250
        for m in messages:
            engine.report(m.job_id, m.attempt, Failed(error="again"))
        assert engine.mutate_many("cancel", ids).ok == ids
        assert len(engine.changes(500)) == 250  # snapshots read the attempts of 250 jobs
        assert 60 < sql.most <= MAX_BOUND_PARAMETERS, sql.most  # the chunked statements ran, none too wide
