"""Durable steps and sleeps on the local runtime (ADR-0144, ADR-0145, ADR-0147).

``Script`` (fixtures/steps_scheduler) logs each real run of a step's function to a file, so these tests count
runs across retries, duplicate deliveries and a restart of the whole runtime.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tsumugi_client import JobDetail, create_client
from tsumugi_core.options import FixedBackoff
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.config import load_config
from tsumugi_dev.runtime import LocalRuntime

STEPS_CONFIG = Path(__file__).parent / "fixtures" / "steps_scheduler" / "wrangler.jsonc"
STEPS = "tsumugi-steps"
HOUR_MS = 3_600_000


async def _start(data: Path, clock: VirtualClock) -> LocalRuntime:
    runtime = LocalRuntime([load_config(STEPS_CONFIG)], data_dir=data, clock=clock)
    await runtime.start()
    return runtime


@pytest.fixture
async def steps(tmp_path: Path, clock: VirtualClock) -> AsyncIterator[LocalRuntime]:
    runtime = await _start(tmp_path / "data", clock)
    yield runtime
    await runtime.stop()
    assert clock.crashes == []


def _runs(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


async def _enqueue(runtime: LocalRuntime, log: Path, actions: list[dict[str, Any]], **options: Any) -> str:
    payload = {"log": str(log), "actions": actions}
    return await create_client().enqueue(runtime.env(STEPS), binding="Script", payload=payload, **options)


async def _job(runtime: LocalRuntime, job_id: str) -> JobDetail:
    job = await create_client().get(runtime.env(STEPS), job_id)
    assert job is not None
    return job


async def test_a_step_result_survives_a_retry(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    job_id = await _enqueue(
        steps,
        log,
        [{"step": "charge"}, {"step": "ship", "fail_times": 1}],
        max_attempts=3,
        backoff=FixedBackoff(delay_ms=1_000),
    )
    await clock.advance(5_000)

    job = await _job(steps, job_id)
    assert (job.state, job.attempts) == ("COMPLETED", 2)
    assert _runs(log) == ["charge", "ship!", "ship"]  # charge ran once; attempt 2 read its stored result
    charged, shipped = job.result_value()
    assert (charged["step"], shipped["step"]) == ("charge", "ship")
    assert [(s.name, s.state, s.attempt) for s in job.steps] == [("charge", "done", 1), ("ship", "done", 2)]
    assert job.steps[0].result == charged


async def test_a_repeated_name_gets_an_index_and_each_runs_once(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    job_id = await _enqueue(
        steps,
        log,
        [{"step": "item", "times": 3}, {"step": "end", "fail_times": 1}],
        backoff=FixedBackoff(delay_ms=1_000),
    )
    await clock.advance(5_000)

    job = await _job(steps, job_id)
    assert job.state == "COMPLETED"
    assert [s.name for s in job.steps] == ["item", "item#2", "item#3", "end"]
    assert _runs(log) == ["item", "item", "item", "end!", "end"]


async def test_a_sleep_of_an_hour_holds_no_invocation_and_uses_no_attempt(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    job_id = await _enqueue(
        steps, log, [{"step": "before"}, {"sleep_ms": HOUR_MS}, {"step": "after"}], max_attempts=1
    )
    await clock.advance(1_000)

    asleep = await _job(steps, job_id)
    assert asleep.state == "SLEEPING"
    assert asleep.run_after == asleep.steps[1].result["until"]
    assert asleep.run_after > clock.now_ms() + HOUR_MS - 2_000
    assert steps.queues.pending(STEPS) == []  # nothing queued, nothing running: only the shard's row waits
    name = job_id.split(":")[0]
    why = await steps.env(STEPS).JOB_SHARD.getByName(name).explain(name, job_id)
    assert why["waiting"] is True
    assert why["summary"].startswith("the job is SLEEPING: sleeping until in 59 min")
    assert "(2026-01-01T01:00:00" in why["summary"]
    assert [(b["kind"], b["clears_at"]) for b in why["blockers"]] == [("sleeping", asleep.run_after)]
    await clock.advance(HOUR_MS - 10_000)
    assert (await _job(steps, job_id)).state == "SLEEPING"
    assert _runs(log) == ["before"]

    await clock.advance(12_000)
    done = await _job(steps, job_id)
    # max_attempts=1 and yet a second invocation ran: the sleep used no attempt (ADR-0145).
    assert done.state == "COMPLETED"
    assert _runs(log) == ["before", "after"]
    assert done.result_value()[1]["at"] >= asleep.run_after


async def test_a_sleeping_job_is_cancelled_at_once(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    job_id = await _enqueue(steps, log, [{"sleep_ms": HOUR_MS}, {"step": "never"}])
    await clock.advance(1_000)
    asleep = await _job(steps, job_id)
    assert asleep.state == "SLEEPING"

    answer = await create_client().cancel(steps.env(STEPS), job_id)
    assert answer.requested is False  # nothing runs: cancelled now, not asked to stop
    await clock.advance(2 * HOUR_MS)
    assert clock.now_ms() > asleep.run_after
    assert (await _job(steps, job_id)).state == "CANCELLED"
    assert _runs(log) == []


async def test_steps_survive_a_restart_of_the_whole_system(clock: VirtualClock, tmp_path: Path) -> None:
    log, data = tmp_path / "runs.log", tmp_path / "data"
    first = await _start(data, clock)
    job_id = await _enqueue(first, log, [{"step": "charge"}, {"sleep_ms": 60_000}, {"step": "email"}])
    await clock.advance(1_000)
    assert (await _job(first, job_id)).state == "SLEEPING"
    await first.stop()

    second = await _start(data, clock)
    try:
        await clock.advance(61_000)
        job = await _job(second, job_id)
        assert job.state == "COMPLETED"
        assert _runs(log) == ["charge", "email"]
    finally:
        await second.stop()
    assert clock.crashes == []


async def test_a_duplicated_delivery_reads_the_stored_step(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    job_id = await _enqueue(steps, log, [{"step": "charge"}, {"work_ms": 5_000}])
    await clock.advance(1_000)  # attempt 1 stored charge and works on
    assert _runs(log) == ["charge"]
    duplicate = {
        "jobId": job_id,
        "binding": "Script",
        "attempt": 1,
        "timeoutMs": 60_000,
        "claimRequired": False,
        "maxAttempts": 3,
        "payload": {"log": str(log), "actions": [{"step": "charge"}, {"work_ms": 5_000}]},
    }
    await steps.env(STEPS).TSUMUGI_QUEUE.send(duplicate)
    await clock.advance(10_000)

    job = await _job(steps, job_id)
    assert (job.state, job.attempts) == ("COMPLETED", 1)
    assert _runs(log) == ["charge"]  # the duplicate was answered the stored result


async def test_an_at_most_once_step_with_an_unknown_outcome_is_never_run_again(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    # The step works longer than the attempt's timeout: the consumer gives up, the outcome is unknown.
    job_id = await _enqueue(
        steps,
        log,
        [{"step": "charge", "work_ms": 20_000}],
        guarantee="at-most-once",
        timeout_ms=5_000,
        max_attempts=3,
    )
    await clock.advance(30_000)
    stalled = await _job(steps, job_id)
    assert stalled.state == "STALLED"
    assert [(s.name, s.state) for s in stalled.steps] == [("charge", "started")]

    await create_client().retry(steps.env(STEPS), job_id)
    await clock.advance(20 * 60_000)  # the retry waits out the stalled attempt's invocation (ADR-0051)
    failed = await _job(steps, job_id)
    assert failed.state == "FAILED"
    assert "StepOutcomeUnknownError" in (failed.attempts_log[0].error or "")
    assert _runs(log) == ["charge"]


async def test_an_at_most_once_step_that_failed_knowingly_runs_again(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    job_id = await _enqueue(
        steps,
        log,
        [{"step": "charge", "fail_times": 1}],
        guarantee="at-most-once",
        backoff=FixedBackoff(delay_ms=1_000),
    )
    await clock.advance(5_000)
    job = await _job(steps, job_id)
    assert job.state == "COMPLETED"
    assert _runs(log) == ["charge!", "charge"]


async def test_a_job_of_steps_runs_two_hours_across_invocations(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    # 12 steps of 10 minutes: each invocation (at most 14 minutes) fits one, then continues in a new one.
    job_id = await _enqueue(
        steps,
        log,
        [{"step": "chunk", "times": 12, "work_ms": 600_000}],
        timeout_ms=11 * 60_000,
        max_attempts=1,
    )
    await clock.advance(2 * HOUR_MS + 10 * 60_000)

    job = await _job(steps, job_id)
    assert job.state == "COMPLETED"
    assert _runs(log) == ["chunk"] * 12
    assert len(job.steps) == 12
    assert job.attempts >= 12  # one invocation per step, none counted against max_attempts=1
    finished = job.steps[-1].finished_at
    assert finished is not None
    assert finished - job.steps[0].started_at >= 2 * HOUR_MS - 10 * 60_000


async def test_a_step_result_over_the_size_rule_fails_the_job_once_naming_the_rule(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    job_id = await _enqueue(
        steps,
        log,
        [{"step": "small"}, {"step": "big", "result_chars": 200_000}],
        max_attempts=3,
        backoff=FixedBackoff(delay_ms=1_000),
    )
    await clock.advance(60_000)

    job = await _job(steps, job_id)
    assert job.state == "FAILED"
    assert job.attempts == 1  # not retried: the same result would be refused after running again
    (failed,) = job.attempts_log
    assert failed.error is not None
    assert "step big: its result must be at most 102400 bytes as JSON, got 200011" in failed.error
    assert _runs(log) == ["small", "big"]
    assert [s.name for s in job.steps if s.state == "done"] == ["small"]


@pytest.mark.parametrize(("guarantee", "invocations"), [("at-least-once", 2), ("at-most-once", 3)])
async def test_a_job_of_many_steps_continues_before_its_invocation_runs_out_of_subrequests(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path, guarantee: str, invocations: int
) -> None:
    log = tmp_path / "runs.log"
    # 1,100 instant steps: 1,100 or 2,200 step commands (save, or begin and save), each one a subrequest.
    job_id = await _enqueue(steps, log, [{"step": "s", "times": 1_100}], guarantee=guarantee, max_attempts=1)
    await clock.advance(60_000)

    job = await _job(steps, job_id)
    assert job.state == "COMPLETED"
    assert len(_runs(log)) == 1_100
    assert job.attempts == invocations  # at most 1,000 commands an invocation, none against max_attempts=1


async def test_a_negative_sleep_returns_at_once_and_the_job_goes_on(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    # As asyncio.sleep(-5) returns at once: a duration computed as "target - now" is past when it is negative.
    log = tmp_path / "runs.log"
    job_id = await _enqueue(
        steps, log, [{"step": "before"}, {"sleep_ms": -5_000}, {"step": "after"}], max_attempts=3
    )
    await clock.advance(5_000)

    job = await _job(steps, job_id)
    assert (job.state, job.attempts) == ("COMPLETED", 1)  # not one suspension, not one retry
    assert _runs(log) == ["before", "after"]
    (slept,) = [s for s in job.steps if s.name == "sleep"]
    assert slept.state == "done"
    assert slept.result["until"] >= job.steps[0].finished_at


async def test_a_wait_with_a_negative_timeout_times_out_at_once(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    job_id = await _enqueue(
        steps,
        log,
        [{"wait": "paid", "key": "o-neg", "timeout_ms": -60_000}, {"step": "after"}],
        max_attempts=3,
    )
    await clock.advance(5_000)

    job = await _job(steps, job_id)
    assert job.state == "COMPLETED"
    assert job.result_value()[0] == "timeout"
    assert _runs(log) == ["after"]
    # One suspension (no attempt used: max_attempts grew with it) and the attempt that went on; no failure.
    assert (job.attempts, job.max_attempts) == (2, 4)
    assert [(a.state, a.error) for a in job.attempts_log] == [("COMPLETED", None)]
    (waited,) = [s for s in job.steps if s.name == "event:paid"]
    assert waited.result == {"timeout": True, "until": waited.started_at}  # the wait's deadline was its start


async def test_a_wait_longer_than_the_latest_safe_instant_waits_for_its_event(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    forever = 2**53 - 1  # ms: a timeout that ends past the latest instant JavaScript holds exactly
    job_id = await _enqueue(
        steps, log, [{"wait": "paid", "key": "o-long", "timeout_ms": forever}], max_attempts=3
    )
    await clock.advance(5_000)
    waiting = await _job(steps, job_id)
    assert (waiting.state, waiting.attempts_log) == ("SLEEPING", ())  # no failed attempt
    assert waiting.run_after == forever

    await create_client().send_event(steps.env(STEPS), "paid", key="o-long", payload={"ok": 1})
    await clock.advance(5_000)
    done = await _job(steps, job_id)
    assert (done.state, done.result_value()) == ("COMPLETED", [{"ok": 1}])


@pytest.mark.parametrize(
    ("action", "words"),
    [
        ({"step": "charge#2"}, "step name may hold only letters, digits, spaces and _ . : / -"),
        ({"wait": "paid", "key": ""}, "event key must have 1 to"),
    ],
)
async def test_a_bad_argument_to_the_step_api_fails_the_job_once_naming_the_rule(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path, action: dict[str, Any], words: str
) -> None:
    log = tmp_path / "runs.log"
    job_id = await _enqueue(
        steps, log, [{"step": "first"}, action], max_attempts=3, backoff=FixedBackoff(delay_ms=1_000)
    )
    await clock.advance(60_000)

    job = await _job(steps, job_id)
    # A programming error: a retry would make the same call.
    assert (job.state, job.attempts) == ("FAILED", 1)
    (failed,) = job.attempts_log
    assert failed.error is not None
    assert words in failed.error
    assert _runs(log) == ["first"]
