"""Schedule definitions: every validation rule names its field, and occurrence ids are deterministic."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from tsumugi_core.options import FixedBackoff
from tsumugi_core.schedule_spec import (
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
    assert occurrence_job_id(BASE, 1, 120_000) == "Hello#0:tick-120000"
    assert occurrence_job_id(BASE, 1, 120_000) == occurrence_job_id(BASE, 1, 120_000)
    sharded = spec(partition_key="customer-7")
    ids = {occurrence_job_id(sharded, 8, at) for at in (1, 2, 3)}
    assert len({i.split(":")[0] for i in ids}) == 1  # every occurrence in the key's one shard
    assert trigger_job_id(BASE, 1, 5) == "Hello#0:tick-now-5"
    with pytest.raises(InvalidScheduleError, match="partition_key is required"):
        occurrence_job_id(BASE, 2, 1)


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
