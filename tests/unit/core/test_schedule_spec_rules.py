"""Schedule definition rules at their edges: flow targets, the exact refusals, the shard and name bounds."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from tsumugi_core.flow_spec import MAX_DEADLINE_MS
from tsumugi_core.options import FixedBackoff, Guarantee
from tsumugi_core.schedule_spec import (
    InvalidScheduleError,
    ScheduleSpec,
    occurrence_job_id,
    trigger_job_id,
    validate_schedule,
)
from tsumugi_core.schedule_timing import Timing

JOB = ScheduleSpec(name="tick", binding="Hello", payload={"n": 1}, timing=Timing(every_ms=60_000))
FLOW = ScheduleSpec(name="nightly", flow="Report", payload={"day": 1}, timing=Timing(cron="0 3 * * *"))


def refusal(spec: ScheduleSpec, **context: Any) -> tuple[str, str, str]:
    """The field, the rule and the message of the refusal of ``spec``."""
    kwargs: dict[str, Any] = {"registered": (), "shards": {}} | context
    with pytest.raises(InvalidScheduleError) as caught:
        validate_schedule(spec, **kwargs)
    return caught.value.field, caught.value.rule, str(caught.value)


def test_a_name_of_exactly_64_characters_is_allowed() -> None:
    named = msgspec.structs.replace(JOB, name="a" * 64)
    assert validate_schedule(named, registered=(), shards={}) is named


def test_a_refusal_carries_its_field_and_rule_apart() -> None:
    assert refusal(msgspec.structs.replace(JOB, name="a b")) == (
        "name",
        "must match ^[A-Za-z0-9_-]+$ and be at most 64 characters, got 'a b'",
        "name must match ^[A-Za-z0-9_-]+$ and be at most 64 characters, got 'a b'",
    )


def test_a_schedule_without_binding_or_flow_is_refused() -> None:
    assert refusal(msgspec.structs.replace(JOB, binding=""))[:2] == (
        "binding",
        "or flow is required: a schedule targets exactly one of them",
    )


def test_a_job_schedule_refuses_a_deadline() -> None:
    assert refusal(msgspec.structs.replace(JOB, deadline_ms=1000))[:2] == (
        "deadline_ms",
        "is allowed only with a flow",
    )


def test_a_payload_from_code_is_not_checked_even_if_one_was_left_in_the_spec() -> None:
    made = msgspec.structs.replace(JOB, payload=2**60, payload_from_code=True)
    assert validate_schedule(made, registered=(), shards={}) is made
    assert refusal(msgspec.structs.replace(made, payload_from_code=False))[0] == "payload"


def test_a_binding_split_into_two_shards_requires_a_partition_key() -> None:
    assert refusal(JOB, shards={"Hello": 2})[:2] == (
        "partition_key",
        "is required: Hello is split into 2 shards",
    )


class TestFlowSchedules:
    def test_a_valid_flow_schedule_passes(self) -> None:
        assert validate_schedule(FLOW, registered=("Hello",), shards={}, flows=("Report",)) is FLOW
        assert validate_schedule(FLOW, registered=(), shards={}, flows=None) is FLOW  # None: any flow name
        timed = msgspec.structs.replace(FLOW, deadline_ms=1)
        assert validate_schedule(timed, registered=(), shards={}) is timed

    def test_a_flow_with_a_binding_is_refused(self) -> None:
        assert refusal(msgspec.structs.replace(FLOW, binding="Hello")) == (
            "flow",
            "cannot be set with binding: a schedule targets exactly one of them",
            "flow cannot be set with binding: a schedule targets exactly one of them",
        )

    @pytest.mark.parametrize(
        ("option", "value"),
        [
            ("partition_key", "k"),
            ("max_attempts", 3),
            ("backoff", FixedBackoff(delay_ms=10)),
            ("timeout_ms", 1000),
            ("priority", 1),
            ("guarantee", Guarantee.AT_LEAST_ONCE),
            ("concurrency_key", "c"),
        ],
    )
    def test_each_job_option_is_refused_with_a_flow(self, option: str, value: object) -> None:
        assert refusal(msgspec.structs.replace(FLOW, **{option: value}))[:2] == (
            option,
            "is not allowed with a flow: the flow's nodes set their options",
        )

    def test_an_invalid_flow_name_is_refused(self) -> None:
        assert refusal(msgspec.structs.replace(FLOW, flow="a b"))[:2] == (
            "flow",
            'is not a valid flow name: invalid flow name: "a b" (alphanumeric, hyphen and underscore only)',
        )

    def test_an_unregistered_flow_is_refused_only_when_flows_are_known(self) -> None:
        assert refusal(FLOW, flows=("Other",))[:2] == ("flow", "is not a registered flow: Report")
        assert refusal(msgspec.structs.replace(FLOW, flow="Gone"), flows=("Report",))[:2] == (
            "flow",
            "is not a registered flow: Gone",
        )

    @pytest.mark.parametrize("deadline", [0, -5, True, 1.5, "60000"])
    def test_a_deadline_must_be_a_positive_integer(self, deadline: object) -> None:
        assert refusal(msgspec.structs.replace(FLOW, deadline_ms=deadline))[:2] == (
            "deadline_ms",
            f"must be a positive integer, got {deadline!r}",
        )

    @pytest.mark.parametrize("deadline", [MAX_DEADLINE_MS + 1, 1_340_716_791_695, 2**53])
    def test_a_deadline_longer_than_a_run_may_have_is_refused(self, deadline: int) -> None:
        # It was stored, and every trigger of the schedule answered 502 (issue 25, found by schemathesis): first
        # past JavaScript's exact integers, then (the live run) past the Run object's own bound.
        assert refusal(msgspec.structs.replace(FLOW, deadline_ms=deadline))[:2] == (
            "deadline_ms",
            f"must be at most {MAX_DEADLINE_MS}, got {deadline}",
        )
        validate_schedule(
            msgspec.structs.replace(FLOW, deadline_ms=MAX_DEADLINE_MS), registered=(), shards={}
        )

    def test_occurrence_and_trigger_ids_are_run_ids(self) -> None:
        assert occurrence_job_id(FLOW, 1, 1_767_204_000_000) == "Report:nightly-1767204000000"
        assert trigger_job_id(FLOW, 1, 5) == "Report:nightly-now-5"
