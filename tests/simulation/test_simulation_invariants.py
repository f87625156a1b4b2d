"""Each invariant of the simulator, fed a hand-made ledger: it reports the breach it exists for, and only that.

These run without the system, so they hold whatever the scheduler does; the CI seeds (test_simulation_ci.py)
run the checks against the real system.
"""

from __future__ import annotations

from tsumugi_core.liveness import MAX_INVOCATION_MS
from tsumugi_simulation import START_MS, BindingSpec, Execution, Scenario
from tsumugi_simulation._invariants import at_most_once, concurrency, fairness, notices, terminal_final
from tsumugi_simulation._observed import JobTruth, Observed, Submitted

SCENARIO = Scenario(
    bindings=(
        BindingSpec(name="A", concurrency=2, per_key_concurrency=1, reaper_grace_ms=1_000),
        BindingSpec(name="Fail"),
        BindingSpec(name="Done"),
    ),
    on_failure="Fail",
    on_settled="Done",
)


def job(
    local: str,
    *,
    state: str = "COMPLETED",
    guarantee: str = "at-least-once",
    key: str | None = None,
    attempts: int = 1,
    binding: str = "A",
    payload: str = "{}",
) -> JobTruth:
    return JobTruth(
        id=f"{binding}#0:{local}",
        binding=binding,
        state=state,
        attempts=attempts,
        guarantee=guarantee,
        concurrency_key=key,
        payload=payload,
        timeout_ms=10_000,
    )


def run(j: JobTruth, attempt: int, start: int, end: int | None) -> Execution:
    return Execution(
        binding=j.binding,
        job_id=j.id,
        attempt=attempt,
        started_at=START_MS + start,
        payload=None,
        ended_at=None if end is None else START_MS + end,
        outcome="ok",
    )


def observed(jobs: list[JobTruth], executions: list[Execution], end: int = 100_000) -> Observed:
    seen = Observed(scenario=SCENARIO, executions=executions, end_ms=START_MS + end)
    seen.jobs = {j.id: j for j in jobs}
    return seen


def test_at_most_once_flags_an_attempt_starting_while_the_previous_one_still_executes() -> None:
    once = job("once", guarantee="at-most-once", attempts=2)
    # Item 1: attempt 1 timed out at 2 s but worked on until 20 s; attempt 2 started at 2.77 s.
    seen = observed([once], [run(once, 1, 0, 20_000), run(once, 2, 2_770, 3_000)])
    (found,) = at_most_once(seen)
    assert "attempt 2 started at +2.770s while attempt 1" in found.message
    sequential = observed([once], [run(once, 1, 0, 2_000), run(once, 2, 2_770, 3_000)])
    assert list(at_most_once(sequential)) == []


def test_at_most_once_ignores_at_least_once_jobs_and_flags_a_repeated_attempt() -> None:
    many = job("many", attempts=2)
    assert list(at_most_once(observed([many], [run(many, 1, 0, 5_000), run(many, 2, 1_000, 2_000)]))) == []
    once = job("twice", guarantee="at-most-once")
    (found,) = at_most_once(observed([once], [run(once, 1, 0, 10), run(once, 1, 20, 30)]))
    assert "one attempt twice" in found.message


def test_concurrency_counts_slots_until_the_rules_free_them() -> None:
    a, b, c = job("a", key="k"), job("b", key="k"), job("c")
    over = observed([a, b, c], [run(a, 1, 0, 1_000), run(b, 1, 500, 600), run(c, 1, 550, 700)])
    messages = [v.message for v in concurrency(over)]
    assert any("per_key_concurrency 1" in m for m in messages)
    assert any("3 executions" in m and "> concurrency 2" in m for m in messages)
    # Running on past its deadline (abandoned), the first no longer holds its binding's slot (the limit of 2 is
    # kept) but still holds its key's: a shard keeps it until the attempt can no longer run (ADR-0185).
    a_late = run(a, 1, 0, 50_000)
    a_late.deadline_at = START_MS + 1_000
    d = job("d")
    runs = [a_late, run(b, 1, 2_000, 2_100), run(d, 1, 2_050, 2_100)]
    messages = [v.message for v in concurrency(observed([a, b, d], runs))]
    assert messages == ["A#0 key k: 2 executions at +2.000s > per_key_concurrency 1 (A#0:a#1, A#0:b#1)"]


