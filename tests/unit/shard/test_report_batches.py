"""A batch of reports writes its notice and run-event rows together, in order, and loses none to a rollback."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.unit.shard.shard_world import World
from tsumugi_core.options import EnqueueItem
from tsumugi_core.states import JobState
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.shard.records import Failed, NoticeConfig, Succeeded


def _run_jobs(world: World, n: int) -> list[str]:
    ids = [world.enqueue(run_id="flow:r1", node_id=f"n{i}", payload={"i": i}) for i in range(n)]
    assert len(world.dispatch()) == n
    return ids


def test_a_batch_of_completions_writes_its_run_events_in_one_statement_in_order(world: World) -> None:
    ids = _run_jobs(world, 50)
    before = world.sql.write_statements

    def apply() -> None:
        for i, job_id in enumerate(ids):
            assert world.engine.report(job_id, 1, Succeeded(result={"i": i})).accepted

    world.engine.report_batch(apply)
    assert world.sql.write_statements - before == 50 + 1  # a completion each, then the run events together
    events = world.engine.run_events(100)
    assert [(e.node_id, e.job_id, e.state, e.result) for e in events] == [
        (f"n{i}", job_id, JobState.COMPLETED, f'{{"i":{i}}}') for i, job_id in enumerate(ids)
    ]
    assert [e.seq for e in events] == sorted(e.seq for e in events)


def test_notices_of_a_batch_are_written_together_too(make_world: Callable[..., World]) -> None:
    world = make_world(
        NoticeConfig(on_settled_binding="SETTLED", on_settled_states=frozenset({JobState.COMPLETED}))
    )
    ids = [world.enqueue(payload={"i": i}) for i in range(20)]
    world.dispatch()
    before = world.sql.write_statements

    def apply() -> None:
        for job_id in ids:
            world.engine.report(job_id, 1, Succeeded())

    world.engine.report_batch(apply)
    assert world.sql.write_statements - before == 20 + 1
    assert [n.notice.job_id for n in world.engine.notices(100)] == ids


def test_a_report_rolled_back_in_a_batch_loses_only_its_own_rows(world: World) -> None:
    first, second, third = _run_jobs(world, 3)
    engine = world.engine
    store = engine._store  # pyright: ignore[reportPrivateUsage]

    def fails_after_reading_the_feed() -> None:
        assert engine.report(second, 1, Succeeded(result="2")).accepted
        # A read of the feed inside the batch writes the rows recorded so far (the first report's too) inside
        # this nested transaction, which then rolls back: the first report's row must be written again.
        assert [e.node_id for e in engine.run_events(10)] == ["n0", "n1"]
        raise RuntimeError("this report's transaction fails")

    def apply() -> None:
        assert engine.report(first, 1, Succeeded(result="1")).accepted
        with pytest.raises(RuntimeError):
            store.atomically(fails_after_reading_the_feed)
        assert engine.report(third, 1, Succeeded(result="3")).accepted

    engine.report_batch(apply)
    assert [(e.node_id, e.result) for e in engine.run_events(10)] == [("n0", '"1"'), ("n2", '"3"')]
    assert [engine.get(j).state for j in (first, second, third)] == [  # type: ignore[union-attr]
        JobState.COMPLETED,
        JobState.QUEUED,
        JobState.COMPLETED,
    ]


def test_a_batch_that_fails_as_a_whole_writes_no_rows(world: World) -> None:
    first, second = _run_jobs(world, 2)

    def apply() -> None:
        world.engine.report(first, 1, Succeeded())
        world.engine.report(second, 1, Succeeded())
        raise RuntimeError("the batch does not commit")

    with pytest.raises(RuntimeError):
        world.engine.report_batch(apply)
    assert world.engine.run_events(10) == []
    # Still live: nothing was applied.
    assert world.engine.report(first, 1, Succeeded(result="again")).accepted
    assert [(e.node_id, e.result) for e in world.engine.run_events(10)] == [("n0", '"again"')]


def test_successes_in_a_row_complete_in_one_statement_with_their_bookkeeping_in_order(world: World) -> None:
    ids = _run_jobs(world, 50)
    before = world.sql.write_statements
    answers = world.engine.report_many(
        [(job_id, 1, Succeeded(result={"i": i})) for i, job_id in enumerate(ids)]
    )
    assert [(a.accepted, a.state) for a in answers] == [(True, JobState.COMPLETED)] * 50  # type: ignore[union-attr]
    # One completion statement for the 50 (it was one each, ADR-0153), then the run events together.
    assert world.sql.write_statements - before == 1 + 1
    events = world.engine.run_events(100)
    assert [(e.job_id, e.result) for e in events] == [
        (job_id, f'{{"i":{i}}}') for i, job_id in enumerate(ids)
    ]
    seqs = [world.engine.get(job_id).seq for job_id in ids]  # type: ignore[union-attr]
    assert seqs == sorted(seqs)  # the feed sees them in report order
    assert len(set(seqs)) == 50


def test_a_group_refuses_what_one_report_at_a_time_refuses(world: World) -> None:
    first, second, third = _run_jobs(world, 3)
    answers = world.engine.report_many(
        [
            (first, 1, Succeeded(result=1)),
            (first, 1, Succeeded(result=2)),  # a duplicate delivery of the same report: refused, result kept
            (second, 2, Succeeded()),  # not the live attempt
            (third, 1, Failed(error="boom", retryable=False)),
            (third, 1, Succeeded()),  # after its failure: refused
            ("unknown-id", 1, Succeeded()),
        ]
    )
    assert [(a.accepted, a.state) for a in answers] == [  # type: ignore[union-attr]
        (True, JobState.COMPLETED),
        (False, JobState.COMPLETED),
        (False, JobState.QUEUED),
        (True, JobState.FAILED),
        (False, JobState.FAILED),
        (False, None),
    ]
    assert world.engine.get(first).result == "1"  # type: ignore[union-attr]


def test_a_group_that_fails_is_applied_one_report_at_a_time(world: World) -> None:
    first, second = _run_jobs(world, 2)
    store = world.engine._store  # pyright: ignore[reportPrivateUsage]

    def broken(*_: object) -> dict[str, object]:
        raise RuntimeError("statement refused")

    store.complete_many = broken  # type: ignore[method-assign]
    answers = world.engine.report_many([(first, 1, Succeeded()), (second, 1, Succeeded())])
    assert [(a.accepted, a.state) for a in answers] == [(True, JobState.COMPLETED)] * 2  # type: ignore[union-attr]


def test_new_jobs_without_keys_are_stored_in_one_statement_in_order(world: World) -> None:
    before = world.sql.write_statements
    items = [EnqueueItem(binding=world.engine.binding, payload={"i": i}) for i in range(30)]
    items[10] = EnqueueItem(binding=world.engine.binding, payload={"i": 10}, concurrency_key="k")
    results = world.engine.enqueue_many(items)
    # Rows before and after the keyed one go in one statement each; the keyed one is stored alone.
    assert world.sql.write_statements - before == 3
    stored = [world.engine.get(r.id) for r in results]
    assert [s.payload for s in stored] == [f'{{"i":{i}}}' for i in range(30)]  # type: ignore[union-attr]
    seqs = [s.seq for s in stored]  # type: ignore[union-attr]
    assert seqs == sorted(seqs)
    again = world.engine.enqueue_many(
        [EnqueueItem(binding=world.engine.binding, id=results[0].id, payload={})] * 2
    )
    assert [(r.id, r.created) for r in again] == [(results[0].id, False)] * 2


def test_dispatch_and_completion_answer_one_json_text_per_job(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The rows a tick's dispatch and a group's completion answer cross as one value each (ADR-0166).
    widths: dict[str, set[int]] = {}
    exec_ = SqlStorage.exec

    def recording(self: SqlStorage, query: str, *bindings: object) -> object:
        cursor = exec_(self, query, *bindings)
        for state in ("QUEUED", "COMPLETED"):
            if query.startswith(f"UPDATE job SET state = '{state}'") and "json_each" in query:
                widths.setdefault(state, set()).add(len(cursor.columnNames))
        return cursor

    monkeypatch.setattr(SqlStorage, "exec", recording)
    ids = _run_jobs(world, 5)
    answers = world.engine.report_many([(job_id, 1, Succeeded(result=job_id)) for job_id in ids])
    assert [a.state for a in answers] == [JobState.COMPLETED] * 5  # type: ignore[union-attr]
    assert [world.engine.get(i).result for i in ids] == [f'"{i}"' for i in ids]  # type: ignore[union-attr]
    assert widths == {"QUEUED": {1}, "COMPLETED": {1}}
