"""Why a job is not running yet, and when each blocker clears (docs/reference/additions.md C4).

Runs inside the job's shard, so it reads the current state, not the lagging read model. It only reads: the
engine's public ``get`` and ``settings``, plus a few bounded queries over the shard's SQL tables (in-flight
counts, the token buckets, the ready jobs ahead of this one). Blockers follow the order dispatch checks
them: eligibility, pause, binding concurrency, binding rate, per-key concurrency, per-key rate, priority.

Example:
    >>> Blocker(kind="paused", message="dispatch of MAIL is paused").clears_at is None
    True
"""

from __future__ import annotations

from typing import Any, Final, Literal, cast

import msgspec

from tsumugi_core.options import RateLimit
from tsumugi_core.policy import Policy
from tsumugi_core.priority import effective_priority
from tsumugi_core.states import JobState
from tsumugi_core.throttle import TokenBucket, ready_at, refill
from tsumugi_scheduler.shard import JobRecord, JobShardEngine, SqlLike
from tsumugi_scheduler.time_words import instant_words

__all__ = ["AHEAD_COUNT_CAP", "HOLDERS_SHOWN", "Blocker", "BlockerKind", "Explanation", "explain_job"]

AHEAD_COUNT_CAP: Final = 10_000
"""The count of jobs ahead stops here, so explaining never reads a whole backlog."""
HOLDERS_SHOWN: Final = 20
"""Most in-flight jobs named as holders of a concurrency_key."""

BlockerKind = Literal[
    "run_after",
    "paused",
    "concurrency",
    "rate",
    "per_key_concurrency",
    "per_key_rate",
    "priority",
    "sleeping",
]

_IN_FLIGHT: Final = "state IN ('QUEUED', 'RUNNING')"
_KEPT: Final = (
    "SELECT job_id, attempt, until FROM key_hold WHERE key = ? AND until > ? ORDER BY until, job_id"
)
"""The slots of a key kept for attempts given up that may still run (ADR-0185), the first to end first."""
_bucket_decoder: Final = msgspec.json.Decoder(TokenBucket)


class Blocker(msgspec.Struct, frozen=True, kw_only=True):
    """One reason a job waits.

    Attributes:
        kind: The axis that holds the job back.
        message: A sentence for people, times relative to ``Explanation.now`` with the UTC instant beside.
        clears_at: When this blocker lifts by itself (epoch ms); None when it lifts only when something
            else happens (a running job finishes, an operator unpauses). A key's slots kept for attempts given
            up (ADR-0185) free themselves, so a key held only by them clears when enough of them end.
        count: How many jobs are involved (in flight, or ahead), when that is meaningful.
        holders: Jobs that hold the concurrency_key: in flight, or with an attempt given up that may still run
            (at most ``HOLDERS_SHOWN``).
        key: The concurrency_key, for the per-key kinds.
        limit: The limit reached (concurrency, per-key concurrency), when there is one.
    """

    kind: BlockerKind
    message: str
    clears_at: int | None = None
    count: int | None = None
    holders: list[str] = msgspec.field(default_factory=list[str])
    key: str | None = None
    limit: int | None = None


class Explanation(msgspec.Struct, frozen=True, kw_only=True):
    """The answer of ``GET /api/jobs/{id}/explain``.

    Attributes:
        waiting: True while the job is SCHEDULED (not yet dispatched) or SLEEPING (between invocations).
        blockers: Empty for a waiting job that the next tick would dispatch.
        jobs_ahead: Ready jobs that dispatch would pick first (capped at ``AHEAD_COUNT_CAP``).
    """

    job_id: str
    binding: str
    state: str
    now: int
    waiting: bool
    summary: str
    blockers: list[Blocker]
    jobs_ahead: int = 0


def _scalar(sql: SqlLike, query: str, *params: Any) -> int:
    rows = sql.exec(query, *params).toArray()
    return int(rows[0]["n"]) if rows else 0


def _stored_bucket(sql: SqlLike, query: str, *params: Any) -> TokenBucket | None:
    rows = sql.exec(query, *params).toArray()
    if not rows:
        return None
    row = rows[0]
    if "value" in row:
        return _bucket_decoder.decode(str(row["value"]))
    return TokenBucket(tokens=float(row["tokens"]), refilled_at=int(row["refilled_at"]))


