"""Random command sequences against the real engine, judged by the reference model and the invariants.

The machine plays every party around one shard: producers (enqueue), the alarm (tick), the queue and its
consumer (claims, reports, heartbeats, duplicate deliveries, lost messages, late reports of old attempts),
people (cancel, retry, reschedule, configure, pause, reset), the read-model writer (project) and time.

After every step it reads every job back from the engine and checks: concurrency and per-key concurrency,
rate and per-key rate over every window, one live attempt per job, at-most-once starts, terminal states,
no lost job, and agreement with the model. Set ``TSUMUGI_PROPERTY_EXAMPLES`` / ``TSUMUGI_PROPERTY_STEPS`` to
run longer. Shrinking is off by default (a failing sequence is printed as found, with the model's view of the
job in the message) because shrinking these sequences can take Hypothesis' full five minutes; set
``TSUMUGI_PROPERTY_SHRINK=1`` to get the minimal sequence.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tests.property.engine_driver import EngineDriver, EngineJob, Message
from tests.property.invariants import (
    JobView,
    RateTrack,
    ReadyJob,
    at_most_once_violations,
    attempt_violations,
    concurrency_violations,
    idle_slot_violations,
    lost_job_violations,
    priority_order_violations,
    terminal_violations,
    unchanged_violations,
)
from tests.unit.core.reference_model import (
    IN_FLIGHT,
    QUEUED,
    SCHEDULED,
    SWEPT,
    ModelPolicy,
    ModelRate,
    ReferenceShard,
)
from tests.unit.core.strategies import CLOCK_STEPS_MS, invalid_specs, job_specs, policies, policy_patches
from tsumugi_core.testing import FixedClock
from tsumugi_scheduler.shard.tick import MAX_DISPATCH_PER_TICK

START_MS = 1_700_000_000_000
EXAMPLES = int(os.environ.get("TSUMUGI_PROPERTY_EXAMPLES", "60"))
STEPS = int(os.environ.get("TSUMUGI_PROPERTY_STEPS", "40"))
PHASES = [Phase.explicit, Phase.reuse, Phase.generate]
if os.environ.get("TSUMUGI_PROPERTY_SHRINK") == "1":
    PHASES.append(Phase.shrink)
DISPATCH_CAP_GUARD = MAX_DISPATCH_PER_TICK
"""Ticks dispatching this many jobs hit the per-tick bound; the work-conserving check skips them."""


def _pair(rate: ModelRate | None) -> tuple[int, int] | None:
    return None if rate is None else (rate.tokens, rate.interval_ms)


def _view(job: EngineJob | None) -> JobView | None:
    if job is None:
        return None
    return JobView(
        state=job.state, attempts=job.attempts, concurrency_key=job.concurrency_key, updated_at=job.updated_at
    )


class ShardMachine(RuleBasedStateMachine):
    """One shard, its model and the fake queue between them."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = FixedClock(START_MS)
        self.driver = EngineDriver(self.clock)
        self.model = ReferenceShard()
        self.ids: list[str] = []
        self.generation: dict[str, int] = {}
        self.seen: dict[str, JobView] = {}
        self.messages: list[Message] = []
        self.started: set[tuple[str, int]] = set()
        self.dispatch_log: list[tuple[str, int]] = []
        self.start_events: list[tuple[str, str]] = []
        self.retried: set[str] = set()
        self.rate_track = RateTrack(rate=None)
        self.key_rate_track = RateTrack(rate=None)

    def teardown(self) -> None:
        self.driver.close()

    @property
    def now(self) -> int:
        return self.clock.now_ms()

    # -- set-up and settings ----------------------------------------------------------------------------------

    @initialize(policy=policies())
    def start(self, policy: ModelPolicy) -> None:
        self._configure(vars(policy).copy())

    @rule(patch=policy_patches())
    def configure(self, patch: dict[str, object]) -> None:
        self._configure(patch)

    @rule()
    def reset(self) -> None:
        self.driver.reset()
        self._adopt_policy()

    def _configure(self, patch: dict[str, object]) -> None:
        self.driver.configure(patch)
        self._adopt_policy()
        for name, value in patch.items():
            assert getattr(self.model.policy, name) == value, f"configure did not pin {name}"

    def _adopt_policy(self) -> None:
        self.model.policy = self.driver.effective_policy()
        rate, key_rate = _pair(self.model.policy.rate), _pair(self.model.policy.per_key_rate)
        if rate != self.rate_track.rate:
            self.rate_track = RateTrack(rate=rate)
        if key_rate != self.key_rate_track.rate:
            self.key_rate_track = RateTrack(rate=key_rate)

    # -- producers --------------------------------------------------------------------------------------------

    @rule(data=st.data(), count=st.integers(1, 4))
    def enqueue_many(self, data: st.DataObject, count: int) -> None:
        specs = [data.draw(job_specs(self.now)) for _ in range(count)]
        results = self.driver.enqueue_many(specs)
        assert results is not None, "a valid batch was rejected"
        assert len(results) == len(specs)
        for spec, (job_id, created) in zip(specs, results, strict=True):
            expected_id, expected_created = self.model.enqueue(spec, self.now, job_id)
            assert (job_id, created) == (expected_id, expected_created), spec
            if created:
                self._new_job(job_id)

    @rule(data=st.data())
    def enqueue_invalid(self, data: st.DataObject) -> None:
        valid = data.draw(job_specs(self.now))
        bad = data.draw(invalid_specs())
        before, counts = self._read_all(), self.driver.counts()
        assert self.driver.enqueue_many([valid, bad]) is None, f"invalid item accepted: {bad}"
        assert self._read_all() == before, "a rejected batch changed stored jobs"
        assert self.driver.counts() == counts, "a rejected batch stored a job"

    def _new_job(self, job_id: str) -> None:
        if job_id not in self.generation:
            self.ids.append(job_id)
        self.generation[job_id] = self.generation.get(job_id, 0) + 1
        self.start_events.append(("retry", job_id))  # a fresh enqueue may start once more

    # -- the alarm --------------------------------------------------------------------------------------------

    @rule()
    def tick(self) -> None:
        now = self.now
        allowed = self.model.tick_allowed(now)
        ready_before = {job_id for job_id, job in self.model.jobs.items() if self.model.is_ready(job, now)}
        messages = self.driver.tick()
        dispatched = {m.job_id for m in messages}
        assert len(dispatched) == len(messages), "one tick dispatched a job twice"
        for job_id in list(self.model.jobs):
            engine = self.driver.get(job_id)
            state = SWEPT if engine is None else engine.state
            assert state in allowed[job_id], f"{self.model.jobs[job_id]} -> {state} at {now}"
            if job_id in dispatched:
                assert engine is not None
                assert engine.state == QUEUED
                self._check_message(next(m for m in messages if m.job_id == job_id))
                self.model.record_dispatch(job_id, now)
            else:
                self._check_tick_attempts(job_id, engine)
                if engine is None or engine.state not in IN_FLIGHT:
                    self.model.given_up(job_id, now)
                self._adopt(job_id, engine)
        self.model.notice_expiries(now)
        self.messages.extend(messages)
        self._record_dispatch_instants(messages)
        self._check_dispatch_choice(ready_before, dispatched, len(messages))
        if messages:
            problems = self.rate_track.violations() + self.key_rate_track.violations()
            assert not problems, problems
        keys = [self.model.jobs[j].concurrency_key for j in dispatched]
        assert not concurrency_violations(
            self._read_all(),
            concurrency=self.model.policy.concurrency,
            per_key_concurrency=self.model.policy.per_key_concurrency,
            dispatched_keys=keys,
            held={key: self.model.held(key, now) for key in keys if key is not None},
        )

    def _check_tick_attempts(self, job_id: str, engine: EngineJob | None) -> None:
        """Attempts after a tick: unchanged unless reaped; an at-least-once reap counts one (reference 1.7)."""
        job = self.model.jobs[job_id]
        if engine is None or engine.state == job.state:
            assert engine is None or engine.attempts == job.attempts, job_id
            return
        if job.state in IN_FLIGHT and engine.state == SCHEDULED and job.guarantee == "at-least-once":
            assert engine.attempts == job.attempts + 1, f"{job_id}: reap did not count the silent attempt"
        else:
            assert engine.attempts in {job.attempts, job.attempts + 1}, job_id

    def _check_message(self, message: Message) -> None:
        job = self.model.jobs[message.job_id]
        assert job.state == SCHEDULED, f"dispatched {message.job_id} from {job.state}"
        assert message.attempt == job.live_attempt
        assert message.claim_required == (job.guarantee == "at-most-once")
        assert message.timeout_ms == job.timeout_ms
        self.dispatch_log.append((f"{message.job_id}@{self.generation[message.job_id]}", message.attempt))

    def _record_dispatch_instants(self, messages: list[Message]) -> None:
        for message in messages:
            self.rate_track.instants.append(message.sent_at)
            key = self.model.jobs[message.job_id].concurrency_key
            if key is not None:
                self.key_rate_track.by_key.setdefault(key, []).append(message.sent_at)

    def _check_dispatch_choice(self, ready: set[str], dispatched: set[str], count: int) -> None:
        """Greedy by effective priority over the whole backlog: nothing lower chosen over a job its key would
        have let go, and no such job left waiting while a slot is free."""
        policy = self.model.policy
        left: list[ReadyJob] = []
        for job_id in ready - dispatched:
            job = self.model.jobs.get(job_id)
            if job is not None and job.state == SCHEDULED:
                left.append(self._ready_job(job_id))
        # A key is blocked after the tick when it is full (jobs in flight and attempts given up that may still
        # run, ADR-0185); with a per-key rate any key may be out of tokens.
        keys = {job.key for job in left if job.key is not None}
        blocked = {
            key
            for key in keys
            if policy.per_key_rate is not None
            or self.model.in_flight(key) + self.model.held(key, self.now) >= policy.per_key_concurrency
        }
        sent = [self._ready_job(job_id) for job_id in dispatched]
        problems = priority_order_violations(left, sent, blocked_keys=blocked)
        if policy.rate is None and count < DISPATCH_CAP_GUARD:
            free = policy.concurrency - self.model.in_flight()
            problems += idle_slot_violations(left, free_slots=free, blocked_keys=blocked)
        assert not problems, problems

    def _ready_job(self, job_id: str) -> ReadyJob:
        job, policy = self.model.jobs[job_id], self.model.policy
        return ReadyJob(
            id=job_id,
            score=job.effective_priority(self.now, policy.aging_interval_ms),
            eligible_at=job.eligible_at,
            created_at=job.created_at,
            key=job.concurrency_key,
        )

    # -- the queue and its consumer ---------------------------------------------------------------------------

    @precondition(lambda self: self.messages)
    @rule(data=st.data())
    def claim(self, data: st.DataObject) -> None:
        message = data.draw(st.sampled_from(self.messages))
        if not message.claim_required:
            return
        before = _view(self.driver.get(message.job_id))
        expected = self.model.claim(message.job_id, message.attempt, self.now)
        assert self.driver.claim(message.job_id, message.attempt) == expected
        if expected:
            self.started.add((message.job_id, message.attempt))
            self.start_events.append(("claim", message.job_id))
        else:
            assert not unchanged_violations("refused claim", before, _view(self.driver.get(message.job_id)))

    @precondition(lambda self: self.messages)
    @rule(data=st.data(), outcome=st.sampled_from(["success", "retryable", "final", "retry_at"]))
    def report(self, data: st.DataObject, outcome: str) -> None:
        message = data.draw(st.sampled_from(self.messages))
        if message.claim_required and (message.job_id, message.attempt) not in self.started:
            return  # an at-most-once performer only runs after winning its claim
        job_id, attempt = message.job_id, message.attempt
        before = _view(self.driver.get(job_id))
        retry_at = self.now + 2_000 if outcome == "retry_at" else None
        if outcome == "success":
            expected = self.model.report_success(job_id, attempt, self.now)
            accepted, state = self.driver.report_success(job_id, attempt)
        else:
            expected = self.model.report_failure(job_id, attempt, self.now, retryable=outcome != "final")
            accepted, state = self.driver.report_failure(
                job_id, attempt, retryable=outcome != "final", retry_at=retry_at
            )
        assert accepted == expected.accepted, f"report {outcome} of {job_id}/{attempt}"
        after = self.driver.get(job_id)
        if not accepted:
            assert not unchanged_violations("refused report", before, _view(after))
            return
        assert after is not None
        assert after.state in expected.states, f"{job_id}: {after.state} not in {set(expected.states)}"
        assert state == after.state, "the answer names the state after the report"
        assert after.attempts == self.model.jobs[job_id].attempts, "a report counts one finished attempt"
        if after.state == SCHEDULED:
            self._check_retry_time(job_id, after, retry_at)
            self.start_events.append(("failure", job_id))
        self._adopt(job_id, after)

    def _check_retry_time(self, job_id: str, after: EngineJob, retry_at: int | None) -> None:
        job, now = self.model.jobs[job_id], self.now
        if retry_at is not None:
            assert after.run_after in {retry_at, max(retry_at, now)}
            return
        low, high = job.backoff.delay_bounds(job.attempts)
        assert now + low <= after.run_after <= now + high, (
            f"backoff {after.run_after - now} not in [{low}, {high}]"
        )

    @precondition(lambda self: self.messages)
    @rule(data=st.data(), progress=st.none() | st.floats(-1, 2))
    def heartbeat(self, data: st.DataObject, progress: float | None) -> None:
        message = data.draw(st.sampled_from(self.messages))
        if message.claim_required and (message.job_id, message.attempt) not in self.started:
            return
        before = _view(self.driver.get(message.job_id))
        accepted, cancel_flags = self.model.heartbeat(message.job_id, message.attempt, self.now)
        answer = self.driver.heartbeat(message.job_id, message.attempt, progress)
        assert answer[0] == accepted, f"heartbeat of {message.job_id}/{message.attempt}"
        assert answer[1] in cancel_flags, "cancel_requested in the heartbeat answer"
        assert not unchanged_violations("heartbeat", before, _view(self.driver.get(message.job_id)))

    # -- people -----------------------------------------------------------------------------------------------

    def _pick_id(self, data: st.DataObject) -> str:
        return data.draw(st.sampled_from([*self.ids, "WORK#0:nosuchjob"]))

    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        job_id = self._pick_id(data)
        expected = self.model.cancel(job_id, self.now)
        assert self.driver.cancel(job_id) == expected, job_id
        self._check_matches(job_id)

    @rule(data=st.data())
    def retry(self, data: st.DataObject) -> None:
        job_id = self._pick_id(data)
        expected = self.model.retry(job_id, self.now)
        assert self.driver.retry(job_id) == expected, job_id
        if expected[0]:
            self.retried.add(job_id)
            self.start_events.append(("retry", job_id))
            engine = self.driver.get(job_id)
            assert engine is not None
            assert engine.run_after == self.now, "a manual retry is due at once"
            self._adopt(job_id, engine)
        self._check_matches(job_id)

    @rule(
        data=st.data(),
        offset=st.sampled_from([-1_000, 0, 500, 5_000]),
        priority=st.none() | st.integers(-2, 6),
    )
    def reschedule(self, data: st.DataObject, offset: int, priority: int | None) -> None:
        job_id = self._pick_id(data)
        expected = self.model.reschedule(job_id, self.now + offset, priority, self.now)
        assert self.driver.reschedule(job_id, self.now + offset, priority) == expected, job_id
        engine = self.driver.get(job_id)
        if expected[0]:
            assert engine is not None
            assert engine.run_after == self.now + offset
            assert priority is None or engine.priority == priority
        self._check_matches(job_id)

    # -- the read-model writer and time -----------------------------------------------------------------------

    @rule()
    def project(self) -> None:
        self.driver.project()

    @rule(step=st.sampled_from(CLOCK_STEPS_MS))
    def advance(self, step: int) -> None:
        self.clock.advance(step)

    # -- after every step ---------------------------------------------------------------------------------------

    def _read_all(self) -> dict[str, JobView | None]:
        return {job_id: _view(self.driver.get(job_id)) for job_id in self.ids}

    def _adopt(self, job_id: str, engine: EngineJob | None) -> None:
        if engine is None:
            self.model.adopt(job_id, SWEPT, self.now)
            return
        self.model.adopt(job_id, engine.state, self.now, attempts=engine.attempts, run_after=engine.run_after)

    def _check_matches(self, job_id: str) -> None:
        model = self.model.jobs.get(job_id)
        engine = self.driver.get(job_id)
        assert (model is None) == (engine is None), f"{job_id}: model {model} engine {engine}"
        if model is not None and engine is not None:
            assert (engine.state, engine.attempts) == (model.state, model.attempts), job_id

    @invariant()
    def shard_invariants(self) -> None:
        views = self._read_all()
        policy = self.model.policy
        problems = [
            *lost_job_violations(
                self.seen,
                views,
                now=self.now,
                sweep_after_ms=policy.sweep_after_ms,
                failed_retention_ms=policy.failed_retention_ms,
            ),
            *terminal_violations(self.seen, views, retried=self.retried),
            *attempt_violations(self.dispatch_log),
            *at_most_once_violations(self.start_events),
        ]
        assert not problems, problems
        for job_id in self.ids:
            self._check_matches(job_id)
        self.seen = {job_id: view for job_id, view in views.items() if view is not None}
        self.retried.clear()
        live = [v for v in views.values() if v is not None and v.state in IN_FLIGHT]
        assert len(live) == self.model.in_flight()


ShardMachine.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=STEPS,
    deadline=None,
    report_multiple_bugs=False,
    phases=PHASES,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestShardSequences = ShardMachine.TestCase
