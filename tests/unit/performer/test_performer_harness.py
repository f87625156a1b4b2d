"""tsumugi_performer.testing: create_test_context and run_performer (docs/reference/original.md §2.11)."""

from __future__ import annotations

from datetime import timedelta

import msgspec
import pytest

from tsumugi_core.testing import FixedClock
from tsumugi_performer import (
    InvalidPayloadError,
    JobContext,
    NonRetryableError,
    Performer,
    RetryAfterError,
    StepsUnavailableError,
)
from tsumugi_performer.testing import (
    DEFAULT_TEST_JOB_ID,
    DEFAULT_TEST_TIMEOUT_MS,
    Raised,
    RecordingContext,
    Returned,
    create_test_context,
    run_performer,
)


class Order(msgspec.Struct, frozen=True):
    id: str
    amount: int


class Charge(Performer[Order, int]):
    async def perform(self, payload: Order, ctx: JobContext) -> int:
        if payload.amount < 0:
            raise NonRetryableError("negative amount")
        if payload.amount == 0:
            raise RetryAfterError("nothing to charge yet", delay_ms=1_000)
        await ctx.heartbeat(0.5)
        return payload.amount * 100


class Cooperative(Performer[int, str]):
    """Stops when a heartbeat says the job was cancelled."""

    async def perform(self, payload: int, ctx: JobContext) -> str:
        for step in range(payload):
            if (await ctx.heartbeat(step / payload)).cancel_requested:
                raise RuntimeError(f"cancelled at step {step}")
        return "done"


class Echo:
    """Not a Performer subclass; the performer shape is enough."""

    async def perform(self, payload: object, ctx: JobContext, /) -> tuple[object, str]:
        return payload, ctx.job_id


class TestCreateTestContext:
    def test_defaults(self) -> None:
        ctx = create_test_context(clock=FixedClock(5_000))
        assert ctx.job_id == DEFAULT_TEST_JOB_ID == "TEST#0:testjob000000000000000000"
        assert ctx.binding == "TEST"
        assert ctx.attempt == 1
        assert ctx.max_attempts == 3
        assert ctx.idempotency_key == ctx.job_id
        assert ctx.deadline_at == 5_000 + DEFAULT_TEST_TIMEOUT_MS
        assert ctx.traceparent is None
        assert ctx.heartbeats == []

    def test_overrides(self) -> None:
        ctx = create_test_context(
            job_id="MAIL#1:x", attempt=3, max_attempts=3, deadline_at=42, traceparent="00-a-b-01"
        )
        assert (ctx.job_id, ctx.binding, ctx.attempt, ctx.deadline_at, ctx.traceparent) == (
            "MAIL#1:x",
            "MAIL",
            3,
            42,
            "00-a-b-01",
        )
        assert ctx.is_last_attempt

    def test_default_deadline_uses_the_wall_clock_when_no_clock_is_given(self) -> None:
        # A deadline in 1970 would make performers that compare with their own clock give up at once.
        assert create_test_context().deadline_at > 1_600_000_000_000 + DEFAULT_TEST_TIMEOUT_MS

    def test_validates(self) -> None:
        with pytest.raises(ValueError, match="attempt must be an integer of at least 1"):
            create_test_context(attempt=0)

    async def test_records_every_heartbeat_without_throttling(self) -> None:
        ctx = create_test_context(deadline_at=0)
        await ctx.heartbeat(0.1)
        await ctx.heartbeat()
        await ctx.heartbeat(0.1)
        assert ctx.heartbeats == [0.1, None, 0.1]

    async def test_cancel_requested_from_the_start(self) -> None:
        ctx = create_test_context(deadline_at=0, cancel_requested=True)
        assert (await ctx.heartbeat()).cancel_requested

    async def test_request_cancel_midway(self) -> None:
        ctx = create_test_context(deadline_at=0)
        assert not (await ctx.heartbeat()).cancel_requested
        ctx.request_cancel()
        assert (await ctx.heartbeat()).cancel_requested
        assert ctx.cancel_requested


