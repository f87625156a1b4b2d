"""The real engine behind a small, model-shaped surface: converts specs to options and records to views.

Everything that depends on the engine's names lives here, so the stateful test and the reference model stay
readable and a rename in the engine touches one file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tests.unit.core.reference_model import JobSpec, ModelBackoff, ModelPolicy, ModelRate
from tsumugi_core.options import (
    EnqueueItem,
    EnqueueValidationError,
    ExponentialBackoff,
    FixedBackoff,
    RateLimit,
)
from tsumugi_core.policy import PolicyPatch
from tsumugi_core.testing import FixedClock, SequentialIds
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.shard.engine import JobShardEngine
from tsumugi_scheduler.shard.records import Failed, Succeeded

__all__ = ["EngineDriver", "EngineJob", "Message", "RecordingRandom"]

BINDING = "WORK"


class RecordingRandom:
    """A seeded pseudo-random source (xorshift) that remembers what it answered."""

    def __init__(self, seed: int) -> None:
        self._state = (seed * 2654435761 + 1) & 0xFFFFFFFF or 1
        self.drawn: list[float] = []

    def random(self) -> float:
        x = self._state
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        self._state = x
        value = x / 2**32
        self.drawn.append(value)
        return value


@dataclass(frozen=True, kw_only=True)
class Message:
    """A dispatch message as the test's fake queue keeps it."""

    job_id: str
    attempt: int
    claim_required: bool
    payload: Any
    timeout_ms: int
    sent_at: int


@dataclass(frozen=True, kw_only=True)
class EngineJob:
    """The engine's record of a job, in the model's vocabulary."""

    id: str
    state: str
    attempts: int
    priority: int
    run_after: int
    created_at: int
    updated_at: int
    concurrency_key: str | None
    guarantee: str


def _backoff(spec: ModelBackoff | None) -> FixedBackoff | ExponentialBackoff | None:
    if spec is None:
        return None
    if spec.kind == "fixed":
        return FixedBackoff(delay_ms=spec.delay_ms, jitter=spec.jitter)
    return ExponentialBackoff(
        base_ms=spec.base_ms, factor=spec.factor, max_ms=spec.max_ms, jitter=spec.jitter
    )


def _rate(rate: ModelRate | None) -> RateLimit | None:
    return None if rate is None else RateLimit(tokens=rate.tokens, interval_ms=rate.interval_ms)


def _item(spec: JobSpec) -> EnqueueItem:
    return EnqueueItem(
        binding=BINDING,
        payload=spec.payload,
        id=spec.id,
        priority=spec.priority,
        max_attempts=spec.max_attempts,
        backoff=_backoff(spec.backoff),
        timeout_ms=spec.timeout_ms,
        delay_ms=spec.delay_ms,
        run_at=spec.run_at,
        guarantee=spec.guarantee,  # type: ignore[arg-type]  # the StrEnum's values
        concurrency_key=spec.concurrency_key,
        unique_key=spec.unique_key,
        unique_for_ms=spec.unique_for_ms,
        expires_at=spec.expires_at,
        expires_in_ms=spec.expires_in_ms,
    )


