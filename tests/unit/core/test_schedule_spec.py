"""Schedule definitions: every validation rule names its field, and occurrence ids are deterministic."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from tsumugi_core.flow_spec import MAX_DEADLINE_MS
from tsumugi_core.ids import is_valid_local_id
from tsumugi_core.options import FixedBackoff, Guarantee
from tsumugi_core.schedule_spec import (
    ALLOWED_JOB_OPTIONS,
    OCCURRENCE_DIGEST_BYTES,
    InvalidScheduleError,
    Overlap,
    ScheduleSpec,
    occurrence_item,
    occurrence_job_id,
    trigger_job_id,
    validate_schedule,
)
from tsumugi_core.schedule_timing import Timing

BASE = ScheduleSpec(name="tick", binding="Hello", payload={"n": 1}, timing=Timing(every_ms=60_000))


def spec(**changes: Any) -> ScheduleSpec:
    return msgspec.structs.replace(BASE, **changes)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": ""}, "name must match"),
        ({"name": "a" * 65}, "name must match"),
        ({"name": "a.b"}, "name must match"),
        ({"timing": Timing()}, "every_ms or cron: exactly one is required"),
        ({"timing": Timing(every_ms=500)}, "every_ms must be an integer of at least 1000, got 500"),
        ({"timing": Timing(cron="0 0 31 2 *")}, "cron is invalid: no occurrence within 1830 days"),
        ({"timing": Timing(cron="* * * *")}, "cron is invalid: expected 5 fields"),
        ({"timing": Timing(cron="0 3 * * *", timezone="Nowhere/City")}, "timezone must be an IANA time zone"),
        ({"overlap": "sometimes"}, "overlap must be 'skip' or 'overlap', got 'sometimes'"),
        ({"binding": "Missing"}, "binding is not a registered performer: Missing"),
        ({"binding": "no-dash"}, "binding is invalid"),
        ({"max_attempts": 0}, "max_attempts must be at least 1"),
        ({"timeout_ms": 900_000}, "timeout_ms must be at most 840000"),
        ({"backoff": FixedBackoff(delay_ms=-1)}, "backoff.delay_ms must not be negative"),
        ({"priority": 2**60}, "priority must be between"),
        ({"concurrency_key": ""}, "concurrency_key must not be empty"),
        ({"payload": {"x": object()}}, "payload must be JSON-serialisable"),
    ],
)
def test_each_rule_is_refused_with_its_field(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidScheduleError) as caught:
        validate_schedule(spec(**changes), registered=("Hello",), shards={})
    assert str(caught.value).startswith(message)
    assert caught.value.field == message.split(" ")[0]


def test_a_sharded_binding_requires_a_partition_key() -> None:
    with pytest.raises(InvalidScheduleError, match="partition_key is required: Hello is split into 4 shards"):
        validate_schedule(BASE, registered=(), shards={"Hello": 4})
    assert validate_schedule(spec(partition_key="k"), registered=(), shards={"Hello": 4}).partition_key == "k"


def test_no_registered_performers_accepts_any_binding() -> None:
    assert validate_schedule(spec(binding="Other"), registered=(), shards={}).binding == "Other"


def test_a_payload_from_code_is_not_checked_as_a_value() -> None:
    made = spec(payload=None, payload_from_code=True, overlap=Overlap.OVERLAP)
    assert validate_schedule(made, registered=(), shards={}) is made


def test_occurrence_ids_are_deterministic_and_sharded_by_partition_key() -> None:
    first = occurrence_job_id(BASE, 1, 120_000, "key")
    assert first.startswith("Hello#0:tick-120000-")
    assert first == occurrence_job_id(BASE, 1, 120_000, "key")
    sharded = spec(partition_key="customer-7")
    ids = {occurrence_job_id(sharded, 8, at, "key") for at in (1, 2, 3)}
    assert len({i.split(":")[0] for i in ids}) == 1  # every occurrence in the key's one shard
    assert trigger_job_id(BASE, 1, 5, "key").startswith("Hello#0:tick-now-5-")
    with pytest.raises(InvalidScheduleError, match="partition_key is required"):
        occurrence_job_id(BASE, 2, 1, "key")


def test_only_the_id_key_makes_an_occurrence_id() -> None:
    # ADR-0177: a caller may pin job ids; what it can read (the name, the cron, the instant) must not be enough
    # to take an occurrence's id before the schedule fires it.
    made = occurrence_job_id(BASE, 1, 120_000, "key")
    local = made.partition(":")[2]
    digest = local.rpartition("-")[2]
    assert len(digest) == 2 * OCCURRENCE_DIGEST_BYTES
    assert all(c in "0123456789abcdef" for c in digest)
    assert made != occurrence_job_id(BASE, 1, 120_000, "other key")
    assert made != occurrence_job_id(BASE, 1, 180_000, "key")
    assert trigger_job_id(BASE, 1, 120_000, "key") != trigger_job_id(BASE, 1, 120_000, "other key")
    assert is_valid_local_id(local)


def test_occurrence_item_carries_the_options_and_the_id() -> None:
    item = occurrence_item(spec(max_attempts=5, priority=3), {"at": 1}, "Hello#0:tick-1")
    assert (item.binding, item.payload, item.id, item.max_attempts, item.priority) == (
        "Hello",
        {"at": 1},
        "Hello#0:tick-1",
        5,
        3,
    )
    assert item.unique_key is None
    assert item.delay_ms is None


def test_occurrence_item_carries_every_allowed_option() -> None:
    values: dict[str, Any] = {
        "partition_key": "tenant-4",
        "max_attempts": 6,
        "backoff": FixedBackoff(delay_ms=750),
        "timeout_ms": 12_000,
        "priority": -3,
        "guarantee": Guarantee.AT_MOST_ONCE,
        "concurrency_key": "tenant-4",
    }
    assert set(values) == set(ALLOWED_JOB_OPTIONS)
    item = occurrence_item(spec(**values), None, "Hello#0:tick-1")
    assert {option: getattr(item, option) for option in ALLOWED_JOB_OPTIONS} == values


# Schedule definition rules at their edges: flow targets, the exact refusals, the shard and name bounds.


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
        assert occurrence_job_id(FLOW, 1, 1_767_204_000_000, "k").startswith("Report:nightly-1767204000000-")
        assert trigger_job_id(FLOW, 1, 5, "k").startswith("Report:nightly-now-5-")
