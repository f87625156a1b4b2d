"""The pure parts of the HTTP clients: targets, retry decisions, poll pauses, client-made ids, the plan."""

from __future__ import annotations

import random
from typing import Generic, TypeVar

import msgspec
import pytest

from tsumugi_client import PerformerRef, PollSchedule, RetryPolicy, performer_ref
from tsumugi_client._enqueue_plan import EnqueuePlan
from tsumugi_client._http_setup import RandomIds
from tsumugi_client._retry import Failure
from tsumugi_client._targets import resolve_target
from tsumugi_core.ids import is_valid_local_id, parse_job_id
from tsumugi_core.options import EnqueueItem
from tsumugi_core.testing import SequentialIds
from tsumugi_performer import JobContext, Performer

T = TypeVar("T")


class Out(msgspec.Struct):
    n: int


class Direct(Performer[int, Out]):
    async def perform(self, payload: int, ctx: JobContext) -> Out:
        return Out(n=payload)


class Base(Performer[T, list[T]], Generic[T]):
    async def perform(self, payload: T, ctx: JobContext) -> list[T]:
        return [payload]


class ViaBase(Base[int]):
    pass


class TestTargets:
    def test_a_class_names_its_binding_and_its_declared_result_type(self) -> None:
        assert resolve_target(Direct) == ("Direct", Out)

    def test_a_generic_base_bound_by_the_subclass_gives_the_bound_result_type(self) -> None:
        assert resolve_target(ViaBase) == ("ViaBase", list[int])
        assert resolve_target(type("Deeper", (ViaBase,), {})) == ("Deeper", list[int])

    def test_a_result_left_open_decodes_as_plain_json(self) -> None:
        assert resolve_target(Base) == ("Base", None)

    def test_a_class_that_is_no_performer_decodes_as_plain_json(self) -> None:
        assert resolve_target(int) == ("int", None)

    def test_a_ref_carries_its_result_type_and_a_name_none(self) -> None:
        assert resolve_target(PerformerRef[int, Out]("Direct").returning(Out)) == ("Direct", Out)
        assert resolve_target("Direct") == ("Direct", None)

    def test_performer_ref_never_calls_its_lambda_and_checks_the_name(self) -> None:
        def never() -> type[Direct]:
            raise AssertionError("called")

        assert performer_ref("Direct", never) == PerformerRef("Direct")
        with pytest.raises(ValueError, match="invalid binding name"):
            performer_ref("no spaces", never)


class TestRetryPolicy:
    def test_waits_grow_exponentially_up_to_the_cap_within_the_jitter_band(self) -> None:
        policy = RetryPolicy(attempts=10, base_s=0.1, factor=3.0, max_s=1.0)
        low = [policy.delay_s(n, Failure.NOT_SENT, idempotent=False, rand=0.0) for n in range(4)]
        high = [policy.delay_s(n, Failure.NOT_SENT, idempotent=False, rand=0.999999) for n in range(4)]
        assert low == pytest.approx([0.05, 0.15, 0.45, 0.5])
        assert high == pytest.approx([0.1, 0.3, 0.9, 1.0], rel=1e-5)

    def test_without_jitter_the_wait_is_exact(self) -> None:
        policy = RetryPolicy(base_s=0.2, jitter=False)
        assert policy.delay_s(1, Failure.UNAVAILABLE, idempotent=True, rand=0.3) == pytest.approx(0.4)

    @pytest.mark.parametrize("failure", [Failure.MAYBE_SENT, Failure.UNAVAILABLE])
    def test_a_request_that_may_have_arrived_is_repeated_only_when_idempotent(self, failure: Failure) -> None:
        policy = RetryPolicy()
        assert policy.delay_s(0, failure, idempotent=False, rand=0.5) is None
        assert policy.delay_s(0, failure, idempotent=True, rand=0.5) is not None

    def test_one_attempt_turns_retrying_off(self) -> None:
        assert RetryPolicy(attempts=1).delay_s(0, Failure.NOT_SENT, idempotent=True, rand=0.5) is None

    @pytest.mark.parametrize(
        "settings",
        [
            {"attempts": 0},
            {"base_s": -1.0},
            {"factor": 0.5},
            # NaN passes every comparison, and 2.5 tries is no count: both were taken.
            {"attempts": 2.5},
            {"attempts": True},
            {"base_s": float("nan")},
            {"max_s": float("nan")},
            {"factor": float("nan")},
        ],
    )
    def test_bad_settings_are_refused(self, settings: dict[str, float]) -> None:
        with pytest.raises(ValueError, match="must"):
            RetryPolicy(**settings)  # type: ignore[arg-type]


def test_a_wait_past_a_floats_range_of_growth_stays_at_the_cap() -> None:
    # 2.0**1024 overflows: a wait polled for about 17 minutes, or the 1,025th retry, raised OverflowError.
    assert PollSchedule().delay_s(1_024) == 1.0
    assert PollSchedule(factor=10.0).delay_s(400) == 1.0
    policy = RetryPolicy(attempts=5_000, base_s=0.2, max_s=5.0, jitter=False)
    assert policy.delay_s(1_024, Failure.NOT_SENT, idempotent=True, rand=0.5) == 5.0


def test_poll_pauses_double_up_to_their_cap() -> None:
    assert [PollSchedule(first_s=0.1, factor=3, max_s=0.5).delay_s(n) for n in range(4)] == pytest.approx(
        [0.1, 0.3, 0.5, 0.5]
    )


def test_random_ids_are_valid_and_a_seed_repeats_them() -> None:
    ids = RandomIds()
    made = {ids.new_local_id() for _ in range(50)}
    assert len(made) == 50
    assert all(is_valid_local_id(i) for i in made)
    seeded = [RandomIds(random.Random(3)).new_local_id() for _ in range(2)]
    assert seeded[0] == seeded[1]


class TestPlan:
    def test_items_get_ids_on_the_shard_their_key_routes_to_and_batches_follow_shards(self) -> None:
        plan = EnqueuePlan({"SMS": 4}, SequentialIds())
        items = [EnqueueItem(binding="SMS", payload=n, partition_key=f"k{n % 3}") for n in range(6)]
        sends = plan.sends(items)
        for send in sends:
            shards = {parse_job_id(str(item["id"])).shard for item in _items(send.call.body)}
            assert shards == {send.destination.shard}
        assert sorted(p for send in sends for p in send.positions) == list(range(6))
        assert all(send.call.idempotent for send in sends)

    def test_a_binding_of_unknown_shard_count_asks_once_then_gets_no_id_when_the_answer_is_silent(
        self,
    ) -> None:
        plan = EnqueuePlan({}, SequentialIds())
        items = [EnqueueItem(binding="A", payload=1)]
        assert plan.needs_shard_counts(items)
        plan.learn(None)
        assert not plan.needs_shard_counts(items)
        (send,) = plan.sends(items)
        assert "id" not in send.call.body
        assert not send.call.idempotent

    def test_a_callers_own_id_is_kept_and_needs_no_question(self) -> None:
        plan = EnqueuePlan({}, SequentialIds())
        items = [EnqueueItem(binding="A", payload=1, id="A#0:mine")]
        assert not plan.needs_shard_counts(items)
        (send,) = plan.sends(items)
        assert (send.call.body["id"], send.call.idempotent) == ("A#0:mine", True)


def _items(body: object) -> list[dict[str, object]]:
    assert isinstance(body, dict)
    return body.get("items", [body])  # type: ignore[return-value]
