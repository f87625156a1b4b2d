"""Enqueues reach a shard as JSON text (``enqueue_json``, ADR-0166); a JobShard class predating it still
gets the plain-data ``enqueue_many``, and both store the same jobs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.api.api_world import ShardObject, World


def _without_enqueue_json(monkeypatch: pytest.MonkeyPatch, calls: list[str]) -> None:
    original = ShardObject.__getattr__

    def lookup(self: ShardObject, name: str) -> Any:
        if name == "enqueue_json":  # what workerd answers for a method a Python Durable Object lacks
            raise TypeError("Method enqueue_json does not exist")
        calls.append(name)
        return original(self, name)

    monkeypatch.setattr(ShardObject, "__getattr__", lookup)


async def test_enqueue_crosses_to_the_shard_as_json_text(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    original = ShardObject.__getattr__
    monkeypatch.setattr(
        ShardObject, "__getattr__", lambda self, name: calls.append(name) or original(self, name)
    )
    job_id = await world.enqueue("MAIL", payload={"to": "ada", "n": 2**40})
    assert "enqueue_json" in calls
    assert "enqueue_many" not in calls
    status, body = await world.request("GET", f"/api/jobs/{job_id.replace('#', '%23')}")
    assert (status, json.loads(body["job"]["payload"])) == (200, {"to": "ada", "n": 2**40})


async def test_a_shard_without_enqueue_json_gets_enqueue_many(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    _without_enqueue_json(monkeypatch, calls)
    job_id = await world.enqueue("MAIL", payload={"to": "ada"})
    assert "enqueue_many" in calls
    status, body = await world.request("GET", f"/api/jobs/{job_id.replace('#', '%23')}")
    assert (status, json.loads(body["job"]["payload"])) == (200, {"to": "ada"})