def _token_blocker(
    kind: BlockerKind,
    what: str,
    bucket: TokenBucket | None,
    rate: RateLimit,
    now: int,
    key: str | None = None,
) -> Blocker | None:
    current = refill(bucket, rate, now)
    if current.tokens >= 1:
        return None
    at = ready_at(current, rate)
    message = f"{what} has no token left: the next one comes {instant_words(at, now=now)}"
    return Blocker(kind=kind, message=message, clears_at=at, key=key)


def _jobs(count: int) -> str:
    return "1 job" if count == 1 else f"{count} jobs"


def _ready(count: int) -> str:
    return "1 ready job" if count == 1 else f"{count} ready jobs"


def _holders_text(holders: list[str], held: int) -> str:
    named = ", ".join(holders)
    more = f" and {held - len(holders)} more" if held > len(holders) else ""
    return f"{'job' if held == 1 else 'jobs'} {named}{more}"


def _capacity_blockers(sql: SqlLike, job: JobRecord, policy: Policy, now: int) -> list[Blocker]:
    blockers: list[Blocker] = []
    in_flight = _scalar(sql, f"SELECT COUNT(*) AS n FROM job WHERE {_IN_FLIGHT}")
    if in_flight >= policy.concurrency:
        blockers.append(
            Blocker(
                kind="concurrency",
                count=in_flight,
                limit=policy.concurrency,
                message=f"{_jobs(in_flight)} in flight {'reaches' if in_flight == 1 else 'reach'} the binding's "
                f"concurrency of {policy.concurrency}",
            )
        )
    if policy.rate is not None:
        bucket = _stored_bucket(sql, "SELECT value FROM setting WHERE key = 'bucket'")
        blocker = _token_blocker("rate", "the binding's rate limit", bucket, policy.rate, now)
        blockers.extend([blocker] if blocker else [])
    key = job.concurrency_key
    if key is None:
        return blockers  # jobs without a key are exempt from both per-key limits
    blocker = _per_key_blocker(sql, key, policy.per_key_concurrency, now)
    blockers.extend([blocker] if blocker else [])
    if policy.per_key_rate is not None:
        bucket = _stored_bucket(sql, "SELECT tokens, refilled_at FROM key_bucket WHERE key = ?", key)
        blocker = _token_blocker(
            "per_key_rate", f"concurrency_key {key!r}", bucket, policy.per_key_rate, now, key
        )
        blockers.extend([blocker] if blocker else [])
    return blockers


def _per_key_blocker(sql: SqlLike, key: str, limit: int, now: int) -> Blocker | None:
    """Per-key concurrency: the key's jobs in flight and its slots kept for attempts given up (ADR-0185)."""
    holders = [
        str(r["id"])
        for r in sql.exec(
            f"SELECT id FROM job WHERE {_IN_FLIGHT} AND concurrency_key = ? ORDER BY id LIMIT ?",
            key,
            HOLDERS_SHOWN,
        ).toArray()
    ]
    running = _scalar(sql, f"SELECT COUNT(*) AS n FROM job WHERE {_IN_FLIGHT} AND concurrency_key = ?", key)
    kept = [
        (str(r["job_id"]), int(r["attempt"]), int(r["until"])) for r in sql.exec(_KEPT, key, now).toArray()
    ]
    held = running + len(kept)
    if held < limit:
        return None
    for job_id, _, _ in kept:
        if job_id not in holders and len(holders) < HOLDERS_SHOWN:
            holders.append(job_id)
    message = (
        f"waits for {_holders_text(holders, held)} of concurrency_key {key!r} (per-key concurrency {limit})"
    )
    clears_at = None
    if kept:
        job_id, attempt, until = kept[0]
        others = f" (and {len(kept) - 1} more given up)" if len(kept) > 1 else ""
        message += (
            f": attempt {attempt} of job {job_id} was given up but may still run, so its slot stays taken, free "
            f"{instant_words(until, now=now)}{others}"
        )
        if running < limit:  # only the kept slots hold the key: it clears once enough of them end
            clears_at = kept[held - limit][2]
    return Blocker(
        kind="per_key_concurrency",
        count=held,
        holders=holders,
        key=key,
        limit=limit,
        clears_at=clears_at,
        message=message,
    )


