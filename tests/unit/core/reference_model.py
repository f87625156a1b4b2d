"""An independent, deliberately simple model of one job shard, written from the reference documents.

It exists to judge the engine (``tsumugi_scheduler.shard``), so it favours being obviously right over being fast:
jobs live in a dict, throttles are evaluated by brute force over every job, and rate limits are tracked as the
history of dispatch instants. It imports nothing from the engine or the core decision modules.

Where the reference documents leave a choice open (tie-breaks between equal effective priorities, what a
success reported after a cancel request does, whether expiry of an in-flight job is immediate, ...), the model
answers with the *set* of states it allows; the caller checks the engine's state is in that set and then
``adopt``s it. Where the documents are explicit, the set has one member.

Sources: docs/reference/original.md §1.3-1.7, 3.2-3.10 and docs/reference/additions.md A4-A6, B; ADR-0185 for
the slots a concurrency_key keeps after the shard gives an attempt up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

SCHEDULED = "SCHEDULED"
QUEUED = "QUEUED"
RUNNING = "RUNNING"
COMPLETED = "COMPLETED"
FAILED = "FAILED"
CANCELLED = "CANCELLED"
STALLED = "STALLED"
ACTIVE = frozenset({SCHEDULED, QUEUED, RUNNING})
IN_FLIGHT = frozenset({QUEUED, RUNNING})
TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED, STALLED})
RETRYABLE = frozenset({FAILED, STALLED})
SWEPT = "SWEPT"
"""Pseudo-state for a row the shard deleted after its retention."""
INVOCATION_MS = 15 * 60 * 1000
"""Cloudflare stops a queue consumer invocation 15 minutes after it began: nothing of an attempt runs longer."""


@dataclass(frozen=True, kw_only=True)
class ModelBackoff:
    """Backoff as reference section 3.4 defines it."""

    kind: str = "exponential"
    delay_ms: int = 0
    base_ms: int = 1000
    factor: float = 2
    max_ms: int = 3_600_000
    jitter: bool = True

    def delay_bounds(self, attempts: int) -> tuple[int, int]:
        """Smallest and largest delay after ``attempts`` finished attempts (equal jitter: [base/2, base])."""
        if self.kind == "fixed":
            base = float(self.delay_ms)
        else:
            base = min(self.base_ms * self.factor ** max(0, attempts - 1), float(self.max_ms))
        if not self.jitter:
            return round(base), round(base)
        return math.floor(base / 2), math.ceil(base)


@dataclass(frozen=True, kw_only=True)
class ModelRate:
    """A token bucket of ``tokens`` capacity refilling ``tokens`` every ``interval_ms``."""

    tokens: int
    interval_ms: int


@dataclass(frozen=True, kw_only=True)
class ModelPolicy:
    """The shard's effective policy and retention (reference appendix A defaults)."""

    concurrency: int = 100
    rate: ModelRate | None = None
    per_key_concurrency: int = 1
    per_key_rate: ModelRate | None = None
    aging_interval_ms: int | None = 60_000
    reaper_grace_ms: int = 30_000
    paused: bool = False
    sweep_after_ms: int = 300_000
    failed_retention_ms: int = 604_800_000


@dataclass(kw_only=True)
class ModelJob:
    """One job row as the model sees it."""

    id: str
    state: str
    priority: int
    attempts: int
    max_attempts: int
    guarantee: str
    timeout_ms: int
    backoff: ModelBackoff
    concurrency_key: str | None
    run_after: int
    created_at: int
    updated_at: int
    expires_at: int | None = None
    dispatched_at: int | None = None
    heartbeat_at: int | None = None
    claimed: bool = False
    claimed_at: int | None = None
    cancel_first_at: int | None = None
    cancel_last_at: int | None = None

    @property
    def live_attempt(self) -> int:
        """The attempt number a claim, heartbeat or report must carry (contract: attempts + 1)."""
        return self.attempts + 1

    @property
    def eligible_at(self) -> int:
        """Aging counts from here (contract section 3: ``max(created_at, run_after)``)."""
        return max(self.created_at, self.run_after)

    def effective_priority(self, now: int, aging_interval_ms: int | None) -> int:
        """Priority plus one per aging interval since the job became eligible."""
        if not aging_interval_ms:
            return self.priority
        return self.priority + max(0, now - self.eligible_at) // aging_interval_ms

    def silence_window(self, grace_ms: int) -> tuple[int, int]:
        """Earliest and latest reaper deadline (reference 1.7: silence measured from the later of dispatch
        and heartbeat). The reference does not say whether a claim is a sign of life; the latest deadline
        counts it as one.
        """
        assert self.dispatched_at is not None
        last_sign = max(self.dispatched_at, self.heartbeat_at or self.dispatched_at)
        with_claim = max(last_sign, self.claimed_at or last_sign)
        return last_sign + self.timeout_ms + grace_ms, with_claim + self.timeout_ms + grace_ms


