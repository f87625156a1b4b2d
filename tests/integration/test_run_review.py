"""Review of the Run object's speed rewrite: calls that land while a tick awaits another object.

A tick awaits the job shards (``enqueue_valid``), child runs and D1; other calls to the Run object run
meanwhile (as on Cloudflare, whose input gate opens while an object awaits another). Each test slows one of
those awaits by virtual time so a real event lands inside the tick, then checks the run still ends.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime
from tsumugi_scheduler import producer_rpc
from tsumugi_scheduler.timing import time_source

WORKER = "tsumugi-flows"
"""The Worker of the ``flows`` fixture (tests/integration/conftest.py)."""


async def start(runtime: LocalRuntime, run_id: str, run_input: Any, deadline_ms: int | None = None) -> None:
    stub = runtime.env(WORKER).RUN.getByName(run_id)
    await stub.start(run_id, run_id.partition(":")[0], json.dumps(run_input), deadline_ms, None, 0)


async def read(runtime: LocalRuntime, run_id: str) -> tuple[dict[str, Any], dict[str, str]]:
    d1 = runtime.d1("tsumugi-flows")
    run = await d1.prepare("SELECT * FROM run WHERE id = ?").bind(run_id).first()
    assert run is not None, run_id
    nodes = await d1.prepare("SELECT node_id, state FROM run_node WHERE run_id = ?").bind(run_id).all()
    return dict(run), {n["node_id"]: n["state"] for n in nodes.results}


def slow_first_send(monkeypatch: pytest.MonkeyPatch, delay_ms: int) -> list[int]:
    """The Run object's first ``enqueue_valid`` returns ``delay_ms`` (virtual) after enqueueing."""
    real = producer_rpc.SchedulerService.enqueue_valid
    calls: list[int] = []

    async def slow(self: Any, items: Any, *rest: Any) -> Any:
        answer = await real(self, items, *rest)
        calls.append(len(items))
        if len(calls) == 1:
            await time_source().sleep_ms(delay_ms)
        return answer

    monkeypatch.setattr(producer_rpc.SchedulerService, "enqueue_valid", slow)
    return calls


async def test_an_ending_that_lands_while_the_tick_sends_is_not_put_off_to_the_deadline(
    flows: LocalRuntime, fixture_module: Any, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixture_module.SEEN.add("k:A")  # b succeeds at once
    slow_first_send(monkeypatch, 500)  # "a" and "d" end while the first tick still awaits their enqueue
    await start(flows, "chain:dl", {"key": "k", "wait": 0}, deadline_ms=600_000)
    await clock.advance(5_000)
    run, nodes = await read(flows, "chain:dl")
    assert (run["state"], nodes) == ("COMPLETED", dict.fromkeys("abcd", "COMPLETED"))


async def test_a_retry_that_lands_while_the_tick_sends_the_notices_gets_its_own_notices(
    flows: LocalRuntime, fixture_module: Any, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = producer_rpc.SchedulerService.enqueue_many
    slowed: list[int] = []

    async def slow_notices(self: Any, items: Any) -> Any:
        answer = await real(self, items)
        if not slowed and any(item.get("binding") == "Noticed" for item in items):
            slowed.append(len(items))
            await time_source().sleep_ms(500)  # the failed run's notices are sent; the tick still awaits
        return answer

    monkeypatch.setattr(producer_rpc.SchedulerService, "enqueue_many", slow_notices)
    await start(flows, "chain:rt", {"key": "rt", "wait": 0})
    for _ in range(200):  # until the failure is projected (before its notices go)
        await clock.advance(10)
        if (await read(flows, "chain:rt"))[0]["state"] == "FAILED":
            break
    assert slowed == [2]
    assert await flows.env(WORKER).RUN.getByName("chain:rt").retry() == {"ok": True}
    await clock.advance(3_000)
    run, _ = await read(flows, "chain:rt")
    assert run["state"] == "COMPLETED"
    assert sorted((n["kind"], n["state"]) for n in fixture_module.NOTICES) == [
        ("failure", "FAILED"),
        ("settled", "COMPLETED"),
        ("settled", "FAILED"),
    ]


async def test_a_cancel_that_lands_while_the_tick_sends_stops_unstarted_nodes_at_once(
    flows: LocalRuntime, fixture_module: Any, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow_first_send(monkeypatch, 500)
    await start(flows, "slow:cx", {"seconds": 30}, deadline_ms=600_000)
    await clock.advance(100)  # the first tick awaits the enqueue of "wait"
    assert await flows.env(WORKER).RUN.getByName("slow:cx").cancel() == {"ok": True}
    await clock.advance(2_000)
    _, nodes = await read(flows, "slow:cx")
    assert (nodes["then"], nodes["later"]) == ("CANCELLED", "CANCELLED")


async def test_a_run_id_started_again_after_its_object_was_swept_shows_the_new_run(
    flows: LocalRuntime, fixture_module: Any, clock: VirtualClock
) -> None:
    await start(flows, "fan:again", {"items": [1, 2, 3]})
    await clock.advance(1_000)
    await clock.advance(300_000)  # COMPLETED, then wiped after its retention (the read model keeps it)
    assert await flows.env(WORKER).RUN.getByName("fan:again").state() is None
    await start(flows, "fan:again", {"items": [7]})  # a new object: its outbox seq starts at 1 again
    await clock.advance(1_000)
    run, nodes = await read(flows, "fan:again")
    assert json.loads(run["input"]) == {"items": [7]}
    assert "each:k7" in nodes