def _jobs_ahead(sql: SqlLike, job: JobRecord, policy: Policy, now: int) -> int:
    interval = policy.aging_interval_ms
    mine = effective_priority(job.priority, job.eligible_at, now, interval)
    # The same effective priority as dispatch computes (integer division ages in whole intervals).
    effective = "priority" if interval is None else "(priority + MAX(0, ? - eligible_at) / ?)"
    aging: tuple[int, ...] = () if interval is None else (now, interval)
    query = (
        "SELECT COUNT(*) AS n FROM (SELECT 1 FROM job WHERE state = 'SCHEDULED' AND eligible_at <= ? AND id != ? "
        f"AND ({effective} > ? OR ({effective} = ? AND (eligible_at < ? OR (eligible_at = ? AND id < ?)))) "
        "LIMIT ?)"
    )
    params = (
        now,
        job.id,
        *aging,
        mine,
        *aging,
        mine,
        job.eligible_at,
        job.eligible_at,
        job.id,
        AHEAD_COUNT_CAP,
    )
    return _scalar(sql, query, *params)


def _sleeping(sql: SqlLike, job: JobRecord, now: int) -> Blocker:
    # A wait for an event names it (ADR-0146); a plain sleep only its end.
    until = instant_words(job.run_after, now=now)
    rows = sql.exec(
        "SELECT result FROM step WHERE job_id = ? AND state = 'waiting' LIMIT 1", job.id
    ).toArray()
    if rows:
        wait: Any = msgspec.json.decode(str(rows[0]["result"]))
        if isinstance(wait, dict):
            fields = cast("dict[str, object]", wait)
            return Blocker(
                kind="sleeping",
                clears_at=job.run_after,
                message=f"waiting for event {fields.get('event')}/{fields.get('key')} until {until}",
            )
    return Blocker(kind="sleeping", clears_at=job.run_after, message=f"sleeping until {until}")


def _summary(job: JobRecord, blockers: list[Blocker]) -> str:
    if job.state == JobState.QUEUED:
        return "the job is QUEUED: dispatched, waiting for a queue consumer to start its performer"
    if job.state == JobState.RUNNING:
        return "the job is RUNNING: its performer is executing"
    if job.state == JobState.SLEEPING:
        return f"the job is SLEEPING: {blockers[0].message}; it runs again then, under its binding's limits"
    if job.state != JobState.SCHEDULED:
        return f"the job is {job.state.value}: finished, not waiting"
    if not blockers:
        return "nothing holds the job back: the next tick dispatches it"
    return "; ".join(b.message for b in blockers)


def explain_job(sql: SqlLike, engine: JobShardEngine, job_id: str, now: int) -> Explanation | None:
    """Explain why ``job_id`` is not running; None when the shard does not hold it.

    Args:
        sql: The shard's SQL storage (read only here).
        engine: The shard's engine (its ``get`` and effective ``settings``).
        job_id: A job of this shard.
        now: The current instant.
    """
    job = engine.get(job_id)
    if job is None:
        return None
    blockers: list[Blocker] = []
    ahead = 0
    if job.state == JobState.SCHEDULED:
        policy = engine.settings.policy
        if job.eligible_at > now:
            ready = instant_words(job.eligible_at, now=now)
            blockers.append(
                Blocker(
                    kind="run_after",
                    clears_at=job.eligible_at,
                    message=f"run_after is in the future: ready {ready}",
                )
            )
        if policy.paused:
            blockers.append(
                Blocker(kind="paused", message=f"dispatch of {job.binding} is paused until resumed")
            )
        blockers.extend(_capacity_blockers(sql, job, policy, now))
        if job.eligible_at <= now:
            ahead = _jobs_ahead(sql, job, policy, now)
            free = policy.concurrency - _scalar(sql, f"SELECT COUNT(*) AS n FROM job WHERE {_IN_FLIGHT}")
            if ahead > 0 and ahead >= free:
                blockers.append(
                    Blocker(
                        kind="priority",
                        count=ahead,
                        message=f"{_ready(ahead)} with a higher effective priority "
                        f"{'goes' if ahead == 1 else 'go'} first",
                    )
                )
    if job.state == JobState.SLEEPING:  # ADR-0145: its wake instant is its run_after
        blockers.append(_sleeping(sql, job, now))
    return Explanation(
        job_id=job.id,
        binding=job.binding,
        state=job.state.value,
        now=now,
        waiting=job.state in (JobState.SCHEDULED, JobState.SLEEPING),
        summary=_summary(job, blockers),
        blockers=blockers,
        jobs_ahead=ahead,
    )