@dataclass(frozen=True, kw_only=True)
class JobSpec:
    """What a test enqueues (engine-independent); converted to the engine's options by the driver."""

    payload: object = None
    id: str | None = None
    priority: int | None = None
    max_attempts: int | None = None
    backoff: ModelBackoff | None = None
    timeout_ms: int | None = None
    delay_ms: int | None = None
    run_at: int | None = None
    guarantee: str | None = None
    concurrency_key: str | None = None
    unique_key: str | None = None
    unique_for_ms: int | None = None
    expires_at: int | None = None
    expires_in_ms: int | None = None


@dataclass(frozen=True, kw_only=True)
class Expected:
    """What the model allows after a command: an answer flag and, per job, the allowed states."""

    accepted: bool
    states: frozenset[str] = field(default_factory=frozenset[str])


@dataclass
class ReferenceShard:
    """The model: a dict of jobs, unique-key reservations and the dispatch history."""

    policy: ModelPolicy = field(default_factory=ModelPolicy)
    jobs: dict[str, ModelJob] = field(default_factory=dict[str, ModelJob])
    unique: dict[str, tuple[str, int]] = field(default_factory=dict[str, tuple[str, int]])
    dispatches: list[tuple[int, str, str | None]] = field(default_factory=list[tuple[int, str, str | None]])
    """Every dispatch as ``(instant, job_id, concurrency_key)``, oldest first."""
    holds: list[tuple[str, int]] = field(default_factory=list[tuple[str, int]])
    """``(concurrency_key, until)`` of every attempt given up while it may still run (ADR-0185)."""

    # -- enqueue ---------------------------------------------------------------------------------------------

    def enqueue(self, spec: JobSpec, now: int, new_id: str) -> tuple[str, bool]:
        """Id (existing or ``new_id``) and whether a job was created, as reference 1.3 step 2 and 3.9."""
        if spec.id is not None and spec.id in self.jobs:
            return spec.id, False
        job_id = spec.id if spec.id is not None else new_id
        if spec.unique_key is not None:
            held = self.unique.get(spec.unique_key)
            if held is not None and held[1] > now:
                return held[0], False
            ttl = spec.unique_for_ms if spec.unique_for_ms is not None else 86_400_000
            self.unique[spec.unique_key] = (job_id, now + ttl)
        run_after = spec.run_at if spec.run_at is not None else now + (spec.delay_ms or 0)
        expires_at = spec.expires_at
        if expires_at is None and spec.expires_in_ms is not None:
            expires_at = now + spec.expires_in_ms
        self.jobs[job_id] = ModelJob(
            id=job_id,
            state=SCHEDULED,
            priority=spec.priority or 0,
            attempts=0,
            max_attempts=spec.max_attempts if spec.max_attempts is not None else 3,
            guarantee=spec.guarantee or "at-least-once",
            timeout_ms=spec.timeout_ms if spec.timeout_ms is not None else 60_000,
            backoff=spec.backoff or ModelBackoff(),
            concurrency_key=spec.concurrency_key,
            run_after=run_after,
            created_at=now,
            updated_at=now,
            expires_at=expires_at,
        )
        return job_id, True

    # -- commands from the consumer ------------------------------------------------------------------------

    def _live(self, job_id: str, attempt: int) -> ModelJob | None:
        job = self.jobs.get(job_id)
        if job is None or job.state not in IN_FLIGHT or attempt != job.live_attempt:
            return None
        return job

    def claim(self, job_id: str, attempt: int, now: int) -> bool:
        """QUEUED -> RUNNING for the live attempt only; the first claim wins (reference 1.5, B fencing)."""
        job = self._live(job_id, attempt)
        if job is None or job.state != QUEUED:
            return False
        self._move(job, RUNNING, now)
        job.claimed = True
        job.claimed_at = now
        return True

    def heartbeat(self, job_id: str, attempt: int, now: int) -> tuple[bool, frozenset[bool]]:
        """``(accepted, allowed cancel_requested answers)``; an accepted heartbeat pushes the silence deadline.

        An expiry that passed but no tick has noticed yet may or may not count as a cancel request.
        """
        job = self._live(job_id, attempt)
        if job is None:
            return False, frozenset({False})
        job.heartbeat_at = now
        if job.cancel_first_at is not None:
            return True, frozenset({True})
        return True, frozenset({False, True}) if self._expired(job, now) else frozenset({False})

    @staticmethod
    def _expired(job: ModelJob, now: int) -> bool:
        return job.expires_at is not None and job.expires_at <= now

    def report_success(self, job_id: str, attempt: int, now: int) -> Expected:
        """A success of the live attempt completes the job (A6 leaves success-after-cancel-request open)."""
        job = self._live(job_id, attempt)
        if job is None:
            return Expected(accepted=False)
        job.attempts += 1
        cancelling = job.cancel_first_at is not None or self._expired(job, now)
        return Expected(
            accepted=True, states=frozenset({COMPLETED, CANCELLED} if cancelling else {COMPLETED})
        )

    def report_failure(self, job_id: str, attempt: int, now: int, *, retryable: bool) -> Expected:
        """Failure of the live attempt: retry with backoff, FAILED when exhausted or not retryable (A6, A8)."""
        job = self._live(job_id, attempt)
        if job is None:
            return Expected(accepted=False)
        job.attempts += 1
        if job.cancel_first_at is not None:
            return Expected(accepted=True, states=frozenset({CANCELLED}))
        # An expiry no tick has noticed yet may already count as a cancel request (A5).
        maybe_cancelled = {CANCELLED} if self._expired(job, now) else set[str]()
        if not retryable or job.attempts >= job.max_attempts:
            return Expected(accepted=True, states=frozenset({FAILED} | maybe_cancelled))
        return Expected(accepted=True, states=frozenset({SCHEDULED} | maybe_cancelled))

    # -- commands from people ------------------------------------------------------------------------------

    def cancel(self, job_id: str, now: int) -> tuple[bool, bool, str | None]:
        """``(ok, requested, reason)`` by docs/reference/additions.md A6."""
        job = self.jobs.get(job_id)
        if job is None:
            return False, False, "gone"
        if job.state in TERMINAL:
            return False, False, "invalid-state"
        if job.state == SCHEDULED or (job.guarantee == "at-most-once" and job.state == QUEUED):
            self._move(job, CANCELLED, now)
            return True, False, None
        if job.cancel_first_at is None:
            job.cancel_first_at = now
        job.cancel_last_at = now
        return True, True, None

    def retry(self, job_id: str, now: int) -> tuple[bool, str | None]:
        """FAILED/STALLED -> SCHEDULED due now; attempts are kept (reference 3.3).

        A retryable job past its failed retention is gone, swept or not yet (the sweep may come later).
        """
        job = self.jobs.get(job_id)
        if job is None:
            return False, "gone"
        if job.state in RETRYABLE and now - job.updated_at >= self.policy.failed_retention_ms:
            return False, "gone"
        if job.state not in RETRYABLE:
            return False, "invalid-state"
        self._move(job, SCHEDULED, now)
        job.run_after = now
        job.claimed = False
        return True, None

    def reschedule(
        self, job_id: str, run_after: int, priority: int | None, now: int
    ) -> tuple[bool, str | None]:
        """SCHEDULED only; changes run_after (and priority) in place."""
        job = self.jobs.get(job_id)
        if job is None:
            return False, "gone"
        if job.state != SCHEDULED:
            return False, "invalid-state"
        job.run_after = run_after
        if priority is not None:
            job.priority = priority
        job.updated_at = now
        return True, None

    # -- tick ----------------------------------------------------------------------------------------------

    def tick_allowed(self, now: int) -> dict[str, frozenset[str]]:
        """Allowed state of every job after one tick at ``now`` (before dispatch is judged separately)."""
        return {job_id: self._tick_allowed_one(job, now) for job_id, job in self.jobs.items()}

    def _tick_allowed_one(self, job: ModelJob, now: int) -> frozenset[str]:
        state = job.state
        if state in TERMINAL:
            keep = self.policy.failed_retention_ms if state in RETRYABLE else self.policy.sweep_after_ms
            return frozenset({state, SWEPT}) if now - job.updated_at >= keep else frozenset({state})
        expired = job.expires_at is not None and job.expires_at <= now
        if state == SCHEDULED:
            if expired:
                return frozenset({CANCELLED})
            return frozenset({SCHEDULED, QUEUED}) if self.is_ready(job, now) else frozenset({SCHEDULED})
        return self._in_flight_allowed(job, now, expired)

    def _in_flight_allowed(self, job: ModelJob, now: int, expired: bool) -> frozenset[str]:
        grace = self.policy.reaper_grace_ms
        first, last = job.cancel_first_at, job.cancel_last_at
        if first is not None and last is not None and now >= first + grace:
            # A cancel request unanswered for the grace period ends the job (A6); a repeated request may
            # restart the period.
            return frozenset({CANCELLED, job.state} if now < last + grace else {CANCELLED})
        if expired and first is None:
            # An expiry (A5) ends the job at once or asks it to stop, "as for a confirmed cancellation";
            # ``notice_expiries`` records the request when the job stays in flight.
            return frozenset({job.state, CANCELLED})
        early, late = job.silence_window(grace)
        if now < early:
            return frozenset({job.state})
        reaped = self._reaped(job, cancelling=first is not None)
        return reaped | {job.state} if now < late else reaped

    @staticmethod
    def _reaped(job: ModelJob, *, cancelling: bool) -> frozenset[str]:
        """What the reaper makes of a silent attempt (reference 1.7, gap 12, A5, A6)."""
        if cancelling:
            # A silent attempt is a failed one; after a cancel request (or the expiry) it is not retried.
            return frozenset({CANCELLED})
        if job.guarantee == "at-most-once" and job.claimed:
            return frozenset({STALLED})
        if job.attempts >= job.max_attempts:
            return frozenset({FAILED})
        if job.attempts + 1 >= job.max_attempts:
            # Reference 1.7 requeues here (the silent attempt is counted, then one more try follows); the
            # engine may instead count the silent attempt against max_attempts and fail now. Both bound retries.
            return frozenset({SCHEDULED, FAILED})
        # gap 12: an at-most-once job never claimed never started, so it is requeued like an at-least-once one.
        return frozenset({SCHEDULED})

    def given_up(self, job_id: str, now: int) -> None:
        """A tick moved in-flight ``job_id`` on without an answer (reaper, cancel grace, expiry): an attempt that
        showed it started may still run until its invocation's end, counted from its claim, else from its last
        heartbeat; its concurrency_key keeps the slot until then (ADR-0185)."""
        job = self.jobs[job_id]
        if job.concurrency_key is None or job.state not in IN_FLIGHT:
            return
        started = job.claimed_at if job.guarantee == "at-most-once" and job.claimed else job.heartbeat_at
        if started is not None and started + INVOCATION_MS > now:
            self.holds.append((job.concurrency_key, started + INVOCATION_MS))

    def held(self, key: str, now: int) -> int:
        """Slots of ``key`` kept by attempts given up that may still run at ``now``."""
        return sum(1 for held_key, until in self.holds if held_key == key and until > now)

    def is_ready(self, job: ModelJob, now: int) -> bool:
        """SCHEDULED, due, not expired and the shard not paused."""
        expired = job.expires_at is not None and job.expires_at <= now
        return job.state == SCHEDULED and job.run_after <= now and not expired and not self.policy.paused

    def in_flight(self, key: str | None = None) -> int:
        """QUEUED + RUNNING jobs, all of them or those of one concurrency key (brute force)."""
        return sum(
            1
            for job in self.jobs.values()
            if job.state in IN_FLIGHT and (key is None or job.concurrency_key == key)
        )

    def tokens_at(self, rate: ModelRate | None, now: int, key: str | None = None, since: int = 0) -> float:
        """Tokens a bucket holds at ``now``, replayed from the dispatch history since ``since`` (full at start)."""
        if rate is None:
            return math.inf
        tokens, refilled_at = float(rate.tokens), since
        for at, _job_id, job_key in self.dispatches:
            if at < since or (key is not None and job_key != key):
                continue
            tokens = min(float(rate.tokens), tokens + (at - refilled_at) * rate.tokens / rate.interval_ms)
            refilled_at = at
            tokens -= 1
        return min(float(rate.tokens), tokens + (now - refilled_at) * rate.tokens / rate.interval_ms)

    def notice_expiries(self, now: int) -> None:
        """After a tick: an expired job still in flight was asked to stop (A5), at its expiry or at the tick."""
        for job in self.jobs.values():
            if job.state in IN_FLIGHT and job.cancel_first_at is None and self._expired(job, now):
                job.cancel_first_at = job.expires_at
                job.cancel_last_at = now

    # -- bookkeeping -----------------------------------------------------------------------------------------

    def record_dispatch(self, job_id: str, now: int) -> None:
        """The engine dispatched ``job_id``: SCHEDULED -> QUEUED, a fresh attempt starts."""
        job = self.jobs[job_id]
        self._move(job, QUEUED, now)
        job.dispatched_at = now
        job.claimed = False
        job.claimed_at = None
        self.dispatches.append((now, job_id, job.concurrency_key))

    def adopt(self, job_id: str, state: str, now: int, **fields: int | None) -> None:
        """Take the engine's choice where the model allowed several (state, attempts, run_after, ...)."""
        job = self.jobs[job_id]
        if state == SWEPT:
            del self.jobs[job_id]
            return
        if state != job.state:
            self._move(job, state, now)
        for name, value in fields.items():
            setattr(job, name, value)

    def _move(self, job: ModelJob, state: str, now: int) -> None:
        # Every transition clears the previous attempt's heartbeat and the cancel request (reference 3.2).
        job.state = state
        job.updated_at = now
        job.heartbeat_at = None
        if state not in IN_FLIGHT:
            job.dispatched_at = None
            job.cancel_first_at = None
            job.cancel_last_at = None
