"""The local runtime's JS-side objects against the workerd record, case by case (ADR-0108).

`runtime_record.make_runtime_record` runs the recorder's operations on the runtime's raw JS objects (once per
module) and describes the results as ``recorder/describe.js`` does; each case of ``workerd-shapes.json`` must
come out equal. What the runtime does not imitate is listed in `NOT_EMULATED` by path, with the reason; a
second test keeps the list honest: each listed path must still differ (so a fixed difference is unlisted).
Prototype members are compared as sets (their order is workerd's declaration order, which no caller sees).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from runtime_record import make_runtime_record
from shape_record import differences, load_committed

RECORD = load_committed()

# Sections whose entries are compared one by one; in the grouped ones, one level further down.
SECTIONS = (
    "durable_object_sql",
    "durable_object_context",
    "alarms",
    "d1",
    "queue_producer",
    "service_binding_rpc",
    "durable_object_stub_rpc",
    "analytics_engine",
    "handlers",
    "alarm_handler",
)
GROUPED = {
    "durable_object_sql": ("cursors", "counters", "transactionSync"),
    "service_binding_rpc": ("calls", "echo", "argument_not_cloneable"),
    "analytics_engine": ("cases",),
}

NOT_EMULATED: dict[str, str] = {}
"""Path prefix (as `differences` prints it) -> why the runtime does not do what workerd does there."""

BY_DESIGN: dict[str, str] = {
    "$.handlers.scheduled.object-handlers": "Python Workers export a Default class: no default-export object",
    "$.handlers.scheduled.class-handlers.result": "the runtime runs the handler itself; no Fetcher.scheduled() result",
    "$.handlers.queue.class-handlers.first.this_env_keys": "the fixtures bind other names than the recorder",
    "$.handlers.queue.class-handlers.second.this_env_keys": "the fixtures bind other names than the recorder",
    "$.handlers.scheduled.class-handlers.handler.this_env_keys": "the fixtures bind other names than the recorder",
}
"""Paths that differ because the two sides are set up differently, not because the runtime imitates badly."""


def _cases() -> Iterator[str]:
    for section in SECTIONS:
        groups = GROUPED.get(section, ())
        for key, value in RECORD[section].items():
            if key in groups:
                yield from (f"{section}.{key}.{inner}" for inner in value)
            else:
                yield f"{section}.{key}"


CASES = list(_cases())


def _dig(tree: Any, case: str) -> Any:
    for part in case.split("."):
        if not isinstance(tree, dict) or part not in tree:
            return {"missing from the runtime's record": True}
        tree = tree[part]
    return tree


def _normalised(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: sorted(map(tuple, v)) if k == "prototype" and isinstance(v, list) else _normalised(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_normalised(v) for v in value]
    return value


def _found(case: str, runtime_record: dict[str, Any]) -> list[str]:
    want, got = _normalised(_dig(RECORD, case)), _normalised(_dig(runtime_record, case))
    return list(differences(want, got, f"$.{case}"))


def _excused(line: str) -> bool:
    return any(line.startswith(prefix) for prefix in (*NOT_EMULATED, *BY_DESIGN))


@pytest.fixture(scope="module")
def runtime_record(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return asyncio.run(make_runtime_record(tmp_path_factory.mktemp("shapes")))


@pytest.mark.parametrize("case", CASES)
def test_the_runtime_returns_what_workerd_returns(case: str, runtime_record: dict[str, Any]) -> None:
    found = [line for line in _found(case, runtime_record) if not _excused(line)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("prefix", sorted(NOT_EMULATED))
def test_each_listed_difference_is_still_there(prefix: str, runtime_record: dict[str, Any]) -> None:
    case = next(c for c in CASES if prefix.startswith(f"$.{c}.") or prefix == f"$.{c}")
    assert any(line.startswith(prefix) for line in _found(case, runtime_record)), (
        f"{prefix} now matches workerd: remove it from NOT_EMULATED"
    )
