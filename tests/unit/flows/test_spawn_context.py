"""ctx.spawn: what a performer may ask for, and what the entrypoint sends with a success (only then)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.unit.flows.example_flows import Greet
from tsumugi_performer import JobContext, Performer
from tsumugi_performer.entrypoint import PerformerRunner
from tsumugi_performer.testing import create_test_context, run_performer


def test_spawn_records_children_with_a_binding_name_or_class_and_job_options() -> None:
    ctx = create_test_context()
    ctx.spawn("a", "Echo", {"x": 1}, max_attempts=2, concurrency_key="k")
    ctx.spawn("b", Greet, "hi")
    assert ctx.spawns == [
        {
            "id": "a",
            "binding": "Echo",
            "payload": {"x": 1},
            "options": {"max_attempts": 2, "concurrency_key": "k"},
        },
        {"id": "b", "binding": "Greet", "payload": "hi", "options": {}},
    ]


@pytest.mark.parametrize(
    ("args", "options", "message"),
    [
        (("bad id", "Echo"), {}, "spawn id must be 1 to 128 of A-Z a-z 0-9 _ -, got .bad id."),
        (("x" * 129, "Echo"), {}, "spawn id must be at most 128 characters, got 129"),
        (("a", "not a binding"), {}, "spawn binding must be a binding name"),
        (("a", "Echo"), {"unique_key": "u"}, "unique_key is not allowed on a spawned child"),
        (("a", "Echo"), {"partition_key": "p"}, "partition_key is not a spawn option"),
    ],
)
def test_spawn_refuses_bad_ids_bindings_and_options(
    args: tuple[Any, ...], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        create_test_context().spawn(*args, **options)


class Spawning(Performer[bool, str]):
    async def perform(self, payload: bool, ctx: JobContext) -> str:
        ctx.spawn("child", "Echo", 1)
        if payload:
            raise RuntimeError("failed after spawning")
        return "done"


def _dispatch(payload: Any) -> str:
    return json.dumps(
        {
            "jobId": "Spawning#0:j1",
            "binding": "Spawning",
            "attempt": 1,
            "maxAttempts": 3,
            "payload": payload,
            "deadlineAt": 10**12,
            "timeoutMs": 60_000,
        }
    )


async def test_the_outcome_of_a_success_carries_its_spawns_and_a_failure_none() -> None:
    runner = PerformerRunner(Spawning, None)
    ok = await runner.run(_dispatch(False), None, None)
    failed = await runner.run(_dispatch(True), None, None)
    ok, failed = (json.loads(o) if isinstance(o, str) else o for o in (ok, failed))
    assert ok["spawns"] == [{"id": "child", "binding": "Echo", "payload": 1, "options": {}}]
    assert ok["ok"] is True
    assert failed["ok"] is False
    assert "spawns" not in failed
    assert (await run_performer(Spawning(), False)).ok
