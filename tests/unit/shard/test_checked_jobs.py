"""A shard refuses a checked job (``enqueue_checked``, ADR-0172) that breaks a rule ``check_enqueue`` keeps, naming
the field, and stores nothing of its batch (ADR-0173): the service's checks are not the shard's only guard."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from tests.unit.shard.shard_world import World
from tsumugi_core.options import CheckedJob, EnqueueItem, EnqueueValidationError, check_enqueue
from tsumugi_scheduler.shard_host import checked_refusal

_CHECKED = msgspec.json.Decoder(list[CheckedJob])


def _wire(jobs: list[CheckedJob]) -> list[CheckedJob]:
    """``jobs`` as the shard's host decodes them from the service's JSON text."""
    try:
        return _CHECKED.decode(msgspec.json.encode(jobs))
    except msgspec.ValidationError as exc:
        raise checked_refusal(exc) from None


def _good(**options: Any) -> CheckedJob:
    return check_enqueue(EnqueueItem(binding="MAIL", payload={"n": 1}, **options))


def _stored(world: World) -> int:
    return int(world.sql.exec("SELECT COUNT(*) AS n FROM job").one()["n"])


@pytest.mark.parametrize(
    ("change", "field", "rule"),
    [
        ({"max_attempts": 0}, "items[1].max_attempts", "Expected `int` >= 1"),
        ({"timeout_ms": 10**15}, "items[1].timeout_ms", "Expected `int` <= 840000"),
        ({"priority": 2**60}, "items[1].priority", "Expected `int` <= 9007199254740991"),
        ({"delay_ms": -1}, "items[1].delay_ms", "Expected `int` >= 0"),
        ({"unique_key": ""}, "items[1].unique_key", "Expected `str` of length >= 1"),
        ({"concurrency_key": "k" * 513}, "items[1].concurrency_key", "Expected `str` of length <= 512"),
        ({"traceparent": "00-zz"}, "items[1].traceparent", "Expected `str` matching regex"),
    ],
)
def test_a_value_out_of_its_range_is_refused_at_decoding_naming_the_field(
    make_world: Callable[..., World], change: dict[str, Any], field: str, rule: str
) -> None:
    world = make_world()
    with pytest.raises(EnqueueValidationError) as refused:
        world.engine.enqueue_checked(_wire([_good(), msgspec.structs.replace(_good(), **change)]))
    assert refused.value.field == field
    assert str(refused.value).startswith(f"{field} {rule}")
    assert _stored(world) == 0


def test_a_backoff_out_of_its_range_is_refused_naming_its_field(make_world: Callable[..., World]) -> None:
    world = make_world()
    text = msgspec.json.encode([_good()]).decode().replace('"baseMs":1000', '"baseMs":-5')
    with pytest.raises(EnqueueValidationError) as refused:
        world.engine.enqueue_checked(_wire(_CHECKED.decode(text)))
    assert refused.value.field == "backoff.base_ms"
    assert _stored(world) == 0


@pytest.mark.parametrize(
    ("change", "field", "rule"),
    [
        ({"payload_json": '{"n": '}, "payload", "must be one JSON value: Input data was truncated"),
        (
            {"payload_json": "1 2"},
            "payload",
            "must be one JSON value: JSON is malformed: trailing characters (byte 3)",
        ),
        ({"payload_json": '"' + "x" * 102_400 + '"'}, "payload", "must be at most 102400 bytes as JSON"),
        ({"payload_json": '"' + "日" * 40_000 + '"'}, "payload", "must be at most 102400 bytes as JSON"),
        ({"run_at": 5, "delay_ms": 5}, "run_at", "and delay_ms are mutually exclusive"),
        ({"expires_at": 5, "expires_in_ms": 5}, "expires_at", "and expires_in_ms are mutually exclusive"),
        ({"node_id": "n"}, "node_id", "requires run_id"),
        ({"id": "garbage"}, "id", 'is not a job id: missing "#": "garbage"'),
        ({"id": "SMS#0:x"}, "id", "must belong to binding MAIL: SMS#0:x"),
        ({"id": "MAIL#1:x"}, "id", "must belong to shard 0: MAIL#1:x"),
    ],
)
def test_a_rule_no_type_holds_is_checked_by_the_shard_and_nothing_of_the_batch_is_stored(
    make_world: Callable[..., World], change: dict[str, Any], field: str, rule: str
) -> None:
    world = make_world()
    with pytest.raises(EnqueueValidationError) as refused:
        world.engine.enqueue_checked(_wire([_good(), msgspec.structs.replace(_good(), **change)]))
    assert (refused.value.field, str(refused.value)) == (field, f"{field} {rule}")
    assert _stored(world) == 0


def test_a_refused_batch_leaves_the_shard_dispatching(make_world: Callable[..., World]) -> None:
    world = make_world()
    with pytest.raises(EnqueueValidationError):
        world.engine.enqueue_checked(_wire([_good(), msgspec.structs.replace(_good(), payload_json="{")]))
    (job,) = world.engine.enqueue_checked(_wire([_good()]))
    assert [message.job_id for message in world.dispatch()] == [job.id]


def test_every_rule_check_enqueue_keeps_passes_a_checked_job_it_built(
    make_world: Callable[..., World],
) -> None:
    world = make_world()
    jobs = [
        _good(),
        _good(priority=-(2**53 - 1), max_attempts=2**53 - 1, timeout_ms=840_000, run_at=0),
        _good(delay_ms=0, expires_in_ms=1, unique_key="u", unique_for_ms=1, concurrency_key="k" * 512),
        _good(
            id="MAIL#0:mine", run_id="r", node_id="n", traceparent="00-" + "a" * 32 + "-" + "b" * 16 + "-01"
        ),
        check_enqueue(EnqueueItem(binding="MAIL", payload="日" * 34_000)),
    ]
    assert len(world.engine.enqueue_checked(_wire(jobs))) == 5
    assert _stored(world) == 5
