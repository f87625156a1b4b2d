"""The Run object's typed rows and the commands its engine takes (ADR-0117).

`RunRow` and `NodeRow` mirror the tables of run/schema.py column for column (a test checks it); the store
hands them out and the engine reads nothing else. The commands and answers are what crosses between the
engine and its host: a `StartRun` and its `ParentLink`, the `JobEvent`s job shards send, and what one tick
asks the host to do (`JobStart`, `ChildStart`, `JobCancel`, `ChildCancel` in a `TickPlan`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import msgspec

__all__ = [
    "ChildCancel",
    "ChildStart",
    "ControlAnswer",
    "JobCancel",
    "JobEvent",
    "JobStart",
    "NodeRow",
    "ParentLink",
    "RunRow",
    "StartRun",
    "TickPlan",
    "job_events",
]


class RunRow(msgspec.Struct, frozen=True, kw_only=True):
    """The run row: one per object."""

    id: str
    flow: str
    state: str
    input: str
    shape: str
    cancelling: int
    parent_run_id: str | None
    parent_node_id: str | None
    depth: int
    parent_notified: int
    deadline_ms: int | None
    deadline_at: int | None
    expired: int
    created_at: int
    updated_at: int
    notices: str | None
    noticed: int
    resumes: int
    nonce: str | None


class NodeRow(msgspec.Struct, frozen=True, kw_only=True):
    """One node row (columns a read did not select keep their defaults)."""

    id: str
    binding: str = ""
    state: str = "PENDING"
    container: int = 0
    parent: str | None = None
    origin: str = "static"
    after: str = "[]"
    payload: str | None = None
    options: str | None = None
    job_id: str | None = None
    subflow: str | None = None
    child_run_id: str | None = None
    result: str | None = None
    error: str | None = None
    seq: int = 0
    gen: int = 0
    sent: int = 0
    created_at: int = 0
    updated_at: int = 0
    scheduled_at: int | None = None
    finished_at: int | None = None
    hold_until: int | None = None
    steps_from: str | None = None


class ParentLink(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The parent run and node of a child run (``{"runId", "nodeId"}`` on the wire)."""

    run_id: str
    node_id: str


class StartRun(msgspec.Struct, frozen=True, kw_only=True):
    """Store a run: its flow, input (JSON text), deadline (None: the flow's), parent and nesting depth."""

    run_id: str
    flow: str
    input_json: str
    deadline_ms: int | None = None
    parent: ParentLink | None = None
    depth: int = 0


class JobEvent(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A node's job reached a terminal state (from its shard's outbox, ADR-0083).

    ``hold_until``: a STALLED at-most-once job's hold (its last attempt may run until then, ADR-0051).
    """

    node_id: str
    job_id: str | None
    state: str
    result: str | None = None
    error: str | None = None
    spawns: list[Any] | None = None
    hold_until: int | None = None


def job_events(raw: object) -> list[JobEvent]:
    """Job events as the shards send them: one JSON text of an array of objects with camelCase keys (ADR-0133),
    or that array itself (as shards did before); a malformed one is dropped (it names no node of any run: the
    Run object would ignore it anyway)."""
    events: list[JobEvent] = []
    if isinstance(raw, str):
        try:
            raw = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            return events
    if not isinstance(raw, list | tuple):
        return events
    for item in raw:  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(item, Mapping):
            continue
        fields: Mapping[str, Any] = item  # pyright: ignore[reportUnknownVariableType]
        try:
            events.append(msgspec.convert({k: v for k, v in fields.items() if v is not None}, JobEvent))
        except msgspec.ValidationError:
            continue
    return events


class ControlAnswer(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What cancel and retry answer: ``ok``, or the reason they were refused."""

    ok: bool
    reason: Literal["gone", "invalid-state"] | None = None
    error: str | None = None
    """Why, when the generic words of ``reason`` would not say it (a child run resumed on its own)."""


class JobStart(msgspec.Struct, frozen=True, kw_only=True):
    """A node's job to enqueue: the enqueue item as the scheduler's RPC takes it (camelCase keys)."""

    node_id: str
    item: dict[str, Any]
    steps_from: str | None = None
    """The job whose stored steps the new job takes before it is enqueued (a resumed node, ADR-0176)."""


class ChildStart(msgspec.Struct, frozen=True, kw_only=True):
    """A subflow node's child run to start."""

    node_id: str
    run: StartRun


class JobCancel(msgspec.Struct, frozen=True, kw_only=True):
    """A scheduled node job to cancel."""

    node_id: str
    job_id: str


class ChildCancel(msgspec.Struct, frozen=True, kw_only=True):
    """A subflow node's running child run to cancel."""

    node_id: str
    child_run_id: str


class TickPlan(msgspec.Struct, frozen=True, kw_only=True):
    """What one tick decided and the host must do outside the transaction, then report back."""

    jobs: list[JobStart]
    children: list[ChildStart]
    cancel_jobs: list[JobCancel]
    cancel_children: list[ChildCancel]
    deferred: bool
    """More decisions wait for the next tick (armed at once)."""
