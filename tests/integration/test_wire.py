"""Decoding what producers send: field names in Python terms, integral floats as integers."""

from __future__ import annotations

import pytest

from tsumugi_core.options import EnqueueValidationError
from tsumugi_scheduler.producer_rpc import decode_item
from tsumugi_scheduler.wire import shard_of_job


def test_an_item_decodes_with_its_shard_and_integral_floats() -> None:
    item, shard = decode_item(
        {"binding": "MAIL", "payload": {"n": 1.0}, "maxAttempts": 5.0, "shard": 0}, "items[0]"
    )
    assert (item.binding, item.max_attempts, shard) == ("MAIL", 5, 0)
    assert item.payload == {"n": 1}


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"binding": "MAIL", "payload": None, "maxAttempts": "5"}, "items[3].max_attempts"),
        (
            {"binding": "MAIL", "payload": None, "backoff": {"kind": "fixed", "delayMs": "x"}},
            "items[3].backoff.delay_ms",
        ),
        ({"binding": "MAIL", "payload": None, "colour": 1}, "items[3].colour"),
        ({"binding": "MAIL"}, "items[3].payload"),
        ({"binding": "MAIL", "payload": None, "shard": -1}, "items[3].shard"),
        ([1], "items[3]"),
    ],
)
def test_a_bad_item_names_the_field(raw: object, field: str) -> None:
    with pytest.raises(EnqueueValidationError) as caught:
        decode_item(raw, "items[3]")
    assert caught.value.field == field


def test_a_job_id_maps_to_its_shard_or_names_job_id() -> None:
    assert shard_of_job("MAIL#2:abc") == "MAIL#2"
    with pytest.raises(EnqueueValidationError, match=r"^job_id is invalid: missing \"#\""):
        shard_of_job("MAIL:abc")
