"""The shard's ``enqueue_json`` decodes items straight into `EnqueueItem` and stores exactly what
``enqueue_many`` stores from the same items, errors included."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.integration.test_shard_host_alarm import SHARD, clock, host_with  # noqa: F401 (clock: the autouse fixture that closes what a host opened)
from tsumugi_core.options import EnqueueValidationError
from tsumugi_scheduler.shard_host import JobShardHost


def _stored(host: JobShardHost, job_id: str) -> tuple[Any, ...]:
    engine = host.engine(SHARD)
    assert engine is not None
    row = engine.get(job_id)
    assert row is not None
    return (row.payload, row.priority, row.max_attempts, row.timeout_ms, row.backoff)


@pytest.mark.parametrize(
    "item",
    [
        {
            "binding": "Hello",
            "payload": {"n": 2.0, "x": [1.5, 3.0], "s": "2.0"},
        },  # integral floats read as ints
        {"binding": "Hello", "payload": 1, "priority": 5.0, "timeoutMs": 1000.0},  # a float where an int goes
        {
            "binding": "Hello",
            "payload": None,
            "backoff": {"kind": "exponential", "factor": 2.0, "baseMs": 10},
        },
    ],
)
async def test_json_text_stores_what_plain_items_store(item: dict[str, Any]) -> None:
    by_json, _, _ = host_with(alarm=None)
    by_plain, _, _ = host_with(alarm=None)
    [from_json] = json.loads(await by_json.enqueue_json(SHARD, json.dumps([item])))
    [from_plain] = await by_plain.enqueue_many(SHARD, [item])
    assert _stored(by_json, from_json) == _stored(by_plain, from_plain)


async def test_an_integral_payload_number_is_stored_as_an_integer() -> None:
    host, _, _ = host_with(alarm=None)
    [job_id] = json.loads(
        await host.enqueue_json(SHARD, json.dumps([{"binding": "Hello", "payload": {"n": 2.0}}]))
    )
    assert _stored(host, job_id)[0] == '{"n":2}'


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"binding": "Hello", "payload": 1, "maxAttempts": 0}, "max_attempts"),
        ({"binding": "Hello", "payload": 1, "priority": "high"}, "items[1].priority"),
    ],
)
async def test_a_bad_item_is_refused_naming_its_field_and_nothing_is_stored(
    item: dict[str, Any], field: str
) -> None:
    host, _, _ = host_with(alarm=None)
    with pytest.raises(EnqueueValidationError) as refused:
        await host.enqueue_json(SHARD, json.dumps([{"binding": "Hello", "payload": 0}, item]))
    assert refused.value.field == field
    engine = host.engine(SHARD)
    assert engine is not None
    assert engine.changes() == []  # the valid first item was not stored either