class TestRunPerformer:
    async def test_returned_value(self) -> None:
        ctx = create_test_context(deadline_at=0)
        result = await run_performer(Charge(), Order(id="o1", amount=3), ctx)
        assert result == Returned(value=300)
        assert result.ok
        assert ctx.heartbeats == [0.5]

    async def test_raised_errors_come_back_as_values(self) -> None:
        result = await run_performer(Charge(), Order(id="o1", amount=-1))
        assert isinstance(result, Raised)
        assert not result.ok
        assert isinstance(result.error, NonRetryableError)
        assert str(result.error) == "negative amount"

    async def test_retry_after_comes_back_as_a_value(self) -> None:
        result = await run_performer(Charge(), Order(id="o1", amount=0))
        assert isinstance(result, Raised)
        assert isinstance(result.error, RetryAfterError)
        assert result.error.retry_at(10) == 1_010

    async def test_wire_shaped_payloads_are_decoded(self) -> None:
        raw: object = {"id": "o2", "amount": 2}
        assert await run_performer(Charge(), raw) == Returned(value=200)  # type: ignore[arg-type]

    async def test_payloads_that_do_not_fit_are_reported_not_raised(self) -> None:
        raw: object = {"id": "o2", "amount": "2"}
        result = await run_performer(Charge(), raw)  # type: ignore[arg-type]
        assert isinstance(result, Raised)
        assert isinstance(result.error, InvalidPayloadError)
        assert "Expected `int`, got `str` - at `$.amount`" in str(result.error)

    async def test_a_context_is_made_when_none_is_given(self) -> None:
        result = await run_performer(Echo(), "hi")
        assert result == Returned(value=("hi", DEFAULT_TEST_JOB_ID))

    async def test_any_object_with_perform_is_accepted_and_not_decoded(self) -> None:
        payload = {"kept": object()}
        result = await run_performer(Echo(), payload, create_test_context(job_id="X#0:y", deadline_at=0))
        assert isinstance(result, Returned)
        assert result.value[0] is payload
        assert result.value[1] == "X#0:y"

    async def test_cooperative_cancellation(self) -> None:
        ctx = create_test_context(deadline_at=0)
        assert await run_performer(Cooperative(), 3, ctx) == Returned(value="done")
        ctx.request_cancel()
        result = await run_performer(Cooperative(), 3, ctx)
        assert isinstance(result, Raised)
        assert str(result.error) == "cancelled at step 0"

    @pytest.mark.parametrize("given_clock", [True, False], ids=["fixed-clock", "default"])
    async def test_a_sleep_or_an_event_wait_says_it_needs_a_shard(self, given_clock: bool) -> None:
        class Waits:
            async def perform(self, payload: str, ctx: JobContext, /) -> None:
                if payload == "sleep":
                    await ctx.sleep(timedelta(minutes=5))
                else:
                    await ctx.wait_for_event("paid", key="o1", timeout=timedelta(hours=1))

        # A sleep suspends (only a shard resumes it); an event wait needs the shard's store to look for the event.
        for kind, said in (
            ("sleep", "resume only in a shard"),
            ("event", "has no step store in this context"),
        ):
            ctx = create_test_context(clock=FixedClock(1_000)) if given_clock else create_test_context()
            result = await run_performer(Waits(), kind, ctx)
            assert isinstance(result, Raised)
            assert isinstance(result.error, StepsUnavailableError), result.error
            assert said in str(result.error)

    async def test_a_clock_does_not_throttle_the_recorded_heartbeats(self) -> None:
        ctx = create_test_context(clock=FixedClock(0))
        for progress in (0.1, 0.2, 0.3):
            await ctx.heartbeat(progress)
        assert ctx.heartbeats == [0.1, 0.2, 0.3]

    def test_recording_context_is_a_job_context(self) -> None:
        assert isinstance(create_test_context(deadline_at=0), RecordingContext)
        assert issubclass(RecordingContext, JobContext)
