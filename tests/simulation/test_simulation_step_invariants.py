"""The step invariants on hand-made step logs: each flags its breach and leaves alone what the rules permit."""

from __future__ import annotations

from tsumugi_simulation import START_MS, BindingSpec, Scenario
from tsumugi_simulation._observed import JobTruth, Observed
from tsumugi_simulation._step_invariants import event_once, event_timeout, sleep_wake, step_once
from tsumugi_simulation._steplog import EventSend, SleepRecord, StepLog, WaitRecord

JOB = "A#0:j1"


def seen(log: StepLog, guarantee: str = "at-least-once", faults: tuple[int, ...] = ()) -> Observed:
    observed = Observed(scenario=Scenario(bindings=(BindingSpec(name="A"),)), executions=[], end_ms=START_MS)
    observed.jobs[JOB] = JobTruth(
        id=JOB,
        binding="A",
        state="COMPLETED",
        attempts=1,
        guarantee=guarantee,
        concurrency_key=None,
        payload="{}",
    )
    observed.steps = log
    observed.fault_times = [START_MS + f for f in faults]
    return observed


def test_step_once_flags_a_body_run_by_an_invocation_begun_after_the_step_completed() -> None:
    log = StepLog()
    first = log.tick()
    log.body(JOB, "s0", first)
    later = log.tick()  # a duplicate delivery that began before the save: at-least-once permits its run
    log.body(JOB, "s0", later)
    log.complete(JOB, "s0")
    assert list(step_once(seen(log))) == []
    again = log.tick()
    log.body(JOB, "s0", again)
    assert [v.invariant for v in step_once(seen(log))] == ["step_once"]


def test_step_once_allows_an_at_most_once_body_one_run_only() -> None:
    log = StepLog()
    log.body(JOB, "s0", log.tick())
    assert list(step_once(seen(log, "at-most-once"))) == []
    log.body(JOB, "s0", log.tick())
    assert [v.invariant for v in step_once(seen(log, "at-most-once"))] == ["step_once"]


def test_sleep_wake_flags_a_pass_before_the_first_reach_plus_the_sleep() -> None:
    log = StepLog()
    log.sleeps.append(SleepRecord(JOB, 1, START_MS + 1_000, 5_000, passed=False))
    log.sleeps.append(SleepRecord(JOB, 2, START_MS + 6_000, 5_000, passed=True))
    assert list(sleep_wake(seen(log))) == []
    log.sleeps.append(SleepRecord(JOB, 3, START_MS + 5_999, 5_000, passed=True))
    assert [v.invariant for v in sleep_wake(seen(log))] == ["sleep_wake"]


def _waiting(key: str, timeout_outcome: bool) -> StepLog:
    log = StepLog()
    log.waits.append(WaitRecord(JOB, key, START_MS + 1_000, 10_000, "reached"))
    if timeout_outcome:
        log.waits.append(WaitRecord(JOB, key, START_MS + 11_000, 10_000, "timeout"))
    return log


def test_event_once_flags_a_timeout_despite_an_acknowledged_event_in_time_unless_a_fault_struck() -> None:
    log = _waiting("e0", timeout_outcome=True)
    log.sends.append(EventSend("e0", START_MS + 2_000, 0, acknowledged=False))  # lost: may never have arrived
    log.sends.append(EventSend("e1", START_MS + 2_000, 1, acknowledged=True))  # another key
    assert list(event_once(seen(log))) == []
    log.sends.append(EventSend("e0", START_MS + 2_000, 2, acknowledged=True))
    assert [v.invariant for v in event_once(seen(log))] == ["event_once"]
    assert list(event_once(seen(log, faults=(5_000,)))) == []


def test_event_once_flags_two_events_for_one_wait_and_an_event_of_another_key() -> None:
    log = _waiting("e0", timeout_outcome=False)
    log.sends += [EventSend("e0", START_MS, 0, True), EventSend("e1", START_MS, 1, True)]
    log.waits.append(WaitRecord(JOB, "e0", START_MS + 1_000, 10_000, "event", 0))
    assert list(event_once(seen(log))) == []
    log.waits.append(WaitRecord(JOB, "e0", START_MS + 1_000, 10_000, "event", 1))
    assert [v.invariant for v in event_once(seen(log))] == ["event_once", "event_once"]


def test_event_timeout_flags_a_timeout_before_the_deadline_and_an_event_where_none_was_sent() -> None:
    log = _waiting("n7", timeout_outcome=True)
    assert list(event_timeout(seen(log))) == []
    early = _waiting("n7", timeout_outcome=False)
    early.waits.append(WaitRecord(JOB, "n7", START_MS + 10_999, 10_000, "timeout"))
    assert [v.invariant for v in event_timeout(seen(early))] == ["event_timeout"]
    phantom = _waiting("n7", timeout_outcome=False)
    phantom.waits.append(WaitRecord(JOB, "n7", START_MS + 2_000, 10_000, "event", 0))
    assert [v.invariant for v in event_timeout(seen(phantom))] == ["event_timeout"]
