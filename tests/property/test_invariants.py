"""Each invariant checker reports a deliberately broken history (and accepts a sound one)."""

from __future__ import annotations

from tests.property.invariants import (
    JobView,
    RateTrack,
    ReadyJob,
    at_most_once_violations,
    attempt_violations,
    concurrency_violations,
    greedy_choice,
    idle_slot_violations,
    lost_job_violations,
    priority_order_violations,
    rate_violations,
    terminal_violations,
    unchanged_violations,
)


def view(state: str, *, attempts: int = 0, key: str | None = None, updated_at: int = 0) -> JobView:
    return JobView(state=state, attempts=attempts, concurrency_key=key, updated_at=updated_at)


def test_concurrency_over_the_binding_limit_after_a_dispatch_is_reported() -> None:
    views = {"a": view("QUEUED"), "b": view("RUNNING"), "c": view("SCHEDULED")}
    assert concurrency_violations(views, concurrency=1, per_key_concurrency=1, dispatched_keys=[None])
    assert not concurrency_violations(views, concurrency=2, per_key_concurrency=1, dispatched_keys=[None])


def test_over_limit_without_a_dispatch_is_not_a_violation() -> None:
    # A runtime configure may lower the limit below what is already in flight.
    views = {"a": view("QUEUED"), "b": view("QUEUED")}
    assert not concurrency_violations(views, concurrency=0, per_key_concurrency=1, dispatched_keys=[])


def test_per_key_concurrency_exceeded_for_a_dispatched_key_is_reported() -> None:
    views = {"a": view("QUEUED", key="k"), "b": view("QUEUED", key="k"), "c": view("QUEUED", key="j")}
    problems = concurrency_violations(views, concurrency=10, per_key_concurrency=1, dispatched_keys=["k"])
    assert problems == ["2 jobs of key 'k' in flight, per_key_concurrency is 1"]
    assert not concurrency_violations(views, concurrency=10, per_key_concurrency=2, dispatched_keys=["k"])


def test_a_slot_kept_by_an_attempt_given_up_counts_for_its_key() -> None:
    views = {"a": view("QUEUED", key="k")}
    problems = concurrency_violations(
        views, concurrency=10, per_key_concurrency=1, dispatched_keys=["k"], held={"k": 1}
    )
    assert problems == [
        "1 jobs of key 'k' in flight and 1 given up that may still run, per_key_concurrency is 1"
    ]
    assert not concurrency_violations(
        views, concurrency=10, per_key_concurrency=1, dispatched_keys=["k"], held={"j": 1}
    )


def test_rate_burst_beyond_capacity_is_reported() -> None:
    assert rate_violations([0, 0, 0], tokens=2, interval_ms=1000)
    assert not rate_violations([0, 0], tokens=2, interval_ms=1000)


def test_rate_refill_too_fast_is_reported() -> None:
    # 2 tokens, refilling 2 per second: 2 at once, then one more only after 500 ms.
    assert rate_violations([0, 0, 499], tokens=2, interval_ms=1000)
    assert not rate_violations([0, 0, 500, 1000], tokens=2, interval_ms=1000)


def test_two_live_attempts_of_one_job_are_reported() -> None:
    assert attempt_violations([("a", 1), ("b", 1), ("a", 1)]) == ["a: attempt 1 dispatched after attempt 1"]
    assert attempt_violations([("a", 2), ("a", 1)])
    assert not attempt_violations([("a", 1), ("b", 1), ("a", 2)])


def test_second_start_of_an_at_most_once_job_is_reported_unless_retried() -> None:
    assert at_most_once_violations([("claim", "a"), ("claim", "a")])
    assert not at_most_once_violations([("claim", "a"), ("retry", "a"), ("claim", "a"), ("claim", "b")])
    assert not at_most_once_violations([("claim", "a"), ("failure", "a"), ("claim", "a")])


def test_terminal_state_change_is_reported_unless_it_is_a_manual_retry() -> None:
    before = {"a": view("COMPLETED"), "b": view("FAILED"), "c": view("STALLED")}
    after = {"a": view("SCHEDULED"), "b": view("SCHEDULED"), "c": view("COMPLETED")}
    problems = terminal_violations(before, after, retried=["b", "c"])
    assert problems == ["a: terminal COMPLETED became SCHEDULED", "c: terminal STALLED became COMPLETED"]
    assert terminal_violations(before, after, retried=[]) != problems


def test_a_lost_active_job_or_an_early_sweep_is_reported() -> None:
    seen = {"a": view("QUEUED"), "b": view("COMPLETED", updated_at=100), "c": view("FAILED", updated_at=100)}
    now_seen: dict[str, JobView | None] = {"a": None, "b": None, "c": None}
    problems = lost_job_violations(seen, now_seen, now=1100, sweep_after_ms=1000, failed_retention_ms=5000)
    assert problems == ["a: lost while QUEUED", "c: FAILED swept 1000 ms after its change, retention 5000"]


def test_a_refused_report_that_changed_the_job_is_reported() -> None:
    assert unchanged_violations("late report", view("QUEUED", attempts=1), view("COMPLETED", attempts=2))
    assert unchanged_violations("late report", view("QUEUED"), None)
    assert not unchanged_violations("late report", view("QUEUED", attempts=1), view("QUEUED", attempts=1))


def test_rate_track_judges_each_key_on_its_own() -> None:
    track = RateTrack(rate=(1, 1000), by_key={"k1": [0, 1000], "k2": [0, 10]})
    assert track.violations() == ["per-key rate k2: 2 dispatches within 10 ms (from 0), at most 1.01 allowed"]
    assert RateTrack(rate=None, instants=[0, 0, 0]).violations() == []


def ready(job_id: str, score: int, key: str | None = None, at: int = 0) -> ReadyJob:
    return ReadyJob(id=job_id, score=score, eligible_at=at, created_at=at, key=key)


def test_a_dispatchable_job_left_waiting_with_a_free_slot_is_reported() -> None:
    left = [ready("a", 1), ready("b", 5, key="k")]
    assert idle_slot_violations(left, free_slots=1, blocked_keys=["k"]) == [
        "a (key None) left waiting with 1 free slots"
    ]
    assert not idle_slot_violations(left, free_slots=0, blocked_keys=[])
    assert not idle_slot_violations([ready("b", 5, key="k")], free_slots=3, blocked_keys=["k"])


def test_a_better_job_left_behind_a_dispatched_one_is_reported_unless_its_key_is_blocked() -> None:
    sent = [ready("low", 1), ready("high", 9)]
    assert priority_order_violations([ready("mid", 5)], sent, blocked_keys=[]) == [
        "mid (effective priority 5) left behind low"
    ]
    assert not priority_order_violations([ready("mid", 5, key="k")], sent, blocked_keys=["k"])
    assert not priority_order_violations([ready("tie", 1)], sent, blocked_keys=[])


def test_the_reference_batch_is_greedy_over_the_whole_backlog() -> None:
    jobs = [ready(f"k{i}", 10, key="K", at=i) for i in range(5)] + [ready("l", 0, key="L"), ready("free", 3)]
    assert greedy_choice(jobs, slots=3, room={"K": 1, "L": 1}) == {"k0", "free", "l"}
    assert greedy_choice(jobs, slots=2, room={"K": 2, "L": 1}) == {"k0", "k1"}
    assert greedy_choice(jobs, slots=9, room={"K": 0, "L": 0}) == {"free"}
