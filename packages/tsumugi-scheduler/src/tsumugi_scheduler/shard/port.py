"""The storage ports of the JobShard engine: the DO SQL shape it runs on, and the use-case methods it needs.

Two ports (ADR-0009's planned split): ``ShardStore`` holds what the commands and the tick do inside their
transactions; ``FeedStore`` holds the feed side (projection feed, outboxes, attempt logs, counts). The ports
are internal (not a user extension point). ``SqlShardStore`` implements both; tests run it on
``tsumugi_dev.do_sql.SqlStorage`` (stdlib sqlite3), production on ``ctx.storage.sql``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, Protocol, TypeVar

import msgspec

from tsumugi_core.options import RateLimit
from tsumugi_core.throttle import TokenBucket
from tsumugi_scheduler.shard.records import EnqueueResult
from tsumugi_scheduler.shard.schema import AttemptRow, JobRow

__all__ = [
    "CompletedJob",
    "DueJobs",
    "FeedKind",
    "FeedStore",
    "JobChange",
    "Overview",
    "ReadyWindow",
    "ShardStore",
    "SqlCursorLike",
    "SqlLike",
]

T = TypeVar("T")
FeedKind = Literal["job", "notice", "run_event"]


class SqlCursorLike(Protocol):
    """The cursor ``exec`` returns (rows are dicts keyed by column name)."""

    def one(self) -> Mapping[str, Any]: ...
    def toArray(self) -> Sequence[Mapping[str, Any]]: ...
    def __iter__(self) -> Iterator[Mapping[str, Any]]: ...


class SqlLike(Protocol):
    """The subset of the Durable Object SQL API the engine uses (pinned by tests/contract)."""

    def exec(self, query: str, *params: Any) -> SqlCursorLike: ...
    def transaction_sync(self, fn: Callable[[], T]) -> T: ...


class JobChange(msgspec.Struct, frozen=True, kw_only=True):
    """One compare-and-set change of a job row, with what must be written in the same transaction."""

    job_id: str
    expect_state: str
    values: dict[str, Any]
    attempt: AttemptRow | None = None
    notices: list[tuple[str, str]] = []
    """``(target binding, notice JSON)`` rows for the notice outbox."""
    run_event: tuple[str, str] | None = None
    """``(run_id, event JSON)`` for the run-event outbox."""
    key_hold: tuple[int, int] | None = None
    """``(attempt, until)``: the attempt leaves QUEUED/RUNNING but may run until ``until``, so a job with a
    concurrency_key keeps its key's slot until then (ADR-0185)."""


class CompletedJob(msgspec.Struct, frozen=True, kw_only=True):
    """A job a success report just completed in one statement: what its bookkeeping rows need."""

    id: str
    binding: str
    attempts: int
    """Finished attempts, the completed one included."""
    max_attempts: int
    dispatched_at: int | None
    result: str | None
    run_id: str | None
    node_id: str | None


class ReadyWindow(msgspec.Struct, frozen=True, kw_only=True):
    """Dispatch input: the best ready jobs (by level heads), in-flight counts and the stored per-key buckets."""

    rows: list[Mapping[str, Any]]
    in_flight: int
    in_flight_by_key: dict[str, int]
    """Slots taken per concurrency key: jobs in flight, and attempts that may still run (ADR-0185)."""
    key_buckets: dict[str, TokenBucket] = {}
    """Stored buckets of the window's concurrency keys, when asked for (absent = full)."""


class DueJobs(msgspec.Struct, frozen=True, kw_only=True):
    """Active jobs whose expiry passed, and dispatched jobs whose silence or cancel deadline passed."""

    expired: list[JobRow]
    silent: list[JobRow]


class Overview(msgspec.Struct, frozen=True, kw_only=True):
    """The earliest instants the shard waits for, as stored (the engine turns them into a wake time)."""

    oldest_ready_at: int | None
    next_delayed_at: int | None
    """The first ``eligible_at`` after the instant dispatch last looked (may be past: a job no tick saw yet)."""
    next_silence_at: int | None
    next_expiry_at: int | None
    oldest_settled_at: int | None
    oldest_failed_at: int | None
    next_unique_expiry_at: int | None
    oldest_key_bucket_at: int | None = None
    """The oldest ``refilled_at`` of a stored per-key bucket."""
    next_sleeper_at: int | None = None
    """The earliest wake time of a SLEEPING job (ADR-0145)."""
    next_hold_end_at: int | None = None
    """The earliest end of a concurrency_key hold (ADR-0185): a waiting job of its key may go then."""
    outbox_pending: bool
    """A feed holds something to deliver now (held job changes excepted)."""
    held_pending: bool = False
    """Job changes in the held range are still unprojected."""


