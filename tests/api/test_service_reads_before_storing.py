"""The scheduler's service refuses a call before any shard stores, and stores a schedule's payload as a shard
reads its JSON (ADR-0173)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import msgspec
import pytest

from tests.api.api_world import SteppedClock, World
from tsumugi_core.options import EnqueueItem
from tsumugi_core.policy import PolicyValidationError
from tsumugi_scheduler.definition import define_tsumugi
from tsumugi_scheduler.producer_rpc import SchedulerService


async def test_invalid_settings_are_refused_before_a_shard_with_its_own_settings_stores(
    tmp_path: Path, clock: SteppedClock
) -> None:
    # SMS has settings in code, so its shard never reads the caller's; MAIL's would refuse them afterwards.
    definition = define_tsumugi(
        performers=["MAIL", "SMS"], bindings={"SMS": {"policy": {"reaper_grace_ms": 5_000}}}
    )
    world = World(tmp_path, clock, definition)
    try:
        service = SchedulerService(world.env, definition)
        with pytest.raises(PolicyValidationError, match="sweep_after_ms must be at least 0"):
            await service.enqueue_many(
                [{"binding": "MAIL", "payload": 1}, {"binding": "SMS", "payload": 2}], {"sweepAfterMs": -5}
            )
        assert world.env.JOB_SHARD.objects == {}  # no shard was even called
    finally:
        await world.aclose()


@dataclasses.dataclass
class Window:
    start: float
    end: float


class Point(msgspec.Struct):
    x: float
    y: float


@pytest.mark.parametrize(
    ("payload", "stored"),
    [
        ({"range": (1.0, 60.0)}, {"range": [1, 60]}),
        ({"w": Window(0.0, 3600.5)}, {"w": {"start": 0, "end": 3600.5}}),
        (Point(x=1.0, y=2.5), {"x": 1, "y": 2.5}),
        ({"plain": [1.0, {"n": 2.0}]}, {"plain": [1, {"n": 2}]}),
    ],
)
async def test_a_schedules_payload_is_stored_as_the_shard_reads_its_json(
    world: World, payload: object, stored: object
) -> None:
    service = SchedulerService(world.env, world.definition)
    (job_id,) = await service.enqueue_items([EnqueueItem(binding="MAIL", payload=payload)])
    row = world.shard(job_id.split(":")[0]).sql.exec("SELECT payload FROM job").one()
    assert row["payload"] == json.dumps(stored, separators=(",", ":"))
