"""Run notices (beyond the original): a job on the flow's ``on_failure`` / ``on_settled`` binding when a run
ends, as crash-safe as the job notices.

The bindings are frozen into the run at start. Once the run is terminal the tick enqueues the notice jobs
with ids derived from the run id, its nonce, the notice kind and the run's resume count, then marks the run ``noticed``:
a crash in between resends the same ids, which the shard absorbs; a resumed run that ends again sends anew.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

import msgspec

from tsumugi_core.flow_advance import Progress
from tsumugi_core.id_digest import id_digest
from tsumugi_core.ids import format_job_id
from tsumugi_core.sharding import resolve_shard

__all__ = ["MAX_FAILED_NODES", "RunNotice", "notice_bindings", "notice_items"]

MAX_FAILED_NODES: Final = 20
"""Failed nodes a notice lists (with their errors)."""


class RunNotice(msgspec.Struct, frozen=True, kw_only=True):
    """The payload of a run notice job."""

    kind: str
    """``failure`` or ``settled``."""
    run_id: str
    flow: str
    state: str
    node_total: int
    node_done: int
    node_failed: int
    failed_nodes: list[dict[str, Any]]
    """Up to `MAX_FAILED_NODES` ``{"id", "error"}`` (its first line) of FAILED / STALLED nodes, in order."""
    settled_at: int


def notice_bindings(run: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(kind, binding)`` of the notices due for terminal ``run``, failure first (none when it configured none)."""
    bindings: dict[str, Any] = msgspec.json.decode(str(run["notices"] or "{}"))
    wanted = [("settled", bindings.get("on_settled"))]
    if run["state"] == "FAILED":
        wanted.insert(0, ("failure", bindings.get("on_failure")))
    return [(kind, str(binding)) for kind, binding in wanted if binding]


def notice_items(
    run: Mapping[str, Any],
    counts: Progress,
    failed: Iterable[Mapping[str, Any]],
    shards_of: Callable[[str], int],
) -> list[dict[str, Any]]:
    """The enqueue items of the notices due for terminal ``run``; ``counts`` are its progress counters,
    ``failed`` its first FAILED / STALLED nodes (``id``, ``error``) in order."""
    listed = [
        {"id": n["id"], "error": None if n["error"] is None else str(n["error"]).split("\n", 1)[0]}
        for n in list(failed)[:MAX_FAILED_NODES]
    ]
    items: list[dict[str, Any]] = []
    for kind, binding in notice_bindings(run):
        notice = RunNotice(
            kind=kind,
            run_id=str(run["id"]),
            flow=str(run["flow"]),
            state=str(run["state"]),
            node_total=counts.node_total,
            node_done=counts.node_done,
            node_failed=counts.node_failed,
            failed_nodes=listed,
            settled_at=int(run["updated_at"]),
        )
        # The run's nonce never leaves its object: no caller can enqueue the notice's id first (ADR-0177).
        digest = id_digest((str(run["id"]), str(run.get("nonce") or ""), kind, str(run["resumes"])), 12)
        shards = shards_of(binding)
        shard = resolve_shard(binding, shards, str(run["id"])) if shards > 1 else 0
        items.append(
            {
                "binding": binding,
                "payload": msgspec.to_builtins(notice),
                "partitionKey": run["id"],
                "id": format_job_id(binding, shard, f"run-{kind}-{digest}"),
            }
        )
    return items
