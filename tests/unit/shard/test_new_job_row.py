"""`new_job_row` builds JobRow by position (msgspec's keyword matching is the slow part of storing a job): every
field must land where its name says. Each input is told apart from the others, so a swapped pair shows."""

from __future__ import annotations

import msgspec

from tsumugi_core.options import ExponentialBackoff, Guarantee, NewJob
from tsumugi_core.states import JobState
from tsumugi_scheduler.shard.schema import JobRow, new_job_row


def _job(**changes: object) -> NewJob:
    job = NewJob(
        binding="Mail",
        payload_json='{"to":"a@example.com"}',
        priority=7,
        max_attempts=4,
        backoff=ExponentialBackoff(base_ms=250, max_ms=9_000),
        timeout_ms=45_000,
        guarantee=Guarantee.AT_MOST_ONCE,
        concurrency_key="tenant-1",
        unique_key="order-9",
        unique_for_ms=60_000,
        run_after=1_700_000_000_500,
        expires_at=1_700_000_900_000,
        traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        id="Mail#0:given",
        run_id="fulfil:r1",
        node_id="charge",
        created_at=1_700_000_000_000,
    )
    return msgspec.structs.replace(job, **changes)


def test_every_field_of_a_new_row_is_where_its_name_says() -> None:
    job = _job()
    assert new_job_row(job, "Mail#0:given", 42) == JobRow(
        id="Mail#0:given",
        binding="Mail",
        state=JobState.SCHEDULED,
        priority=7,
        attempts=0,
        max_attempts=4,
        guarantee="at-most-once",
        timeout_ms=45_000,
        backoff=msgspec.json.encode(job.backoff).decode(),
        concurrency_key="tenant-1",
        unique_key="order-9",
        run_after=1_700_000_000_500,
        eligible_at=1_700_000_000_500,
        expires_at=1_700_000_900_000,
        created_at=1_700_000_000_000,
        updated_at=1_700_000_000_000,
        dispatched_at=None,
        heartbeat_at=None,
        silence_at=None,
        progress=None,
        cancel_requested_at=None,
        payload='{"to":"a@example.com"}',
        result=None,
        error=None,
        reason=None,
        traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        run_id="fulfil:r1",
        node_id="charge",
        seq=42,
        key_head=1,
    )


def test_a_row_is_ready_from_its_creation_when_its_run_after_is_earlier() -> None:
    row = new_job_row(_job(run_after=1_600_000_000_000), "Mail#0:given", 1)
    assert (row.run_after, row.eligible_at) == (1_600_000_000_000, 1_700_000_000_000)


def test_the_guarantee_is_stored_as_plain_text() -> None:
    row = new_job_row(_job(guarantee=Guarantee.AT_LEAST_ONCE), "Mail#0:given", 1)
    assert type(row.guarantee) is str
    assert row.guarantee == "at-least-once"
