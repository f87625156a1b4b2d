"""Events a performer waits for (ADR-0146): before, during and after the wait, timeouts, fan-out, REST and RPC."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tsumugi_client import EnqueueValidationError, JobDetail, create_client
from tsumugi_core.options import FixedBackoff, Guarantee
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.config import load_config
from tsumugi_dev.runtime import LocalRuntime

STEPS_CONFIG = Path(__file__).parent / "fixtures" / "steps_scheduler" / "wrangler.jsonc"
STEPS = "tsumugi-steps"
TOKEN = "events-token"
HOUR_MS = 3_600_000


@pytest.fixture
async def steps(tmp_path: Path, clock: VirtualClock) -> AsyncIterator[LocalRuntime]:
    config = load_config(STEPS_CONFIG).with_secrets({"TSUMUGI_TOKEN": TOKEN})
    runtime = LocalRuntime([config], data_dir=tmp_path / "data", clock=clock)
    await runtime.start()
    yield runtime
    await runtime.stop()
    assert clock.crashes == []


def _waiting(key: str, timeout_ms: int = HOUR_MS, then: str | None = "after") -> list[dict[str, Any]]:
    actions: list[dict[str, Any]] = [{"wait": "shipped", "key": key, "timeout_ms": timeout_ms}]
    return actions + ([{"step": then}] if then else [])


async def _enqueue(runtime: LocalRuntime, tmp_path: Path, actions: list[dict[str, Any]]) -> str:
    payload = {"log": str(tmp_path / "runs.log"), "actions": actions}
    return await create_client().enqueue(runtime.env(STEPS), binding="Script", payload=payload)


async def _job(runtime: LocalRuntime, job_id: str) -> JobDetail:
    job = await create_client().get(runtime.env(STEPS), job_id)
    assert job is not None
    return job


async def _send(runtime: LocalRuntime, key: str, payload: Any, **extra: Any) -> dict[str, Any]:
    return await runtime.env(STEPS).TSUMUGI.send_event("shipped", key, payload, extra.get("event_id"))


async def _post(runtime: LocalRuntime, body: Any) -> tuple[int, Any]:
    response = await runtime.fetch(
        STEPS,
        "http://scheduler/api/events",
        method="POST",
        body=json.dumps(body),
        headers={"authorization": f"Bearer {TOKEN}", "content-type": "application/json"},
    )
    return response.status, json.loads(await response.text())


async def test_an_event_during_the_wait_releases_the_job(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    job_id = await _enqueue(steps, tmp_path, _waiting("order-42"))
    await clock.advance(1_000)
    waiting = await _job(steps, job_id)
    assert waiting.state == "SLEEPING"
    assert [(s.name, s.state) for s in waiting.steps] == [("event:shipped", "waiting")]

    status, sent = await _post(
        steps, {"name": "shipped", "key": "order-42", "payload": {"carrier": "yamato"}}
    )
    assert status == 202
    assert sent["delivered"] == 1
    await clock.advance(1_000)

    job = await _job(steps, job_id)
    assert job.state == "COMPLETED"
    assert job.result_value()[0] == {"carrier": "yamato"}
    assert job.steps[0].result["payload"] == {"carrier": "yamato"}


async def test_an_event_before_the_wait_is_kept_and_answers_at_once(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    sent = await _send(steps, "order-7", "early")
    assert sent["delivered"] == 0
    assert sent["kept_until"] == clock.now_ms() + 86_400_000
    await clock.advance(HOUR_MS)  # kept a day: an hour later a new wait still gets it

    job_id = await _enqueue(steps, tmp_path, _waiting("order-7"))
    await clock.advance(1_000)
    job = await _job(steps, job_id)
    assert job.state == "COMPLETED"
    assert job.result_value()[0] == "early"
    assert job.attempts == 1  # never slept


async def test_a_kept_event_expires_after_a_day(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    await _send(steps, "order-8", "too early")
    await clock.advance(86_400_000 + 1_000)
    job_id = await _enqueue(steps, tmp_path, _waiting("order-8", timeout_ms=60_000, then=None))
    await clock.advance(2_000)
    assert (await _job(steps, job_id)).state == "SLEEPING"


async def test_no_event_means_the_wait_times_out_and_a_late_event_changes_nothing(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    actions = _waiting("order-9", timeout_ms=60_000)
    actions[0]["timeout_until"] = True
    job_id = await _enqueue(steps, tmp_path, actions)
    await clock.advance(30_000)
    waiting = await _job(steps, job_id)
    assert waiting.state == "SLEEPING"
    until = waiting.steps[0].result["until"]
    await clock.advance(32_000)

    job = await _job(steps, job_id)
    assert job.state == "COMPLETED"
    assert job.result_value()[0] == ["timeout", until]  # not the later replay's own now + timeout
    # The wait's own timeout stays with it: EventTimeoutError names it on every replay.
    assert job.steps[0].result == {"timeout": True, "until": until}
    late = await _send(steps, "order-9", "late")
    assert late["delivered"] == 0  # the waiter left with its timeout
    await clock.advance(1_000)
    assert (await _job(steps, job_id)).steps[0].result == {"timeout": True, "until": until}


async def test_one_event_reaches_every_waiting_job_once(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    ids = [await _enqueue(steps, tmp_path, _waiting("batch-1", then=None)) for _ in range(3)]
    await clock.advance(1_000)
    sent = await _send(steps, "batch-1", 7, event_id="evt-1")
    again = await _send(steps, "batch-1", 7, event_id="evt-1")
    assert (sent["delivered"], again["duplicate"], again["delivered"]) == (3, True, 0)
    await clock.advance(1_000)
    for job_id in ids:
        job = await _job(steps, job_id)
        assert (job.state, job.result_value()) == ("COMPLETED", [7])


async def test_a_second_wait_of_one_job_does_not_get_the_event_again(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    await _send(steps, "twice", "first")
    job_id = await _enqueue(steps, tmp_path, [*_waiting("twice", then=None), *_waiting("twice", then=None)])
    await clock.advance(1_000)
    waiting = await _job(steps, job_id)
    assert waiting.state == "SLEEPING"  # the kept event answered the first wait only
    assert [s.name for s in waiting.steps] == ["event:shipped", "event:shipped#2"]
    await _send(steps, "twice", "second")
    await clock.advance(1_000)
    assert (await _job(steps, job_id)).result_value() == ["first", "second"]


async def test_a_waiting_job_is_cancelled_at_once(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    job_id = await _enqueue(steps, tmp_path, _waiting("order-10"))
    await clock.advance(1_000)
    assert (await create_client().cancel(steps.env(STEPS), job_id)).requested is False
    assert (await _send(steps, "order-10", "x"))["delivered"] == 0  # it went to no job
    await clock.advance(1_000)
    assert (await _job(steps, job_id)).state == "CANCELLED"


async def test_delivered_counts_only_the_jobs_still_waiting(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    kept = await _enqueue(steps, tmp_path, _waiting("order-11", then=None))
    cancelled = await _enqueue(steps, tmp_path, _waiting("order-11", then=None))
    await clock.advance(1_000)
    await create_client().cancel(steps.env(STEPS), cancelled)
    assert (await _send(steps, "order-11", "x"))["delivered"] == 1
    await clock.advance(1_000)
    assert ((await _job(steps, kept)).state, (await _job(steps, cancelled)).state) == (
        "COMPLETED",
        "CANCELLED",
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"key": "k"}, "name"),
        ({"name": "shipped"}, "key"),
        ({"name": "bad#name", "key": "k"}, "name"),
        ({"name": "shipped", "key": ""}, "key"),
        ({"name": "shipped", "key": "k", "extra": 1}, "extra"),
        ({"name": "shipped", "key": "k", "payload": 2**60}, "payload"),
    ],
)
async def test_a_bad_event_is_refused_naming_the_field(
    steps: LocalRuntime, body: dict[str, Any], field: str
) -> None:
    status, answer = await _post(steps, body)
    assert status == 400
    assert answer["field"] == field
    assert answer["error"].startswith(field)


async def test_the_openapi_document_describes_post_events(steps: LocalRuntime) -> None:
    response = await steps.fetch(STEPS, "http://scheduler/api/openapi.json")
    document = json.loads(await response.text())
    operation = document["paths"]["/api/events"]["post"]
    assert operation["operationId"] == "sendEvent"
    assert set(operation["responses"]) >= {"202", "400"}


async def test_the_worker_client_sends_an_event_over_the_service_binding(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    job_id = await _enqueue(steps, tmp_path, _waiting("order-11", then=None))
    await clock.advance(1_000)
    client = create_client()
    sent = await client.send_event(
        steps.env(STEPS), "shipped", key="order-11", payload=[1, 2], event_id="e-11"
    )
    assert (sent.id, sent.delivered, sent.duplicate) == ("e-11", 1, False)
    await clock.advance(1_000)
    assert (await _job(steps, job_id)).result_value() == [[1, 2]]
    with pytest.raises(EnqueueValidationError) as info:
        await client.send_event(steps.env(STEPS), "shipped", key="k", payload=2**60)
    assert info.value.field == "payload"


@pytest.mark.parametrize("guarantee", [Guarantee.AT_MOST_ONCE, Guarantee.AT_LEAST_ONCE])
async def test_a_retried_job_takes_the_event_sent_while_its_open_wait_had_failed(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path, guarantee: Guarantee
) -> None:
    # The attempt records its wait, then its report is lost: the job ends with the wait still open.
    job_id = await create_client().enqueue(
        steps.env(STEPS),
        binding="Script",
        payload={"log": str(tmp_path / "runs.log"), "actions": _waiting("o-1", 6 * HOUR_MS, then=None)},
        guarantee=guarantee,
        max_attempts=1,
        timeout_ms=5_000,
    )
    lost = steps.faults.fail_next_rpc(STEPS, "StepsJobShard", method="report_json")
    await clock.advance(1_000)
    assert lost.hits == 1
    await clock.advance(20 * 60_000)
    job = await _job(steps, job_id)
    assert job.state in ("STALLED", "FAILED")
    assert [(s.name, s.state) for s in job.steps] == [("event:shipped", "waiting")]
    assert (await _send(steps, "o-1", "first"))["delivered"] == 0  # no job may take it now: kept for the day

    await create_client().retry(steps.env(STEPS), job_id)
    await clock.advance(60_000)
    job = await _job(steps, job_id)
    # The replayed wait is answered by the kept event, as any wait starting within its day is.
    assert (job.state, job.result_value()) == ("COMPLETED", ["first"])


async def test_an_event_sent_after_the_waits_timeout_is_no_answer_however_late_the_tick(
    steps: LocalRuntime, clock: VirtualClock, tmp_path: Path
) -> None:
    job_id = await create_client().enqueue(
        steps.env(STEPS),
        binding="Script",
        payload={"log": str(tmp_path / "runs.log"), "actions": _waiting("o-2", then=None)},
        max_attempts=3,
        timeout_ms=5_000,
        backoff=FixedBackoff(delay_ms=1_000),
    )
    steps.faults.fail_next_rpc(STEPS, "StepsJobShard", method="report_json")  # attempt 1's suspension is lost
    await clock.advance(60_000)  # reaped and retried: attempt 2 replays the wait (with a later deadline)
    job = await _job(steps, job_id)
    until = job.steps[0].result["until"]
    assert (job.state, job.run_after) == ("SLEEPING", until)
    await clock.advance(until - clock.now_ms() - 1_000)
    steps.faults.fail_next_alarm(STEPS, "StepsJobShard", name=job_id.split(":")[0], n=3)  # the tick runs late
    await clock.advance(2_000)
    await _send(steps, "o-2", "late")  # 1 s after the wait's timeout
    await clock.advance(60_000)
    assert (await _job(steps, job_id)).result_value() == ["timeout"]
