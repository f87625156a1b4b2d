"""JobContext: identity fields, validation, and a heartbeat that is throttled and never raises."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tsumugi_core.ids import InvalidJobIdError
from tsumugi_core.testing import FixedClock
from tsumugi_performer import DEFAULT_HEARTBEAT_INTERVAL_MS, HeartbeatAnswer, HeartbeatError, JobContext


class FakeShard:
    """Answers heartbeats like a shard would and records what it was sent."""

    def __init__(self, *, cancel_after: int | None = None, fail: bool = False) -> None:
        self.sent: list[float | None] = []
        self.cancel_after = cancel_after
        self.fail = fail

    async def __call__(self, progress: float | None) -> HeartbeatAnswer:
        if self.fail:
            raise ConnectionError("shard unreachable")
        self.sent.append(progress)
        cancel = self.cancel_after is not None and len(self.sent) > self.cancel_after
        return HeartbeatAnswer(accepted=True, cancel_requested=cancel)


def make_context(shard: FakeShard, clock: FixedClock | None = None, **overrides: Any) -> JobContext:
    fields: dict[str, Any] = {
        "job_id": "MAIL#2:abc",
        "attempt": 2,
        "max_attempts": 3,
        "deadline_at": 61_000,
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    }
    fields.update(overrides)
    return JobContext(heartbeat=shard, clock=clock, **fields)


class TestFields:
    def test_identity(self) -> None:
        ctx = make_context(FakeShard())
        assert ctx.job_id == "MAIL#2:abc"
        assert ctx.binding == "MAIL"
        assert ctx.attempt == 2
        assert ctx.max_attempts == 3
        assert ctx.deadline_at == 61_000
        assert ctx.traceparent == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

    def test_idempotency_key_is_the_job_id(self) -> None:
        assert make_context(FakeShard()).idempotency_key == "MAIL#2:abc"

    def test_last_attempt(self) -> None:
        assert not make_context(FakeShard()).is_last_attempt
        assert make_context(FakeShard(), attempt=3).is_last_attempt

    def test_invalid_job_id(self) -> None:
        with pytest.raises(InvalidJobIdError, match='missing "#"'):
            make_context(FakeShard(), job_id="MAIL:abc")

    @pytest.mark.parametrize(
        ("field", "value", "message"),
        [
            ("attempt", 0, "attempt must be an integer of at least 1, got 0"),
            ("attempt", True, "attempt must be an integer of at least 1, got True"),
            ("max_attempts", 0, "max_attempts must be an integer of at least 1, got 0"),
            ("deadline_at", -1, "deadline_at must be an integer of at least 0, got -1"),
            ("deadline_at", 1.5, "deadline_at must be an integer of at least 0, got 1.5"),
            ("heartbeat_interval_ms", -5, "heartbeat_interval_ms must be an integer of at least 0, got -5"),
        ],
    )
    def test_numbers_are_validated(self, field: str, value: object, message: str) -> None:
        overrides: dict[str, Any] = {field: value}
        with pytest.raises(ValueError, match=message):
            make_context(FakeShard(), **overrides)


class TestHeartbeat:
    async def test_sends_progress_and_returns_the_answer(self) -> None:
        shard = FakeShard()
        ctx = make_context(shard)
        assert await ctx.heartbeat(0.25) == HeartbeatAnswer(accepted=True, cancel_requested=False)
        assert await ctx.heartbeat() == HeartbeatAnswer(accepted=True, cancel_requested=False)
        assert shard.sent == [0.25, None]

    async def test_without_a_clock_every_heartbeat_is_sent(self) -> None:
        shard = FakeShard()
        ctx = make_context(shard)
        for _ in range(3):
            await ctx.heartbeat(0.1)
        assert len(shard.sent) == 3

    async def test_heartbeats_within_the_interval_are_dropped(self) -> None:
        shard = FakeShard()
        clock = FixedClock(1_000)
        ctx = make_context(shard, clock)
        first = await ctx.heartbeat(0.1)
        clock.advance(DEFAULT_HEARTBEAT_INTERVAL_MS - 1)
        dropped = await ctx.heartbeat(0.2)
        clock.advance(1)
        await ctx.heartbeat(0.3)
        assert shard.sent == [0.1, 0.3]
        assert dropped == first

    async def test_interval_is_configurable(self) -> None:
        shard = FakeShard()
        clock = FixedClock(0)
        ctx = make_context(shard, clock, heartbeat_interval_ms=0)
        await ctx.heartbeat(0.1)
        await ctx.heartbeat(0.2)
        assert shard.sent == [0.1, 0.2]

    async def test_cancel_request_is_reported_and_kept(self) -> None:
        shard = FakeShard(cancel_after=1)
        ctx = make_context(shard)
        assert not (await ctx.heartbeat()).cancel_requested
        assert not ctx.cancel_requested
        assert (await ctx.heartbeat()).cancel_requested
        assert ctx.cancel_requested
        shard.cancel_after = None
        assert (await ctx.heartbeat()).cancel_requested

    async def test_a_failing_heartbeat_is_logged_not_raised(self, caplog: pytest.LogCaptureFixture) -> None:
        shard = FakeShard(fail=True)
        ctx = make_context(shard)
        with caplog.at_level(logging.WARNING, logger="tsumugi_performer"):
            answer = await ctx.heartbeat(0.5)
        assert answer == HeartbeatAnswer(accepted=False, cancel_requested=False)
        assert "heartbeat for MAIL#2:abc attempt 2 failed" in caplog.text

    async def test_a_failing_heartbeat_keeps_a_known_cancel_request(self) -> None:
        shard = FakeShard(cancel_after=0)
        ctx = make_context(shard)
        await ctx.heartbeat()
        shard.fail = True
        assert await ctx.heartbeat() == HeartbeatAnswer(accepted=False, cancel_requested=True)


class CrossingRefused(Exception):
    """What the performer sees when the heartbeat's answer cannot cross RPC (a JS DataCloneError)."""

    name = "DataCloneError"


class TestHeartbeatProtocolErrors:
    """ADR-0043: an answer that cannot reach the performer fails the attempt instead of hiding cancellation."""

    async def test_an_answer_refused_by_rpc_raises_heartbeat_error_and_is_logged(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        async def refused(progress: float | None) -> HeartbeatAnswer:
            raise CrossingRefused("Proxy could not be serialized")

        ctx = make_context(FakeShard())
        ctx._heartbeat = refused  # pyright: ignore[reportPrivateUsage]
        with (
            caplog.at_level(logging.ERROR, logger="tsumugi_performer"),
            pytest.raises(HeartbeatError, match="cannot cross RPC"),
        ):
            await ctx.heartbeat(0.5)
        assert "its answer cannot cross RPC" in caplog.text

    async def test_heartbeat_error_from_the_transport_is_passed_on(self) -> None:
        async def undecodable(progress: float | None) -> HeartbeatAnswer:
            raise HeartbeatError("the heartbeat's answer does not decode")

        ctx = make_context(FakeShard())
        ctx._heartbeat = undecodable  # pyright: ignore[reportPrivateUsage]
        with pytest.raises(HeartbeatError, match="does not decode"):
            await ctx.heartbeat()
