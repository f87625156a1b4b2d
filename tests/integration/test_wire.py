"""Decoding what producers send: field names in Python terms, integral floats as integers."""

from __future__ import annotations

import pytest

from tsumugi_core.options import EnqueueValidationError
from tsumugi_scheduler.producer_rpc import decode_item
from tsumugi_scheduler.wire import integral, integral_shared, job_shard, shard_of_job


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


class Subclassed(dict[str, object]):
    pass


def test_integral_reads_integral_floats_as_ints_at_every_depth_and_copies_containers() -> None:
    raw: dict[str, object] = {
        "a": 1.0,
        "b": [2.0, 2.5, {"c": 3.0, 4: True}],
        "d": Subclassed(e=5.0),
        "f": None,
        "g": "6.0",
        "h": 2.0**60,
        "i": [[7.0]],
        "j": False,
    }
    converted = integral(raw)
    assert converted == {
        "a": 1,
        "b": [2, 2.5, {"c": 3, "4": True}],
        "d": {"e": 5},
        "f": None,
        "g": "6.0",
        "h": 2.0**60,
        "i": [[7]],
        "j": False,
    }
    kinds = (type(converted["a"]), type(converted["b"][0]), type(converted["i"][0][0]), type(converted["h"]))
    assert kinds == (int, int, int, float)
    assert converted["j"] is False
    assert raw["a"] == 1.0  # the input is left alone
    assert type(raw["a"]) is float
    assert converted is not raw
    assert converted["b"] is not raw["b"]


def test_decoding_an_item_leaves_the_callers_dict_unchanged() -> None:
    raw = {"binding": "MAIL", "payload": {"n": 2.0}, "shard": 0}
    decode_item(raw, "items[0]")
    assert raw == {"binding": "MAIL", "payload": {"n": 2.0}, "shard": 0}


@pytest.mark.parametrize(
    ("job_id", "error"),
    [
        ("MAIL#2:bad id", "job_id is invalid: invalid localId"),
        ("MAIL#2:a:b", "job_id is invalid: invalid localId"),
        ("MAIL#2:", "job_id is invalid: invalid localId"),
        ("MAIL#x:abc", "job_id is invalid: shard is not a number"),
        (7, "job_id is invalid: must be a string"),
    ],
)
def test_a_known_shard_prefix_still_refuses_a_malformed_id(job_id: object, error: str) -> None:
    assert shard_of_job("MAIL#2:seen") == "MAIL#2"  # MAIL#2: is now a known prefix
    with pytest.raises(EnqueueValidationError) as caught:
        shard_of_job(job_id)
    assert str(caught.value).startswith(error)


def test_job_shard_answers_name_and_index_for_each_prefix() -> None:
    assert [job_shard(i) for i in ("A#0:x", "A#1:x", "A#0:y", "B#0:x")] == [
        ("A#0", 0),
        ("A#1", 1),
        ("A#0", 0),
        ("B#0", 0),
    ]


@pytest.mark.parametrize(
    "value",
    [
        {"a": 1.0},
        {"a": [1, {"b": 2.0}]},
        {1: "int key"},
        [3.0],
        4.0,
        Subclassed(x=1),
        {"s": Subclassed(x=1)},
    ],
)
def test_integral_shared_converts_like_integral_when_something_changes(value: object) -> None:
    converted = integral_shared(value)
    assert converted == integral(value)
    assert converted is not value


def test_integral_shared_hands_back_a_value_that_needs_no_change_as_it_is() -> None:
    value = {"a": 1, "b": [2.5, {"c": "3.0", "d": None, "e": True}], "f": float("inf"), "g": 2.0**60}
    assert integral_shared(value) is value
    assert integral_shared(value) == integral(value)