def test_fairness_flags_a_job_waiting_while_a_slot_and_its_key_are_free() -> None:
    hot = [job(f"hot{i}", key="K") for i in range(3)]
    cold = job("cold", key="L")
    executions = [run(h, 1, i * 3_000, (i + 1) * 3_000) for i, h in enumerate(hot)] + [
        run(cold, 1, 9_000, 9_100)
    ]
    seen = observed([*hot, cold], executions)
    seen.submitted[cold.id] = Submitted(job_id=cold.id, enqueued_at=START_MS, ready_at=START_MS)
    (found,) = fairness(seen)
    assert found.job_id == cold.id
    assert "waited 8.9s" in found.message
    seen.fault_times = [START_MS]  # shortly after a fault a slot may be held by a lost message: not judged
    assert list(fairness(seen)) == []


def test_fairness_reads_a_key_its_shard_keeps_for_a_given_up_attempt_as_busy() -> None:
    # ADR-0185: attempt 1 of "first" ran past its deadline (1 s) and was given up; its shard keeps key K until the
    # attempt can no longer run, so "second" waiting for K meanwhile is held by the rules, not starved.
    first, second = job("first", key="K"), job("second", key="K")
    hung = run(first, 1, 0, 4_000)
    hung.deadline_at = START_MS + 1_000
    seen = observed([first, second], [hung, run(second, 1, 60_000, 60_100)])
    seen.submitted[second.id] = Submitted(job_id=second.id, enqueued_at=START_MS, ready_at=START_MS)
    assert [v.invariant for v in fairness(seen)] == ["fairness"]  # free from 4 s by the executions alone
    seen.key_holds[first.id, 1] = ("K", START_MS + 60_000)
    assert list(fairness(seen)) == []


def test_fairness_holds_a_retried_at_most_once_job_until_the_hard_end_of_its_unknown_attempt() -> None:
    # Seeds 42 and 478 of the 1000-seed run: attempt 1 of an at-most-once job is dispatched at 1.5 s and lost
    # (no execution), it ends STALLED (outcome unknown, ADR-0051), a manual retry at 8 s schedules it at the
    # claim + 15 minutes, and attempt 2 starts at 901.5 s while the shard was idle: the rules, not starvation.
    once = job("once", guarantee="at-most-once", attempts=2)
    late = START_MS + 1_500 + MAX_INVOCATION_MS
    hard_end = late - START_MS
    seen = observed([once], [run(once, 2, hard_end, hard_end + 5)], end=hard_end + 60_000)
    seen.submitted[once.id] = Submitted(
        job_id=once.id, enqueued_at=START_MS + 1_500, ready_at=START_MS + 1_500, retried_at=[START_MS + 8_000]
    )
    seen.states_seen[once.id] = [(START_MS + 2_250, "STALLED"), (START_MS + 8_250, "SCHEDULED")]
    seen.dispatched = {(once.id, 1): START_MS + 1_500, (once.id, 2): late}
    seen.finished = {(once.id, 1): START_MS + 1_500, (once.id, 2): late + 5}
    assert list(fairness(seen)) == []
    # Past the hard end the job waits like any other: a start 5 s after it is a wait while the shard is idle.
    seen.executions = [run(once, 2, hard_end + 5_000, hard_end + 5_005)]
    (found,) = fairness(seen)
    assert "waited 5.0s" in found.message
    # An at-least-once job is held only until the retry, and a retry the job was not terminal for holds nothing.
    many = job("many", attempts=2)
    seen = observed([many], [run(many, 2, 20_000, 20_005)])
    seen.submitted[many.id] = Submitted(
        job_id=many.id, enqueued_at=START_MS, ready_at=START_MS, retried_at=[START_MS + 8_000]
    )
    seen.states_seen[many.id] = [(START_MS + 1_000, "FAILED"), (START_MS + 8_250, "SCHEDULED")]
    seen.dispatched = {(many.id, 1): START_MS, (many.id, 2): START_MS + 20_000}
    seen.finished = {(many.id, 1): START_MS + 500, (many.id, 2): START_MS + 20_005}
    (found,) = fairness(seen)
    assert "waited 12.4s" in found.message  # 0.1-0.5 s before it ended, 8-20 s after the retry
    seen.states_seen[many.id] = [(START_MS + 1_000, "SCHEDULED")]
    (found,) = fairness(seen)
    assert "waited 19.9s" in found.message


