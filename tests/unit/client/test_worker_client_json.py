"""The Worker client enqueues through the scheduler's ``enqueue_json`` (ADR-0166) and falls back, once and for
good, to ``enqueue_many`` on a scheduler predating it."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from tsumugi_client import EnqueueItemDict, create_client


class Scheduler:
    """A Service Binding to the scheduler: records the methods called."""

    def __init__(self, *, has_json: bool) -> None:
        self.has_json = has_json
        self.calls: list[str] = []

    async def enqueue_json(self, items: str, settings: str | None = None) -> str:
        self.calls.append("enqueue_json")
        if not self.has_json:  # what workerd answers for a method a Python entrypoint lacks
            raise TypeError("Method enqueue_json does not exist")
        return json.dumps([f"{i['binding']}#0:j{n}" for n, i in enumerate(json.loads(items))])

    async def enqueue_many(self, items: list[dict[str, Any]], settings: Any = None) -> list[str]:
        self.calls.append("enqueue_many")
        return [f"{i['binding']}#0:j{n}" for n, i in enumerate(items)]


async def test_items_and_ids_cross_as_json_text() -> None:
    scheduler = Scheduler(has_json=True)
    client = create_client()
    items: list[EnqueueItemDict] = [{"binding": "MAIL", "payload": 1}] * 2
    ids = await client.enqueue_many(SimpleNamespace(TSUMUGI=scheduler), items)
    assert ids == ["MAIL#0:j0", "MAIL#0:j1"]
    assert scheduler.calls == ["enqueue_json"]


async def test_an_older_scheduler_gets_enqueue_many_and_is_remembered() -> None:
    scheduler = Scheduler(has_json=False)
    client = create_client()
    env = SimpleNamespace(TSUMUGI=scheduler)
    assert await client.enqueue_many(env, [{"binding": "MAIL", "payload": 1}]) == ["MAIL#0:j0"]
    assert await client.enqueue_many(env, [{"binding": "MAIL", "payload": 2}]) == ["MAIL#0:j0"]
    assert scheduler.calls == ["enqueue_json", "enqueue_many", "enqueue_many"]
