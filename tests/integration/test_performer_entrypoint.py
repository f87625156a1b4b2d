"""tsumugi_performer.entrypoint: a Performer as a named Worker entrypoint answering outcome envelopes."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from tests.support.clock import SteppedClock, installed
from tsumugi_performer import JobContext, NonRetryableError, Performer, RetryAfterError, entrypoint
from tsumugi_performer.entrypoint import DISPATCH_METHOD, performer_entrypoint


class Entrypoint:
    """Stands in for the SDK's WorkerEntrypoint."""

    def __init__(self, ctx: Any, env: Any) -> None:
        self.ctx, self.env = ctx, env


class Order(msgspec.Struct):
    qty: int


class Ship(Performer[Order, dict[str, Any]]):
    async def perform(self, payload: Order, ctx: JobContext) -> dict[str, Any]:
        answer = await ctx.heartbeat(0.5)
        if payload.qty < 0:
            raise NonRetryableError("negative quantity")
        if payload.qty == 0:
            raise RetryAfterError("nothing yet", delay_ms=1_000)
        if payload.qty > 100:
            raise RuntimeError("too many")
        return {
            "shipped": payload.qty,
            "job": ctx.job_id,
            "attempt": ctx.attempt,
            "of": ctx.max_attempts,
            "deadline": ctx.deadline_at,
            "cancel": answer.cancel_requested,
        }


def dispatch(qty: Any) -> dict[str, Any]:
    return {
        "jobId": "Ship#0:abc",
        "attempt": 2,
        "maxAttempts": 3,
        "deadlineAt": 9_000,
        "payload": {"qty": qty},
    }


async def run(qty: Any, heartbeat: Any = None) -> dict[str, Any]:
    cls = performer_entrypoint(Entrypoint, Ship)
    return await getattr(cls(None, None), DISPATCH_METHOD)(dispatch(qty), heartbeat)


def test_the_entrypoint_is_named_after_the_performer_and_derives_from_the_given_base() -> None:
    cls = performer_entrypoint(Entrypoint, Ship)
    assert cls.__name__ == "Ship"
    assert issubclass(cls, Entrypoint)
    assert performer_entrypoint(Entrypoint, Ship, name="SHIP").__name__ == "SHIP"
    with pytest.raises(TypeError, match="must be a Performer subclass"):
        performer_entrypoint(Entrypoint, int)  # type: ignore[arg-type]


async def test_a_success_answers_the_result_with_the_context_fields_and_the_heartbeat_answer() -> None:
    sent: list[Any] = []

    async def heartbeat(progress: Any) -> dict[str, Any]:
        sent.append(progress)
        return {"accepted": True, "cancel_requested": True}

    answer = await run(3, heartbeat)
    assert answer == {
        "ok": True,
        "result": {
            "shipped": 3,
            "job": "Ship#0:abc",
            "attempt": 2,
            "of": 3,
            "deadline": 9_000,
            "cancel": True,
        },
    }
    assert sent == [0.5]


async def test_failures_carry_the_retry_controls() -> None:
    never = await run(-1)
    later = await run(0)
    plain = await run(101)
    assert (never["ok"], never["retryable"], never["retryAt"]) == (False, False, None)
    assert never["error"].startswith("NonRetryableError: negative quantity\nTraceback")
    assert (later["retryable"], later["retryAt"] is not None) == (True, True)
    assert (plain["retryable"], plain["retryAt"]) == (True, None)
    assert plain["error"].startswith("RuntimeError: too many")


async def test_a_payload_or_dispatch_that_does_not_decode_is_not_retried() -> None:
    bad_payload = await run("many")
    assert (bad_payload["retryable"], bad_payload["error"].split(":")[0]) == (False, "InvalidPayloadError")
    cls = performer_entrypoint(Entrypoint, Ship)
    bad_dispatch = await getattr(cls(None, None), DISPATCH_METHOD)({"jobId": "not an id"}, None)
    assert bad_dispatch["retryable"] is False
    assert "invalid dispatch for Ship" in bad_dispatch["error"]


async def test_the_factory_builds_the_performer_from_env() -> None:
    class Greet(Performer[None, str]):
        def __init__(self, greeting: str) -> None:
            self.greeting = greeting

        async def perform(self, payload: None, ctx: JobContext) -> str:
            return self.greeting

    cls = performer_entrypoint(Entrypoint, Greet, factory=lambda env: Greet(env["GREETING"]))
    answer = await getattr(cls(None, {"GREETING": "hi"}), DISPATCH_METHOD)(
        {"jobId": "Greet#0:a", "attempt": 1, "maxAttempts": 1, "deadlineAt": 1}
    )
    assert answer == {"ok": True, "result": "hi"}


async def test_json_text_in_answers_json_text_and_reads_a_text_heartbeat_answer() -> None:
    # ADR-0043: through ctx.exports and a heartbeat stub only strings and numbers cross on Cloudflare.
    async def heartbeat(progress: Any) -> str:
        return '{"accepted":true,"cancel_requested":true}'

    cls = performer_entrypoint(Entrypoint, Ship)
    text = msgspec.json.encode(dispatch(3)).decode()
    answer = await getattr(cls(None, None), DISPATCH_METHOD)(text, heartbeat)
    assert isinstance(answer, str)
    assert msgspec.json.decode(answer) == {
        "ok": True,
        "result": {
            "shipped": 3,
            "job": "Ship#0:abc",
            "attempt": 2,
            "of": 3,
            "deadline": 9_000,
            "cancel": True,
        },
    }


async def test_a_heartbeat_answer_that_does_not_decode_fails_the_attempt_naming_it() -> None:
    async def heartbeat(progress: Any) -> str:
        return "not json"

    answer = await run(3, heartbeat)
    assert answer["ok"] is False
    assert answer["error"].startswith("HeartbeatError: the heartbeat's answer does not decode")


class Beat(Performer[int, int]):
    async def perform(self, payload: int, ctx: JobContext) -> int:
        clock = entrypoint.time_source()
        for _ in range(payload):
            await ctx.heartbeat()
            await clock.sleep_ms(1_000)
        return payload


@pytest.mark.parametrize(("timeout_ms", "sent"), [(2_000, 4), (60_000, 1), (None, 4)])
async def test_the_heartbeat_throttle_follows_the_attempts_timeout(timeout_ms: int | None, sent: int) -> None:
    # ADR-0053: a 2 s timeout lets a heartbeat through every 666 ms; 60 s keeps the 5 s throttle; without
    # timeoutMs (an older scheduler) the time left until deadlineAt (2 s here) stands in for it.
    beats: list[Any] = []

    async def heartbeat(progress: Any) -> str:
        beats.append(progress)
        return '{"accepted": true, "cancel_requested": false}'

    body: dict[str, Any] = {
        "jobId": "Beat#0:abc",
        "attempt": 1,
        "maxAttempts": 1,
        "deadlineAt": 3_000,
        "payload": 4,
    }
    if timeout_ms is not None:
        body["timeoutMs"] = timeout_ms
    with installed(SteppedClock(1_000)):
        cls = performer_entrypoint(Entrypoint, Beat)
        answer = await getattr(cls(None, None), DISPATCH_METHOD)(
            msgspec.json.encode(body).decode(), heartbeat
        )
    assert msgspec.json.decode(answer) == {"ok": True, "result": 4}
    assert len(beats) == sent
