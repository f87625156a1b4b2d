"""A subflow's child run input keeps every rule of a run's input (ADR-0175): the parent's node fails at start.

POST /api/runs refuses an input that breaks the flow's input type or is larger than a job payload; a parent's
subflow node starting a child with such an input failed later (at the child's node, or never: an input past
SQLite's 2 MB held the parent's tick in a retry loop).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.api.api_world import SteppedClock, World
from tsumugi_core.options import MAX_PAYLOAD_BYTES
from tsumugi_performer import JobContext, Performer
from tsumugi_performer.flow import FlowBuilder, flow
from tsumugi_scheduler.definition import define_tsumugi


class Count(msgspec.Struct):
    n: int


class Double(Performer[int, int]):
    async def perform(self, payload: int, ctx: JobContext) -> int:
        return payload * 2


@flow("typedchild", Count)
def typedchild(f: FlowBuilder[Count]) -> None:
    f.node("double", Double, input=lambda run, deps: run.n)


@flow("typedparent", dict)
def typedparent(f: FlowBuilder[dict[str, Any]]) -> None:
    # A type checker refuses a mapping that answers a dict for Count; code it does not see still runs it.
    f.subflow("sub", typedchild, input=lambda run, deps: {"n": run["n"]})  # pyright: ignore[reportArgumentType]


@flow("sizedparent", dict)
def sizedparent(f: FlowBuilder[dict[str, Any]]) -> None:
    f.subflow("sub", typedchild, input=lambda run, deps: {"n": 1, "blob": "x" * run["size"]})  # pyright: ignore[reportArgumentType]


@pytest.fixture
async def world(tmp_path: Path, clock: SteppedClock) -> AsyncIterator[World]:
    flows = [typedchild, typedparent, sizedparent]
    built = World(tmp_path, clock, define_tsumugi(performers=["Double"], flows=flows))
    yield built
    await built.aclose()


async def _node(world: World, run_id: str) -> dict[str, Any]:
    await world.env.RUN.getByName(run_id).host.alarm()
    status, found = await world.request("GET", f"/api/runs/{run_id}")
    assert status == 200
    return {n["id"]: n for n in found["nodes"]}["sub"]


async def test_a_child_input_of_the_wrong_type_fails_the_parents_node_naming_the_field(world: World) -> None:
    status, answer = await world.request("POST", "/api/runs", {"flow": "typedchild", "input": {"n": "three"}})
    assert (status, answer["field"]) == (400, "input.n")  # as REST refuses the same input
    assert (
        await world.request("POST", "/api/runs", {"flow": "typedparent", "input": {"n": "three"}, "id": "p"})
    )[0] == 201
    sub = await _node(world, "typedparent:p")
    assert (sub["state"], sub["error"]) == (
        "FAILED",
        "failed to start child run: input.n must be an integer, got a string",
    )
    children = [r for r in world.env.RUN.objects if r.startswith("typedchild:")]
    assert all(world.env.RUN.getByName(r).host.engine.run() is None for r in children)  # none was stored


async def test_a_child_input_of_the_right_type_starts_the_child(world: World) -> None:
    assert (await world.request("POST", "/api/runs", {"flow": "typedparent", "input": {"n": 3}, "id": "ok"}))[
        0
    ] == 201
    sub = await _node(world, "typedparent:ok")
    assert (sub["state"], sub["error"]) == ("RUNNING", None)


@pytest.mark.parametrize("size", [150_000, 2_100_000])
async def test_a_child_input_over_the_bound_fails_the_parents_node_before_it_is_stored(
    world: World, size: int
) -> None:
    assert (
        await world.request("POST", "/api/runs", {"flow": "sizedparent", "input": {"size": size}, "id": "s"})
    )[0] == 201
    sub = await _node(world, "sizedparent:s")
    got = size + len('{"n":1,"blob":""}')
    assert (sub["state"], sub["error"]) == (
        "FAILED",
        f"input failed: input must be at most {MAX_PAYLOAD_BYTES} bytes as JSON, got {got}",
    )
    status, found = await world.request("GET", "/api/runs/sizedparent:s")
    assert (status, found["run"]["state"]) == (200, "FAILED")  # the run ends; its tick is not retried forever