class EngineDriver:
    """One ``JobShardEngine`` on in-memory SQLite with a fixed clock and a recording random source."""

    def __init__(self, clock: FixedClock, seed: int = 1, sql: SqlStorage | None = None) -> None:
        self.clock = clock
        self.rand = RecordingRandom(seed)
        self.sql = sql or SqlStorage()
        self.engine = JobShardEngine(
            self.sql, binding=BINDING, shard=0, clock=clock, ids=SequentialIds("job"), rand=self.rand
        )

    def close(self) -> None:
        """Close the shard's database."""
        self.sql.close()

    def enqueue_many(self, specs: Sequence[JobSpec]) -> list[tuple[str, bool]] | None:
        """Ids and created flags, or None when the engine rejected the call as invalid."""
        try:
            items = [_item(spec) for spec in specs]
            results = self.engine.enqueue_many(items)
        except EnqueueValidationError:
            return None
        return [(r.id, r.created) for r in results]

    def tick(self) -> list[Message]:
        now = self.clock.now_ms()
        return [
            Message(
                job_id=m.job_id,
                attempt=m.attempt,
                claim_required=m.claim_required,
                payload=m.payload,
                timeout_ms=m.timeout_ms,
                sent_at=now,
            )
            for m in self.engine.tick().dispatches
        ]

    def claim(self, job_id: str, attempt: int) -> bool:
        return self.engine.claim(job_id, attempt)

    def report_success(self, job_id: str, attempt: int) -> tuple[bool, str | None]:
        answer = self.engine.report(job_id, attempt, Succeeded(result={"ok": attempt}))
        return answer.accepted, None if answer.state is None else str(answer.state)

    def report_failure(
        self, job_id: str, attempt: int, *, retryable: bool, retry_at: int | None
    ) -> tuple[bool, str | None]:
        outcome = Failed(error=f"boom {attempt}", retryable=retryable, retry_at=retry_at)
        answer = self.engine.report(job_id, attempt, outcome)
        return answer.accepted, None if answer.state is None else str(answer.state)

    def heartbeat(self, job_id: str, attempt: int, progress: float | None) -> tuple[bool, bool]:
        answer = self.engine.heartbeat(job_id, attempt, progress)
        return answer.accepted, answer.cancel_requested

    def cancel(self, job_id: str) -> tuple[bool, bool, str | None]:
        answer = self.engine.cancel(job_id)
        return answer.ok, answer.requested, answer.reason

    def retry(self, job_id: str) -> tuple[bool, str | None]:
        answer = self.engine.retry(job_id)
        return answer.ok, answer.reason

    def reschedule(self, job_id: str, run_after: int, priority: int | None) -> tuple[bool, str | None]:
        answer = self.engine.reschedule(job_id, run_after, priority)
        return answer.ok, answer.reason

    def configure(self, patch: dict[str, object]) -> None:
        fields = dict(patch)
        for name in ("rate", "per_key_rate"):
            if name in fields:
                fields[name] = _rate(fields[name])  # type: ignore[arg-type]
        self.engine.configure(PolicyPatch(**fields))  # type: ignore[arg-type]

    def reset(self) -> None:
        self.engine.reset_policy()

    def project(self) -> None:
        """Read the projection feed to its end and acknowledge it (what the read-model writer does)."""
        while changes := self.engine.changes(1000):
            self.engine.ack_changes(changes[-1].job.seq)

    def counts(self) -> dict[str, int]:
        """Jobs stored, by state."""
        return dict(self.engine.diagnostics().counts)

    def get(self, job_id: str) -> EngineJob | None:
        record = self.engine.get(job_id)
        if record is None:
            return None
        return EngineJob(
            id=record.id,
            state=str(record.state),
            attempts=record.attempts,
            priority=record.priority,
            run_after=record.run_after,
            created_at=record.created_at,
            updated_at=record.updated_at,
            concurrency_key=record.concurrency_key,
            guarantee=str(record.guarantee),
        )

    def effective_policy(self) -> ModelPolicy:
        """The engine's effective settings, in the model's shape."""
        settings = self.engine.settings
        policy, retention = settings.policy, settings.retention
        return ModelPolicy(
            concurrency=policy.concurrency,
            rate=None
            if policy.rate is None
            else ModelRate(tokens=policy.rate.tokens, interval_ms=policy.rate.interval_ms),
            per_key_concurrency=policy.per_key_concurrency,
            per_key_rate=None
            if policy.per_key_rate is None
            else ModelRate(tokens=policy.per_key_rate.tokens, interval_ms=policy.per_key_rate.interval_ms),
            aging_interval_ms=policy.aging_interval_ms,
            reaper_grace_ms=policy.reaper_grace_ms,
            paused=policy.paused,
            sweep_after_ms=retention.sweep_after_ms,
            failed_retention_ms=retention.failed_retention_ms,
        )
