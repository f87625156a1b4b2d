"""Enqueues reach a shard as checked jobs in JSON text (``enqueue_checked``, ADR-0172); a JobShard class predating
it gets ``enqueue_json`` (ADR-0166), one predating that the plain-data ``enqueue_many``, and all store the same
jobs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.api.api_world import ShardObject, World


def _without(monkeypatch: pytest.MonkeyPatch, calls: list[str], *missing: str) -> None:
    original = ShardObject.__getattr__

    def lookup(self: ShardObject, name: str) -> Any:
        if name in missing:  # what workerd answers for a method a Python Durable Object lacks
            raise TypeError(f"Method {name} does not exist")
        calls.append(name)
        return original(self, name)

    monkeypatch.setattr(ShardObject, "__getattr__", lookup)


async def _stored_payload(world: World, job_id: str) -> Any:
    status, body = await world.request("GET", f"/api/jobs/{job_id.replace('#', '%23')}")
    assert status == 200
    return json.loads(body["job"]["payload"])


async def test_enqueue_crosses_to_the_shard_as_checked_jobs_in_json_text(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    _without(monkeypatch, calls)
    job_id = await world.enqueue("MAIL", payload={"to": "ada", "n": 2**40})
    assert "enqueue_checked" in calls
    assert "enqueue_json" not in calls
    assert "enqueue_many" not in calls
    assert await _stored_payload(world, job_id) == {"to": "ada", "n": 2**40}


async def test_a_shard_without_enqueue_checked_gets_enqueue_json(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    _without(monkeypatch, calls, "enqueue_checked")
    job_id = await world.enqueue("MAIL", payload={"to": "ada", "n": 2**40})
    assert "enqueue_json" in calls
    assert "enqueue_many" not in calls
    assert await _stored_payload(world, job_id) == {"to": "ada", "n": 2**40}


async def test_a_shard_without_enqueue_json_gets_enqueue_many(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    _without(monkeypatch, calls, "enqueue_checked", "enqueue_json")
    job_id = await world.enqueue("MAIL", payload={"to": "ada"})
    assert "enqueue_many" in calls
    assert await _stored_payload(world, job_id) == {"to": "ada"}