class ShardStore(Protocol):
    """What the engine's commands and tick do inside their transactions, one method per use case."""

    def atomically(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` in one transaction."""
        ...

    def settings(self) -> dict[str, str]:
        """All stored settings (JSON texts by key)."""
        ...

    def save_setting(self, key: str, value: str | None) -> None:
        """Store (or, with None, drop) one setting."""
        ...

    def insert_new(self, rows: Sequence[JobRow]) -> None:
        """Insert SCHEDULED rows whose ids are free and that have no unique_key and no concurrency_key."""
        ...

    def admit(self, row: JobRow, unique_until: int | None, now: int, *, pinned: bool = True) -> EnqueueResult:
        """Insert a new job unless its id exists or its unique_key is held by a live reservation."""
        ...

    def existing(self, job_ids: Sequence[str]) -> set[str]:
        """Which of ``job_ids`` are stored (any state)."""
        ...

    def job(self, job_id: str) -> JobRow | None:
        """One job by id."""
        ...

    def write(self, change: JobChange) -> bool:
        """Apply a compare-and-set change; False (and nothing written) when the state moved meanwhile."""
        ...

    def complete_many(
        self,
        reports: Sequence[tuple[str, int, str | None]],
        now: int,
        bookkeeping: Callable[[CompletedJob], JobChange],
    ) -> dict[str, CompletedJob]:
        """`complete` for many ``(job_id, attempt, result)`` with distinct ids: the jobs completed, by id."""
        ...

    def complete(
        self,
        job_id: str,
        attempt: int,
        now: int,
        result: str | None,
        bookkeeping: Callable[[CompletedJob], JobChange] | None = None,
    ) -> CompletedJob | None:
        """Compare-and-set: the live ``attempt`` of a QUEUED/RUNNING job ends COMPLETED; None if not live.

        The attempt, notice and run-event rows of ``bookkeeping(completed)`` are appended in the same call.
        """
        ...

    def ready_count(self, now: int, limit: int) -> int:
        """How many key heads are ready at ``now`` (SCHEDULED, eligible), counted up to ``limit``."""
        ...

    def ready_window(
        self,
        now: int,
        want: int,
        aging_interval_ms: int | None,
        *,
        key_buckets: bool = False,
        per_key_concurrency: int = 1,
        per_key_rate: RateLimit | None = None,
        skip: frozenset[str] = frozenset(),
    ) -> ReadyWindow:
        """Ready jobs holding the best ``want`` dispatchable ones by priority with aging, and in-flight counts.

        Read through the level heads of the dispatch indexes, which hold one job per (key, priority) group
        (ADR-0054); a job whose key has no room, in ``skip`` or expired is returned but does not count toward
        ``want``. When a per-tick bound cuts the walk short, pages of the longest-waiting ready jobs follow, so
        an aged job is never out of reach (ADR-0055).
        """
        ...

    def dispatch(
        self, job_ids: Sequence[str], now: int, key_buckets: Mapping[str, TokenBucket] | None = None
    ) -> dict[str, Mapping[str, Any]]:
        """Move SCHEDULED jobs to QUEUED (one feed seq each) with the per-key buckets that paid for them.

        Returns the dispatch columns of the jobs that moved, by id.
        """
        ...

    def start(self, attempts: Sequence[tuple[str, int]], now: int) -> list[tuple[str, int]]:
        """Move the QUEUED jobs whose live attempt is given to RUNNING (one feed seq each); the pairs moved."""
        ...

    def due(self, now: int, grace_ms: int, limit: int) -> DueJobs:
        """Jobs the tick's expiry and reaper steps must look at."""
        ...

    def housekeep(
        self, now: int, sweep_after_ms: int, failed_retention_ms: int, projected_seq: int, limit: int
    ) -> int:
        """Delete projected finished jobs past retention and expired unique keys; the number of jobs deleted."""
        ...

    def drop_full_buckets(self, refilled_by: int, limit: int) -> int:
        """Delete up to ``limit`` per-key buckets last refilled at or before ``refilled_by``; how many went."""
        ...

    def last_seq(self) -> int:
        """The highest job-feed position handed out so far."""
        ...

    def overview(
        self, since: int, projected_seq: int | None = None, held: tuple[int, int] = (0, 0)
    ) -> Overview:
        """Instants the wake computation needs; ``next_delayed_at`` counts jobs eligible after ``since``.

        Job changes with a seq in ``held`` (exclusive, inclusive] count as ``held_pending``, not as
        ``outbox_pending``.
        """
        ...


class FeedStore(Protocol):
    """The feed side of a shard: what the projection, the notice and run-event relays and diagnostics read."""

    def outbox(
        self, kind: FeedKind, after_seq: int, limit: int, up_to_seq: int | None = None
    ) -> list[Mapping[str, Any]]:
        """Rows of a feed after ``after_seq`` (up to ``up_to_seq``) in seq order (``job``: changed jobs)."""
        ...

    def job_feed(self, after_seq: int, limit: int, up_to_seq: int | None = None) -> list[JobRow]:
        """Jobs changed after ``after_seq`` (up to ``up_to_seq``) in seq order, as typed rows."""
        ...

    def ack(self, kind: FeedKind, up_to_seq: int) -> None:
        """Mark a feed consumed up to ``up_to_seq`` (outbox rows are deleted; the job feed moves its cursor)."""
        ...

    def attempts(self, job_ids: Sequence[str]) -> list[AttemptRow]:
        """Recorded attempts of ``job_ids``, newest first per job (at most 20 each)."""
        ...

    def counts(self) -> dict[str, int]:
        """Jobs by state, and pending rows per feed (``feed:<kind>``)."""
        ...
