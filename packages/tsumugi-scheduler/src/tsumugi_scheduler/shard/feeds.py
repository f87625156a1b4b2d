"""Reading the shard's feeds: job snapshots for the projection, notice and run-event outbox rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from tsumugi_core.states import JobState
from tsumugi_scheduler.shard.port import FeedStore
from tsumugi_scheduler.shard.records import (
    AttemptRecord,
    FailureNotice,
    JobSnapshot,
    NoticeRecord,
    RunEventRecord,
    SettledNotice,
)

__all__ = ["notice_records", "run_event_records", "snapshots"]

_notice_decoder = msgspec.json.Decoder(FailureNotice | SettledNotice)
_event_decoder = msgspec.json.Decoder(dict[str, Any])


def snapshots(
    store: FeedStore, after_seq: int, limit: int, up_to_seq: int | None = None
) -> list[JobSnapshot]:
    """The latest snapshot of every job changed after ``after_seq`` (up to ``up_to_seq``), by seq, with its
    newest attempts."""
    jobs = store.job_feed(after_seq, limit, up_to_seq)
    by_job: dict[str, list[AttemptRecord]] = {}
    for attempt in store.attempts([j.id for j in jobs]):
        by_job.setdefault(attempt.job_id, []).append(attempt)
    return [JobSnapshot(job=j, attempts=by_job.get(j.id, [])) for j in jobs]


def notice_records(rows: Sequence[Mapping[str, Any]]) -> list[NoticeRecord]:
    """Notice outbox rows as records."""
    return [
        NoticeRecord(seq=int(r["seq"]), target=str(r["target"]), notice=_notice_decoder.decode(r["body"]))
        for r in rows
    ]


def run_event_records(rows: Sequence[Mapping[str, Any]]) -> list[RunEventRecord]:
    """Run-event outbox rows as records."""
    events: list[RunEventRecord] = []
    for row in rows:
        body = _event_decoder.decode(row["body"])
        events.append(
            RunEventRecord(
                seq=int(row["seq"]),
                run_id=str(row["run_id"]),
                node_id=body["nodeId"],
                job_id=body["jobId"],
                state=JobState(body["state"]),
                result=body["result"],
                error=body["error"],
                spawns=body.get("spawns"),
                hold_until=body.get("holdUntil"),
            )
        )
    return events