def test_fairness_counts_a_retry_that_applied_although_no_poll_saw_the_job_end() -> None:
    # Seeds 6146 and 7456 of the 10,000-seed run: attempt 1 of an at-most-once job is lost at dispatch (1.25 s)
    # and ends STALLED at once, the retry at 1.5 s applies before the next poll, which sees only SCHEDULED.
    once = job("unseen", guarantee="at-most-once", attempts=2)
    hard_end = 1_250 + MAX_INVOCATION_MS
    seen = observed([once], [run(once, 2, hard_end, hard_end + 800)], end=hard_end + 60_000)
    seen.submitted[once.id] = Submitted(
        job_id=once.id, enqueued_at=START_MS + 1_250, ready_at=START_MS + 1_250, retried_at=[START_MS + 1_500]
    )
    seen.states_seen[once.id] = [(START_MS + 2_250, "SCHEDULED"), (START_MS + hard_end + 800, "COMPLETED")]
    seen.dispatched = {(once.id, 1): START_MS + 1_250, (once.id, 2): START_MS + hard_end}
    seen.finished = {(once.id, 1): START_MS + 1_250, (once.id, 2): START_MS + hard_end + 800}
    (found,) = fairness(seen)  # nothing says the retry found the job ended: 15 minutes look like starvation
    assert "waited 899.9s" in found.message
    seen.submitted[once.id].retries_applied.append(START_MS + 1_500)
    assert list(fairness(seen)) == []


def test_terminal_final_flags_a_terminal_state_that_changes_without_a_retry() -> None:
    j = job("t")
    seen = observed([j], [])
    seen.submitted[j.id] = Submitted(job_id=j.id, enqueued_at=START_MS, ready_at=START_MS)
    seen.states_seen[j.id] = [(START_MS, "FAILED"), (START_MS + 5_000, "QUEUED")]
    assert [v.invariant for v in terminal_final(seen)] == ["terminal_final"]
    seen.submitted[j.id].retried_at.append(START_MS + 4_000)
    assert list(terminal_final(seen)) == []


def test_notices_expects_one_per_terminal_transition_as_the_rules_say() -> None:
    failed = job("f", state="FAILED")
    notice = job("n1", binding="Fail", payload=f'{{"job_id": "{failed.id}", "state": "FAILED"}}')
    settled = job("n2", binding="Done", payload=f'{{"job_id": "{failed.id}", "state": "FAILED"}}')
    assert list(notices(observed([failed, notice, settled], []))) == []
    (missing,) = notices(observed([failed, notice], []))
    assert "0 notice(s) to Done, expected 1" in missing.message
    twice = job("n3", binding="Fail", payload=notice.payload)
    (extra,) = notices(observed([failed, notice, settled, twice], []))
    assert "2 notice(s) to Fail" in extra.message


def test_a_late_delivery_of_a_finished_attempt_holds_no_slot() -> None:
    a, b = job("late", key="k", attempts=2), job("other", key="k")
    # Attempt 1's RPC failed at once (the shard finished it at 0 s), a duplicate of its message ran it at 0-5 s.
    late, retry = run(a, 1, 0, 5_000), run(a, 2, 500, 600)
    seen = observed([a, b], [late, retry, run(b, 1, 1_000, 1_100)])
    assert [v.message.split(":")[0] for v in concurrency(seen)] == ["A#0 key k", "A#0 key k"]
    seen.finished[a.id, 1] = START_MS
    assert list(concurrency(seen)) == []


def test_the_reaper_deadline_ends_the_slot_of_an_attempt_delivered_late() -> None:
    a, b = job("slow", key="k"), job("next", key="k")
    seen = observed([a, b], [run(a, 1, 20_000, 30_000), run(b, 1, 12_000, 25_000)])
    assert list(concurrency(seen)) != []
    seen.dispatched[a.id, 1] = START_MS  # dispatched at 0 s: reaped at 10 s + 1 s grace, before b started
    assert list(concurrency(seen)) == []


def test_terminal_final_lets_a_late_at_least_once_delivery_run_but_not_an_at_most_once_one() -> None:
    for guarantee, flagged in (("at-least-once", []), ("at-most-once", ["terminal_final"])):
        j = job("late", state="CANCELLED", guarantee=guarantee)
        seen = observed([j], [run(j, 1, 26_500, 26_700)])
        seen.states_seen[j.id] = [(START_MS + 24_250, "QUEUED"), (START_MS + 26_250, "CANCELLED")]
        seen.finished[j.id, 1] = START_MS + 26_000  # the shard gave attempt 1 up before its message arrived
        assert [v.invariant for v in terminal_final(seen)] == flagged
